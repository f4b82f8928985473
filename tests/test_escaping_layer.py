"""The one escaping layer (`watcher.core.text`): its rules, a check of the code that no builder makes our
markup out of outside text, and outside text through the terminal (`status`) and the pages.

Slack itself is tested kind by kind in tests/notify/test_hostile_notices.py.
"""

from __future__ import annotations

import ast
import html.parser
import json
import re
from pathlib import Path

import jinja2
import markupsafe
import pytest
import yaml
from starlette.testclient import TestClient

from tests.helpers import ROOT
from watcher.cli import main
from watcher.config import load_config
from watcher.core.store import Store
from watcher.core.text import Mrkdwn, shown
from watcher.repos.sync import RepoState
from watcher.web.access import Access
from watcher.web.app import web_parts
from watcher.web.context import WebContext

HOSTILE = (
    '<https://evil.example/login|Action required> <!channel> <script>alert(1)</script> "quoted" '
    "\x1b]0;owned\x07\x1b[2J\x1b[31mred\r\u202eright-to-left\x08"
)
TERMINAL_CONTROLS = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


# --- the type's rules ---------------------------------------------------------------------------------------


def test_composition_escapes_every_part_that_is_not_ours():
    name = "<@U1> & co"
    composed = Mrkdwn("*{}* said: {}").format(name, Mrkdwn("_ours_"))
    assert composed == "*&lt;@U1&gt; &amp; co* said: _ours_" and type(composed) is Mrkdwn
    assert Mrkdwn("%s | %s") % ("<!here>", Mrkdwn("<ok>")) == "&lt;!here&gt; | <ok>"
    assert Mrkdwn("a") + "<b>" == "a&lt;b&gt;" and "<c>" + Mrkdwn("d") == "&lt;c&gt;d"
    assert Mrkdwn("\n").join(["<x>", Mrkdwn("<y>")]) == "&lt;x&gt;\n<y>"
    assert Mrkdwn("{:>5}|").format("ab") == "   ab|"
    assert Mrkdwn.escape("tab\tand\nline\x1b[0m") == "tab\tand\nline\\x1b[0m"


def test_our_text_of_one_medium_is_never_html():
    page = jinja2.Environment(autoescape=True).from_string("<p>{{ value }}</p>")
    assert page.render(value=Mrkdwn("<b>not html</b>")) == "<p>&lt;b&gt;not html&lt;/b&gt;</p>"
    assert markupsafe.escape(Mrkdwn("<i>")) == "&lt;i&gt;"
    assert Mrkdwn(markupsafe.Markup("<b>")) == "<b>"  # the constructor takes text, never an object's HTML


def test_the_terminal_shows_control_characters_instead_of_sending_them():
    assert shown("v1\x1b[2J\x07 \r \u202e \x9b x") == "v1\\x1b[2J\\x07 \\x0d \\u202e \\u009b x"
    assert shown("two\nlines") == "two\\x0alines"
    assert shown("two\nlines\ttab", keep="\n\t") == "two\nlines\ttab"
    assert shown("plain ünïcode, emoji 🙂") == "plain ünïcode, emoji 🙂"


# --- the code: our markup is made of our own literals only -------------------------------------------------

LAYER = {ROOT / "watcher" / "core" / "text.py", ROOT / "watcher" / "notify" / "blocks.py"}
"""Where text of ours is made from pieces of ours (a clipped or split piece, a checked address)."""
HTML_LAYER = {ROOT / "watcher" / "web" / "cells.py"}
"""Where the matrix's cells are built as HTML from escaped pieces."""
_LINK_IN_LITERAL = re.compile(r"<\s*(?:[{%!@#]|https?:)")


