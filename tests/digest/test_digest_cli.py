"""``mcp-watcher digest --preview``: the three formats and the PNG, nothing sent; usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from tests.digest.helpers import FixedState, build_state, cli


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FixedState:
    monkeypatch.chdir(tmp_path)
    return build_state(tmp_path)


def preview(state: FixedState, *extra: str) -> int:
    return cli(["--config", str(state.loaded.path), "digest", "--preview", "--today", "2026-11-30", *extra])


def test_preview_writes_each_format_and_the_png_and_sends_nothing(state: FixedState, tmp_path: Path):
    out = tmp_path / "preview"
    for fmt in ("markdown", "html", "slack"):
        assert preview(state, "--format", fmt, "--out", str(out)) == 0
    png = out / "digest-books-2026-W49.png"
    assert Image.open(png).format == "PNG"
    markdown = (out / "digest-books-2026-W49.md").read_text(encoding="utf-8")
    assert markdown.startswith("# Deprecation digest · books · 2026-W49")
    assert "![Timeline of deprecated features](digest-books-2026-W49.png)" in markdown
    page = (out / "digest-books-2026-W49.html").read_text(encoding="utf-8")
    assert '<img src="digest-books-2026-W49.png"' in page and "<h2>2 · Where books is affected</h2>" in page
    slack = json.loads((out / "digest-books-2026-W49.json").read_text(encoding="utf-8"))
    assert slack["channel"] == "#books-mcp" and len(slack["messages"]) == 1
    assert slack["messages"][0]["blocks"][0]["text"]["text"] == "Deprecation digest · books · 2026-W49"
    assert not (out / "digest-infra-2026-W49.md").exists(), "infra has digest: false"
    assert [r for r in state.store.outbox() if r["kind"] == "digest"] == [], "a preview queues nothing"


def test_preview_to_stdout_names_the_picture(state: FixedState, capsys: pytest.CaptureFixture[str]):
    assert preview(state, "--team", "infra") == 0, "an explicitly named team is previewed even without digest: true"
    captured = capsys.readouterr()
    assert captured.out.startswith("# Deprecation digest · infra · 2026-W49")
    assert "No servers are configured for this team" in captured.out
    assert "infra: timeline picture " in captured.err
    picture = Path(captured.err.split("timeline picture ", 1)[1].strip())
    assert picture.is_file() and picture.parent.name == "preview"


def test_usage_errors(state: FixedState, capsys: pytest.CaptureFixture[str]):
    assert preview(state, "--team", "nobody") == 2
    assert "no team named 'nobody'" in capsys.readouterr().err
    assert preview(state, "--force") == 2
    assert "--force only applies with --send" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        preview(state, "--today", "30.11.2026")
