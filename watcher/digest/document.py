"""The digest as Slack Block Kit messages, Markdown and HTML — one document, three renderings.

``document(digest)`` lays the digest out once (parts, items, lines of styled spans); each renderer only
formats it, so the preview formats say exactly what Slack says. Slack's limits are met by splitting, never
by cutting: a section longer than 3,000 characters becomes several sections (at line breaks, else at
spaces), and the blocks are packed into messages of at most 50; the first message is the thread's parent
and the others are posted as replies in its thread.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

from markdown_it import MarkdownIt

from watcher.digest.content import ChangeItem, Digest, Feature, ReleaseItem, ServerFindings, Verdict
from watcher.notify.render import MAX_BLOCKS, MAX_HEADER_CHARS, MAX_SECTION_CHARS

Style = Literal["plain", "bold", "italic", "code", "link"]

MESSAGE_TEXT_BUDGET = 12_000
"""Characters of block text per message: well inside what Slack accepts, so a message never fails as too long."""

VERDICT_WORDS = {
    "pass": "PASS",
    "fail": "FAIL",
    "error": "ERROR (not judged)",
    "pending": "PENDING",
    "not-run": "NOT RUN",
}
SLACK_ICONS = {
    "pass": ":white_check_mark:",
    "fail": ":x:",
    "error": ":warning:",
    "pending": ":hourglass_flowing_sand:",
    "not-run": ":heavy_minus_sign:",
}


# --- the document ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Span:
    text: str
    style: Style = "plain"
    url: str | None = None


Line = list[Span]


@dataclass(frozen=True)
class Item:
    title: Line
    lines: list[Line] = field(default_factory=list)


@dataclass(frozen=True)
class Part:
    title: str
    intro: list[Line] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)


@dataclass(frozen=True)
class Document:
    title: str
    summary: Line
    notes: list[Line]
    parts: list[Part]


def t(text: str) -> Span:
    return Span(text)


def b(text: str) -> Span:
    return Span(text, "bold")


def i(text: str) -> Span:
    return Span(text, "italic")


def c(text: str) -> Span:
    return Span(text, "code")


def link(text: str, url: str) -> Span:
    return Span(text, "link", url)


def plain(line: Iterable[Span]) -> str:
    """The text of a line without any markup (what every rendering must contain)."""
    return "".join(span.text for span in line)


def _days(days: int | None) -> str:
    if days is None:
        return "date unknown"
    if days < 0:
        return f"{-days} days ago"
    return "today" if days == 0 else f"{days} day{'s' if days != 1 else ''} left"


def _removal(feature: Feature) -> Line:
    if feature.state != "deprecated":
        return [t("Removed in "), b(feature.earliest_removal or "(revision not stated)")]
    if not feature.resolved or feature.earliest_removal is None:
        return [t("Earliest removal: "), b("UNRESOLVED"), t(" — not guessed: " + feature.basis)]
    kind = "projected revision" if feature.projected else "released revision"
    return [t("Earliest removal: "), b(feature.earliest_removal), t(f" ({kind}), "), b(_days(feature.days_left))]


def _feature_item(feature: Feature) -> Item:
    title: Line = [t("Removed: "), b(feature.feature)] if feature.state != "deprecated" else [b(feature.feature)]
    if feature.deprecated_in:
        title += [t(" — deprecated in "), c(feature.deprecated_in)]
    if feature.sep:
        title.append(t(f" ({feature.sep})"))
    if feature.affected_servers:
        title += [t(" — "), b("affects " + ", ".join(feature.affected_servers))]
    lines: list[Line] = [_removal(feature)]
    if feature.earliest_removal_text:
        lines.append([t("Registry says: "), i(f"“{feature.earliest_removal_text}”")])
    elif feature.state == "deprecated":
        lines.append([t("Registry says: "), i("(empty: the policy's 12 months apply)")])
    if feature.migration:
        lines.append([t("Migration: " + feature.migration)])
    if feature.basis and feature.resolved:
        lines.append([t("Basis: " + feature.basis)])
    lines += [[b("Warning: "), t(flag)] for flag in feature.flags]
    return Item(title, lines)


def _change_line(change: ChangeItem) -> Line:
    after, before = change.after or {}, change.before or {}
    subject = change.subject
    when = f" (recorded {change.recorded[:10]})"
    if change.kind == "new-deprecation":
        removal = after.get("earliest_removal") or "unresolved"
        return [b("New deprecation: "), b(subject), t(f" — earliest removal {removal}{when}")]
    if change.kind == "moved-to-removed":
        return [b("Removed: "), b(subject), t(f" moved to the registry's Removed section{when}")]
    if change.kind == "earliest-removal-changed":
        old = before.get("earliest_removal") or "unresolved"
        new = after.get("earliest_removal") or "unresolved"
        text_change = ""
        if before.get("earliest_removal_text") != after.get("earliest_removal_text"):
            old_text, new_text = before.get("earliest_removal_text", ""), after.get("earliest_removal_text", "")
            text_change = f"; registry text “{old_text}” → “{new_text}”"
        return [b("Date moved: "), b(subject), t(f" earliest removal {old} → {new}{text_change}{when}")]
    if change.kind == "deprecation-gone":
        return [
            b("No longer listed: "),
            b(subject),
            t(f" left the Deprecated section without a Removed entry (restored?){when}"),
        ]
    if change.kind == "new-rc":
        return [b("Spec release candidate: "), b(subject), t(f" published{when}")]
    if change.kind == "new-revision":
        return [b("Spec revision released: "), b(subject), t(f" is now Current{when}")]
    return [b(change.kind + ": "), t(subject + when)]


def _server_item(findings: ServerFindings, total_deprecated: int) -> Item:
    title: Line = [b(findings.server), t(f" ({findings.sdk} SDK)")]
    lines: list[Line] = []
    for exposure in findings.exposures:
        when = (
            [t(" — may go "), b(exposure.earliest_removal), t(f" ({_days(exposure.days_left)})")]
            if exposure.earliest_removal
            else [t(" — earliest removal unresolved")]
        )
        evidence: Line = []
        for n, item in enumerate(exposure.evidence):
            evidence += [t("; " if n else ". Evidence: "), *_inline_code(item.detail), t(f" [{item.source}]")]
        lines.append([b(exposure.feature), *when, *evidence])
    if not findings.exposures:
        lines.append([b("Nothing found"), t(f": none of the {total_deprecated} deprecated features seen in use")])
    elif len(findings.exposures) < total_deprecated:
        lines.append(
            [t(f"Nothing found for the other {total_deprecated - len(findings.exposures)} deprecated features")]
        )
    if findings.checked:
        lines.append([i("Checked: " + "; ".join(findings.checked))])
    if findings.gaps:
        lines.append([i("Not checked: " + "; ".join(findings.gaps))])
    return Item(title, lines)


def _inline_code(text: str) -> Line:
    """`a` spans inside evidence text become code spans."""
    spans: Line = []
    for n, piece in enumerate(text.split("`")):
        if piece:
            spans.append(c(piece) if n % 2 else t(piece))
    return spans


def _thread(ref: Any, label: str) -> Line:
    if ref is None:
        return []
    if ref.url:
        return [t(" — "), link(label, ref.url)]
    return [t(" — thread "), c(ref.key), t(f" ({ref.status})")]


def _verdict_line(verdict: Verdict) -> Line:
    line: Line = [t(verdict.server + ": "), b(VERDICT_WORDS.get(verdict.verdict, verdict.verdict.upper()))]
    if verdict.detail:
        line.append(t(" — " + verdict.detail))
    if verdict.run_id is not None and "#" not in verdict.detail:
        line.append(t(f" (run #{verdict.run_id})"))
    return line + _thread(verdict.thread, "result")


def _release_item(release: ReleaseItem) -> Item:
    kind = "pre-release" if release.prerelease else "release"
    title: Line = [b(f"{release.package} {release.version}"), t(f" ({release.sdk} SDK, {kind}")]
    if release.first_seen:
        title.append(t(f", first seen {release.first_seen[:10]}"))
    title.append(t(")"))
    if release.page:
        title += [t(" — "), link("registry page", release.page)]
    title += _thread(release.thread, "alert thread")
    lines = [_verdict_line(v) for v in release.verdicts]
    if not release.verdicts:
        lines.append([t("No server of this team is built on this SDK.")])
    return Item(title, lines)


def document(digest: Digest) -> Document:
    deprecated, removed = digest.deprecated, digest.removed
    affected = [f for f in deprecated if f.affected_servers]
    summary: Line = [
        t(f"{digest.today} · {len(deprecated)} deprecated feature{'s' if len(deprecated) != 1 else ''}"),
        t(f", {len(affected)} in use by this team's servers"),
    ]
    if digest.outlook.next_removal:
        summary.append(
            t(f" · next earliest removal {digest.outlook.next_removal} ({_days(digest.outlook.next_removal_days)})")
        )
    summary.append(t(f" · period {digest.since[:10]} → {digest.today}"))
    notes = [[b("Heads-up: "), t(problem)] for problem in digest.problems]

    since = digest.since[:10]
    out_intro: list[Line] = []
    if digest.changes:
        out_intro.append([b(f"Changes since the last digest ({since}):")])
        out_intro += [[t("• "), *_change_line(change)] for change in digest.changes]
    else:
        out_intro.append([b("Changes since the last digest: "), t(f"none recorded since {since}.")])
    items = [_feature_item(f) for f in deprecated]
    items += [_feature_item(f) for f in removed]
    if deprecated or removed:
        out_intro.append(
            [
                b("The registry: "),
                t(f"{len(deprecated)} deprecated ({len(affected)} used by this team), "),
                t(f"{len(removed)} removed; soonest earliest removal first."),
            ]
        )
    else:
        out_intro.append([b("The registry: "), t("no deprecated or removed features listed.")])
    part_out = Part("1 · What is on its way out", out_intro, items)

    affected_intro: list[Line] = []
    if not digest.servers:
        affected_intro.append([t("No servers are configured for this team, so nothing could be checked.")])
    part_affected = Part(
        f"2 · Where {digest.team} is affected",
        affected_intro,
        [_server_item(s, len(deprecated)) for s in digest.servers],
    )

    sdk_names = ", ".join(digest.team_sdks) or "none configured"
    release_intro: list[Line] = [[t(f"Releases of the team's SDKs ({sdk_names}) first seen {since} → {digest.today}.")]]
    if not digest.releases:
        release_intro.append([t("No new pre-releases or releases.")])
    part_releases = Part("3 · SDKs this week", release_intro, [_release_item(r) for r in digest.releases])

    part_coming = Part("4 · What is coming", _outlook_lines(digest), [])
    return Document(
        title=f"Deprecation digest · {digest.team} · {digest.week}",
        summary=summary,
        notes=notes,
        parts=[part_out, part_affected, part_releases, part_coming],
    )


def _outlook_lines(digest: Digest) -> list[Line]:
    look = digest.outlook
    lines: list[Line] = []
    if look.next_revision:
        kind = "released" if look.next_revision_actual else "projected"
        name = f"revision {look.next_revision_name}, " if look.next_revision_name else ""
        lines.append(
            [b("Next spec revision: "), b(look.next_revision), t(f" ({name}{kind}: {look.next_revision_note})")]
        )
    else:
        lines.append([b("Next spec revision: "), t(look.next_revision_note)])
    if look.beta_window_start and look.beta_window_end:
        opens_in = (date.fromisoformat(look.beta_window_start) - date.fromisoformat(digest.today)).days
        state = "open now" if look.beta_window_open else f"opens in {opens_in} days"
        if look.beta_window_start > digest.today or look.beta_window_open:
            lines.append(
                [b("Expected SDK-beta window: "), t(f"{look.beta_window_start} → {look.beta_window_end} ({state})")]
            )
    if look.next_removal:
        names = ", ".join(look.next_removal_features)
        lines.append(
            [b("Next earliest removal: "), b(look.next_removal), t(f" ({_days(look.next_removal_days)}): {names}")]
        )
    else:
        lines.append([b("Next earliest removal: "), t("none scheduled (no resolved date ahead)")])
    return lines


# --- Slack ----------------------------------------------------------------------------------------------


def slack_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _slack_span(span: Span) -> str:
    text = slack_escape(span.text)
    if span.style == "plain" or not text.strip():
        return text
    lead, core, trail = _split_space(text)
    if span.style == "bold":
        return f"{lead}*{core}*{trail}"
    if span.style == "italic":
        return f"{lead}_{core}_{trail}"
    if span.style == "code":
        return f"{lead}`{core.replace('`', 'ˋ')}`{trail}"
    label = core.replace("|", "¦")
    return f"{lead}<{span.url}|{label}>{trail}"


def _split_space(text: str) -> tuple[str, str, str]:
    core = text.strip()
    start = text.index(core)
    return text[:start], core, text[start + len(core) :]


def slack_line(line: Line) -> str:
    return "".join(_slack_span(span) for span in line)


def split_text(text: str, limit: int = MAX_SECTION_CHARS) -> list[str]:
    """Pieces of at most ``limit`` characters: at line breaks where possible, else at spaces, else hard."""
    pieces: list[str] = []
    current = ""
    for line in text.split("\n"):
        candidate = f"{current}\n{line}" if current else line
        if len(candidate) <= limit:
            current = candidate
            continue
        if current:
            pieces.append(current)
        current = ""
        while len(line) > limit:
            cut = line.rfind(" ", 0, limit)
            cut = cut if cut > limit // 2 else limit
            pieces.append(line[:cut])
            line = line[cut:].lstrip(" ") if cut < len(line) and line[cut] == " " else line[cut:]
        current = line
    if current or not pieces:
        pieces.append(current)
    return pieces


def _sections(text: str) -> list[dict[str, Any]]:
    return [{"type": "section", "text": {"type": "mrkdwn", "text": piece}} for piece in split_text(text) if piece]


def _header(text: str) -> dict[str, Any]:
    if len(text) <= MAX_HEADER_CHARS:
        return {"type": "header", "text": {"type": "plain_text", "text": text, "emoji": True}}
    return _sections(f"*{slack_escape(text)}*")[0]


def _context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}


@dataclass
class SlackMessage:
    text: str
    blocks: list[dict[str, Any]]


def block_text(block: dict[str, Any]) -> str:
    """All the text a block shows (for budgets and for tests that check nothing was lost)."""
    if "text" in block and isinstance(block["text"], dict):
        return str(block["text"].get("text", ""))
    if block.get("type") == "context":
        return "\n".join(str(e.get("text", "")) for e in block.get("elements", []))
    if "fields" in block:
        return "\n".join(str(f.get("text", "")) for f in block["fields"])
    return ""


def _verdict_icons(text: str) -> str:
    for verdict, word in VERDICT_WORDS.items():
        text = text.replace(f": *{word}*", f": {SLACK_ICONS[verdict]} *{word}*")
    return text


def slack_messages(digest: Digest, has_picture: bool = True) -> list[SlackMessage]:
    """The digest as Slack messages: the first is the thread's parent, the rest are its replies, in order."""
    doc = document(digest)
    # (part index, block); part index −1 for the document's head.
    flow: list[tuple[int, dict[str, Any]]] = [(-1, _header(doc.title))]
    summary = slack_line(doc.summary)
    if has_picture:
        summary += " · timeline picture in the thread"
    flow.append((-1, _context(summary)))
    if doc.notes:
        flow += [(-1, block) for block in _sections("\n".join(":warning: " + slack_line(n) for n in doc.notes))]
    for index, part in enumerate(doc.parts):
        flow.append((index, {"type": "divider"}))
        flow.append((index, _header(part.title)))
        if part.intro:
            flow += [(index, block) for block in _sections("\n".join(slack_line(line) for line in part.intro))]
        for item in part.items:
            text = "\n".join([slack_line(item.title), *("• " + slack_line(line) for line in item.lines)])
            flow += [(index, block) for block in _sections(_verdict_icons(text))]
    pages = _pack(flow, doc)
    total = len(pages)
    messages = []
    for number, blocks in enumerate(pages, 1):
        if number == 1:
            fallback = f"{doc.title}: {plain(doc.summary)}"
            if total > 1:
                fallback += f" (continued in {total - 1} repl{'y' if total == 2 else 'ies'} in the thread)"
        else:
            fallback = f"{doc.title} (part {number} of {total})"
            blocks.insert(0, _context(slack_escape(fallback)))
        messages.append(SlackMessage(fallback, blocks))
    return messages


