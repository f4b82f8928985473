"""The digest as Markdown, and as an HTML page made from that Markdown (the preview formats)."""

from __future__ import annotations

import html
import re

from markdown_it import MarkdownIt

from watcher.digest.document import Line, Span, document, plain, split_space
from watcher.digest.model import Digest

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>])")


def _md_escape(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", text)


def _md_span(span: Span) -> str:
    if span.style == "plain" or not span.text.strip():
        return _md_escape(span.text)
    lead, core, trail = split_space(span.text)
    if span.style == "bold":
        return f"{lead}**{_md_escape(core)}**{trail}"
    if span.style == "italic":
        return f"{lead}*{_md_escape(core)}*{trail}"
    if span.style == "code":
        fence = "``" if "`" in core else "`"
        pad = " " if fence == "``" else ""
        return f"{lead}{fence}{pad}{core}{pad}{fence}{trail}"
    return f"{lead}[{_md_escape(core)}]({span.url}){trail}"


def md_line(line: Line) -> str:
    return "".join(_md_span(span) for span in line)


def render_markdown(digest: Digest, picture: str | None = None) -> str:
    doc = document(digest)
    out = [f"# {_md_escape(doc.title)}", "", md_line(doc.summary), ""]
    for note in doc.notes:
        out += [f"> {md_line(note)}", ""]
    if picture:
        out += [f"![Timeline of deprecated features]({picture})", ""]
    for part in doc.parts:
        out += [f"## {_md_escape(part.title)}", ""]
        for line in part.intro:
            text = md_line(line)
            # "*" bullets: a list of its own, apart from the "-" list of items below.
            out.append(("* " + text[len("• ") :]) if plain(line).startswith("• ") else text)
            out.append("")
        for item in part.items:
            out.append(f"- {md_line(item.title)}")
            out += [f"  - {md_line(line)}" for line in item.lines]
        if part.items:
            out.append("")
    return "\n".join(_tidy(out)).rstrip() + "\n"


def _tidy(lines: list[str]) -> list[str]:
    """Consecutive bullet paragraphs of an intro form one list (no blank line between them)."""
    tidy: list[str] = []
    for n, line in enumerate(lines):
        if line == "" and tidy and tidy[-1].startswith("* ") and n + 1 < len(lines) and lines[n + 1].startswith("* "):
            continue
        tidy.append(line)
    return tidy


_HTML_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1d1c1d; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #ddd; }
blockquote { border-left: 4px solid #e8a33d; margin: 0; padding: .2rem 1rem; background: #fff8ec; }
code { background: #f3f3f3; padding: 0 .2rem; border-radius: 3px; }
img { max-width: 100%; border: 1px solid #eee; }
li > ul { margin-bottom: .6rem; }
"""


def render_html(digest: Digest, picture: str | None = None) -> str:
    body = MarkdownIt("commonmark").render(render_markdown(digest, picture))
    title = html.escape(document(digest).title)
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{title}</title>\n<style>{_HTML_STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n"
    )
