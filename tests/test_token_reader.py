"""The one reader of a token's `*_env` / `*_file` pair (`vault.read_token`), which the git checkout, the GitHub
Actions executor and the page's access check all use: the variable first, then the file, both stripped."""

from __future__ import annotations

from pathlib import Path

import pytest

from watcher.core.vault import read_token


def test_the_variable_wins_over_the_file(tmp_path: Path) -> None:
    file = tmp_path / "token"
    file.write_text("from-file\n", encoding="utf-8")
    assert read_token("TOKEN", file, {"TOKEN": "  from-env \n"}) == "from-env"


def test_an_empty_or_unset_variable_falls_back_to_the_file(tmp_path: Path) -> None:
    file = tmp_path / "token"
    file.write_text("  from-file\n", encoding="utf-8")
    assert read_token("TOKEN", file, {"TOKEN": "  "}) == "from-file"
    assert read_token("TOKEN", file, {}) == "from-file"
    assert read_token(None, file, {"TOKEN": "ignored"}) == "from-file"


def test_nothing_configured_or_an_empty_file_gives_none(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_text("\n", encoding="utf-8")
    assert read_token(None, None, {"TOKEN": "x"}) is None
    assert read_token("TOKEN", None, {}) is None
    assert read_token("TOKEN", empty, {}) is None


def test_an_unreadable_file_raises_for_the_caller_to_name_its_setting(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        read_token("TOKEN", tmp_path / "missing", {})
