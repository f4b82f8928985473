"""The one Slack message layer: limits, escaping, clipping with its marker, splitting, builders."""

from __future__ import annotations

import pytest

from watcher.notify import blocks
from watcher.notify.blocks import (
    CLIP_MARKER,
    MAX_FIELD_CHARS,
    MAX_FIELDS,
    MAX_HEADER_CHARS,
    MAX_SECTION_CHARS,
    VERDICT_ICONS,
    Mrkdwn,
    block_text,
    clip,
    escape,
    split_text,
)


def test_slacks_limits_are_the_documented_ones():
    assert (blocks.MAX_BLOCKS, MAX_SECTION_CHARS, MAX_HEADER_CHARS) == (50, 3000, 150)
    assert (MAX_FIELD_CHARS, MAX_FIELDS) == (2000, 10)


def test_escape_turns_the_three_control_characters_into_entities_ampersand_first():
    assert escape("a < b && c > d") == "a &lt; b &amp;&amp; c &gt; d"
    assert escape("&lt;") == "&amp;lt;", "an entity in foreign text stays literal"
    assert escape("*bold* _it_ `code`") == "*bold* _it_ `code`", "markup is the caller's business"


def test_clip_keeps_short_text_and_ends_cut_text_with_the_one_marker():
    assert CLIP_MARKER == " … (cut to fit Slack)"
    assert clip("x" * 150, 150) == "x" * 150
    cut = clip("x" * 151, 150)
    assert len(cut) == 150 and cut == "x" * (150 - len(CLIP_MARKER)) + CLIP_MARKER
    assert len(clip("y" * 10_000, MAX_SECTION_CHARS)) == MAX_SECTION_CHARS


def test_split_text_breaks_at_lines_then_spaces_then_anywhere():
    lines = [f"line {n} " + "x" * 90 for n in range(100)]
    pieces = split_text("\n".join(lines), 3000)
    assert all(len(p) <= 3000 for p in pieces) and len(pieces) == 4
    assert "\n".join(pieces) == "\n".join(lines)
    words = " ".join(["word"] * 2000)  # 9,999 characters, one line
    pieces = split_text(words, 3000)
    assert all(len(p) <= 3000 for p in pieces) and " ".join(pieces) == words
    blob = "y" * 7000
    pieces = split_text(blob, 3000)
    assert [len(p) for p in pieces] == [3000, 3000, 1000] and "".join(pieces) == blob


def test_builders_clip_to_each_blocks_own_limit():
    long = "z" * 5000
    header = blocks.header(long)
    assert header["type"] == "header" and header["text"]["type"] == "plain_text" and header["text"]["emoji"] is True
    assert len(header["text"]["text"]) == MAX_HEADER_CHARS and header["text"]["text"].endswith(CLIP_MARKER)
    section = blocks.section(escape(long))
    assert section["text"] == {"type": "mrkdwn", "text": clip(long, MAX_SECTION_CHARS), "verbatim": True}
    context = blocks.context(Mrkdwn("Source: {}").format(blocks.link("https://example.org/x", "the spec")))
    ours = {"type": "mrkdwn", "text": "Source: <https://example.org/x|the spec>", "verbatim": True}
    assert context == {"type": "context", "elements": [ours]}
    assert blocks.divider() == {"type": "divider"}


def test_fields_are_labelled_clipped_and_at_most_ten():
    block = blocks.fields([(f"Label {n}", escape("v" * 3000)) for n in range(12)])
    assert len(block["fields"]) == MAX_FIELDS
    first = block["fields"][0]["text"]
    assert first.startswith("*Label 0*\nvvv") and len(first) == MAX_FIELD_CHARS and first.endswith(CLIP_MARKER)
    assert blocks.fields([("Before", escape("1.0"))])["fields"] == [
        {"type": "mrkdwn", "text": "*Before*\n1.0", "verbatim": True}
    ]


def test_block_text_reads_every_kind_of_block():
    assert block_text(blocks.header("Title")) == "Title"
    assert block_text(blocks.section(Mrkdwn("*a*"))) == "*a*"
    assert block_text(blocks.context(Mrkdwn("small"))) == "small"
    assert block_text(blocks.fields([("A", escape("1")), ("B", escape("2"))])) == "*A*\n1\n*B*\n2"
    assert block_text(blocks.divider()) == ""


def test_verdict_icons_cover_every_verdict_the_notices_show():
    assert VERDICT_ICONS["pass"] == ":white_check_mark:" and VERDICT_ICONS["fail"] == ":x:"
    assert all(isinstance(icon, Mrkdwn) for icon in VERDICT_ICONS.values())
    assert set(VERDICT_ICONS) == {"pass", "fail", "error", "pending", "not-run"}


def test_a_builder_refuses_plain_text_and_composition_escapes_what_is_not_ours():
    with pytest.raises(TypeError, match="must be Mrkdwn"):
        blocks.section("<https://evil.example|x>")  # type: ignore[arg-type]
    composed = Mrkdwn("*{}* at {}").format("<!here>", Mrkdwn("*ours*"))
    assert composed == "*&lt;!here&gt;* at *ours*" and isinstance(composed, Mrkdwn)
    assert Mrkdwn("a ") + "<b>" == "a &lt;b&gt;" and "<c> " + Mrkdwn("d") == "&lt;c&gt; d"
    assert Mrkdwn(", ").join(["<x>", Mrkdwn("<ours>")]) == "&lt;x&gt;, <ours>"
    cut = clip(escape("x" * 40), 30)
    assert isinstance(cut, Mrkdwn) and cut.endswith(CLIP_MARKER) and len(cut) == 30


def test_a_link_is_ours_only_to_a_plain_address():
    assert blocks.link("https://github.com/acme/x/actions/runs/1", "run | 1") == (
        "<https://github.com/acme/x/actions/runs/1|run ¦ 1>"
    )
    assert blocks.link("https://evil.example/x|<!channel>", "label") == "label"  # no link: the label as text
    assert blocks.link("javascript:alert(1)", "<b>") == "&lt;b&gt;"