def markup_made_of_other_text(source: str, filename: str, html_too: bool = True) -> list[str]:
    """Calls of `Mrkdwn(...)` (and `Markup(...)`) whose argument is not one string literal of ours, and
    literals that write a link or a Slack command by hand (links are made by `blocks.link`)."""
    found = []
    wrappers = {"Mrkdwn", "Written"} | ({"Markup"} if html_too else set())
    for node in ast.walk(ast.parse(source, filename)):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
        if name not in wrappers:
            continue
        where = f"{filename}:{node.lineno}"
        if len(node.args) > 1 or node.keywords:
            found.append(f"{where}: {name}() with more than one text")
        elif node.args and not (isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.append(f"{where}: {name}() of text that is not a literal of ours")
        elif node.args and _LINK_IN_LITERAL.search(node.args[0].value):
            found.append(f"{where}: a link or Slack command written by hand (use blocks.link)")
    return found


def test_our_markup_is_made_of_our_own_literals_only():
    found = []
    checked = 0
    for path in sorted((ROOT / "watcher").rglob("*.py")):
        if path in LAYER:
            continue
        checked += 1
        source = path.read_text(encoding="utf-8")
        found += markup_made_of_other_text(source, str(path.relative_to(ROOT)), html_too=path not in HTML_LAYER)
    assert checked > 150
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    ("planted", "why"),
    [
        ("Mrkdwn(error)", "not a literal"),
        ('Mrkdwn(f"*{error}*")', "not a literal"),
        ('Mrkdwn("*failed:* " + error)', "not a literal"),
        ('Mrkdwn("<{}|the docs>").format(url)', "by hand"),
        ('Mrkdwn("ping <!here>")', "by hand"),
        ("markupsafe.Markup(error)", "not a literal"),
    ],
)
def test_a_planted_splice_is_found(planted: str, why: str):
    [problem] = markup_made_of_other_text(f"x = {planted}\n", "planted.py")
    assert why in problem and problem.startswith("planted.py:1:")
    assert markup_made_of_other_text('x = Mrkdwn("*{}* failed").format(error)\n', "fine.py") == []


# --- the terminal: `mcp-watcher status` ---------------------------------------------------------------------


def _hostile_state(tmp_path: Path) -> Path:
    state = tmp_path / "state"
    state.mkdir()
    config = tmp_path / "watcher.yaml"
    repo = {"git": "https://github.com/acme/books.git", "team": "books"}
    config.write_text(
        yaml.safe_dump(
            {
                "state": str(state / "watcher.db"),
                "teams": [{"name": "books", "slack_channel": "#books-mcp"}],
                "repos": [repo],
            }
        )
    )
    store = Store(state / "watcher.db")
    # What a team's file left: an error quoting it, and a ref of its choosing.
    RepoState(git=repo["git"], team="books", ref=HOSTILE, commit="0123456789abcdef", error=HOSTILE).save(store)
    store.close()
    return config