def _pack(flow: list[tuple[int, dict[str, Any]]], doc: Document) -> list[list[dict[str, Any]]]:
    """Fill messages in order. A message never ends on a divider or a heading: those move to the next one."""
    room = MAX_BLOCKS - 2  # each continuation adds a "part n of m" line and may repeat its part's title
    pages: list[list[dict[str, Any]]] = [[]]
    used = 0
    for position, (part, block) in enumerate(flow):
        size = len(block_text(block))
        page = pages[-1]
        # A heading needs its first content in the same message; a divider its heading and that content.
        lookahead = {"header": 1, "divider": 2}.get(block["type"], 0) if position + 1 < len(flow) else 0
        if len(page) + 1 + lookahead > room or (page and used + size > MESSAGE_TEXT_BUDGET):
            carried = []
            while page and page[-1]["type"] in ("header", "divider"):
                carried.insert(0, page.pop())
            pages.append([b for b in carried if b["type"] != "divider"])  # a new message is separation enough
            page = pages[-1]
            used = sum(len(block_text(b)) for b in page)
            if block["type"] == "divider":
                continue
            if not page and block["type"] != "header" and part >= 0:
                page.append(_header(f"{doc.parts[part].title} (continued)"))
        page.append(block)
        used += size
    return [page for page in pages if page]


def slack_payloads(messages: Sequence[SlackMessage]) -> list[dict[str, Any]]:
    return [{"text": m.text, "blocks": m.blocks} for m in messages]


# --- Markdown and HTML --------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>])")


def _md_escape(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", text)


def _md_span(span: Span) -> str:
    if span.style == "plain" or not span.text.strip():
        return _md_escape(span.text)
    lead, core, trail = _split_space(span.text)
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