def test_status_shows_a_team_files_terminal_escapes_instead_of_sending_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    config = _hostile_state(tmp_path)
    assert main(["--config", str(config), "status"]) == 0
    out = capsys.readouterr().out
    assert "TEAM REPOSITORIES" in out and "\\x1b]0;owned\\x07" in out  # the mark: the hostile text is shown
    assert not TERMINAL_CONTROLS.findall(out), TERMINAL_CONTROLS.findall(out)
    assert main(["--config", str(config), "status", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["repos"][0]["error"] == HOSTILE  # JSON keeps the text as it is


# --- the pages -------------------------------------------------------------------------------------------------


class _Tags(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_the_pages_show_outside_text_as_text(tmp_path: Path):
    from tests.notify.test_hostile_notices import suite_report

    config = _hostile_state(tmp_path)
    loaded = load_config(config)
    store = Store(loaded.resolve(loaded.config.state))
    report = suite_report()
    report["reasons"].append({"verdict": "fail", "reason": HOSTILE})
    run_id = store.record_run("books-server", "python", "2.4.0b1", "cli", report)
    ctx = WebContext(loaded, store)
    from watcher.ops.health import Readiness, build_app

    client = TestClient(build_app(Readiness(store, 30, ctx.now(), lambda: True), *web_parts(ctx, Access(None, False))))
    for path in ("/", f"/runs/{run_id}", "/readiness"):
        page = client.get(path)
        assert page.status_code == 200, path
        parsed = _Tags()
        parsed.feed(page.text)
        text = "".join(parsed.text)
        if path != "/readiness":
            assert "evil.example/login" in text, path  # the mark: the hostile text is on the page, as text
        assert not [t for t, _ in parsed.tags if t == "script"], path
        hrefs = [a.get("href") or "" for t, a in parsed.tags if t == "a"]
        assert not [h for h in hrefs if "evil.example" in h], (path, hrefs)
        assert all(h.startswith(("/", "#", "https://github.com/", "https://modelcontextprotocol.io/")) for h in hrefs)
        handlers = [a for _, attrs in parsed.tags for a in attrs if a.startswith("on")]
        assert not handlers, (path, handlers)
    store.close()


# --- the terminal: every command, through the CLI's layer ----------------------------------------------------


def test_a_command_that_shows_nothing_itself_still_prints_through_the_layer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    from tests.contract.helpers import write_snapshot

    tool = {"name": "search", "description": "finds books", "inputSchema": {"type": "object"}}
    hostile = {**tool, "name": "lookup\x1b]0;owned\x07\x1b[2J\u202e"}  # a server's tool name
    before = write_snapshot(tmp_path / "before", tools=[tool])
    after = write_snapshot(tmp_path / "after", tools=[tool, hostile])
    # `diff` renders with no `shown` of its own
    assert main(["diff", str(before), str(after), "--format", "markdown"]) in (0, 1)
    out = capsys.readouterr().out
    assert "lookup\\x1b]0;owned\\x07\\x1b[2J\\u202e" in out  # the mark: the server's name was printed, shown
    assert not TERMINAL_CONTROLS.findall(out), TERMINAL_CONTROLS.findall(out)
    # JSON (written with ensure_ascii=False, so the bidi override is left raw): shown as JSON's own escape,
    # so the output still reads back as the name it is.
    assert main(["diff", str(before), str(after), "--format", "json"]) in (0, 1)
    out = capsys.readouterr().out
    assert not TERMINAL_CONTROLS.findall(out), TERMINAL_CONTROLS.findall(out)
    assert hostile["name"] in _strings(json.loads(out))


def _strings(value: object) -> set[str]:
    if isinstance(value, dict):
        return set().union(*(_strings(v) for v in value.values()), set())
    if isinstance(value, list):
        return set().union(*(_strings(v) for v in value), set())
    return {value} if isinstance(value, str) else set()


def terminal_bypasses(source: str, filename: str, allowed: bool = False) -> list[str]:
    """Ways past the CLI's terminal layer in a module: the streams' bytes (`sys.stdout.buffer`), the
    interpreter's original streams (`sys.__stdout__`), a write to their descriptors (`os.write(1, …)`), and
    `raw_stream` outside the modules that draw our own progress lines (`allowed`)."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        where = f"{filename}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Attribute) and node.attr in ("__stdout__", "__stderr__"):
            found.append(f"{where}: sys.{node.attr}")
        if isinstance(node, ast.Attribute) and node.attr == "buffer":
            inner = node.value
            if isinstance(inner, ast.Attribute) and inner.attr in ("stdout", "stderr"):
                found.append(f"{where}: {inner.attr}.buffer")
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "os.write" and node.args:
            target = ast.unparse(node.args[0])
            if target in ("1", "2") or "stdout" in target or "stderr" in target:
                found.append(f"{where}: os.write({target}, …)")
        if isinstance(node, ast.Name) and node.id == "raw_stream" and not allowed:
            found.append(f"{where}: raw_stream")
    return found


RAW_DRAWERS = {"watcher/core/text.py", "watcher/core/progress.py", "watcher/backtest/progress.py"}
"""The modules whose own control sequences (a line redrawn in place, a spinner) go past the layer."""


def test_nothing_writes_to_the_terminal_past_the_layer():
    found = []
    for path in sorted((ROOT / "watcher").rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        found += terminal_bypasses(path.read_text(encoding="utf-8"), name, allowed=name in RAW_DRAWERS)
    assert not found, found


@pytest.mark.parametrize(
    "planted",
    [
        "import sys\nsys.stdout.buffer.write(b'x')",
        "import sys\nprint('x', file=sys.__stderr__)",
        "import os\nos.write(2, b'x')",
        "from watcher.core.text import raw_stream\nimport sys\nraw_stream(sys.stderr).write('x')",
    ],
)
def test_a_planted_bypass_is_found(planted: str):
    assert terminal_bypasses(planted, "planted.py")
