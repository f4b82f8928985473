"""The docs' command examples work: every `scripts/run …` / `mcp-watcher …` line in a docs code block names a
real subcommand with real options, and the self-contained examples (no outside server or key) run as
written, from a folder outside the checkout, through `scripts/run`."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from watcher.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PROGRAMS = ("scripts/run", "mcp-watcher")


def code_blocks(text: str) -> list[tuple[str, str]]:
    """(info string, body) of every fenced block, indented ones (in list items) included."""
    return [(m["info"], m["body"]) for m in re.finditer(r"^ *```(?P<info>\w*)\n(?P<body>.*?)^ *```", text, re.M | re.S)]


def command_lines(body: str) -> list[str]:
    """The example command lines of one block (continuations joined, `$ ` prompts and comments dropped)."""
    joined = re.sub(r"\\\n\s*", " ", body)
    lines = [line.strip() for line in joined.splitlines()]
    if any(line.startswith("$ ") for line in lines):  # a transcript: only what was typed
        lines = [line[2:] for line in lines if line.startswith("$ ")]
    out = []
    for line in lines:
        words = line.split()
        if not words or words[0] not in PROGRAMS:
            continue  # also output lines ("mcp-watcher: …", "mcp-watcher snapshot: …")
        if any(w.endswith(":") for w in words[:2]) or " [" in line or "…" in line.split("#")[0] or " (" in line:
            continue  # a usage synopsis or a message, not a command to run
        out.append(line.split(" #")[0].strip())
    return out


def examples() -> list[tuple[str, str]]:
    found = []
    for doc in DOCS:
        for info, body in code_blocks(doc.read_text(encoding="utf-8")):
            if info in ("", "sh", "console", "bash"):
                found += [(doc.name, line) for line in command_lines(body)]
    return found


EXAMPLES = examples()


def test_the_docs_have_command_examples_to_check():
    assert len(EXAMPLES) >= 15, EXAMPLES
    assert any(line.startswith("scripts/run snapshot --out snap/reader") for _, line in EXAMPLES)


@pytest.mark.parametrize(("doc", "line"), EXAMPLES, ids=[f"{d}:{line[:60]}" for d, line in EXAMPLES])
def test_every_documented_command_line_parses(doc: str, line: str):
    words = shlex.split(line, comments=True)
    args = words[1:] or ["run"]  # bare `scripts/run` is `run`
    try:
        build_parser().parse_args(args)
    except SystemExit as exc:
        pytest.fail(f"{doc}: `{line}` is not a valid command line (exit {exc.code})")


def _block_of(doc: str, first: str) -> str:
    for _, body in code_blocks((ROOT / "docs" / doc).read_text(encoding="utf-8")):
        if first in body:
            return body
    raise AssertionError(f"docs/{doc} has no block with {first!r}")


def _run_block(body: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A docs block as a bash script: `$ ` prompts dropped, output lines (no prompt after a prompt) skipped,
    `scripts/run` and the repository's paths made absolute (the block is run outside the checkout)."""
    lines = body.splitlines()
    prompted = any(line.startswith("$ ") for line in lines)
    script = []
    for line in lines:
        if prompted and not line.startswith("$ "):
            continue
        line = line.removeprefix("$ ")
        line = line.replace("scripts/run", str(ROOT / "scripts" / "run"))
        line = re.sub(r"(?<![\w/])tests/", str(ROOT / "tests") + "/", line)
        script.append(line)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "MCP_WATCHER_", "SCOPED_"))}
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", "\n".join(script)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_snapshot_page_examples_run_as_written(tmp_path: Path):
    reader = _block_of("snapshot.md", "snapshot --out snap/reader")
    admin = _block_of("snapshot.md", "snapshot --out snap/admin")
    first = _run_block(reader, tmp_path)
    assert first.returncode == 0, first.stderr
    assert "snapshot written to snap/reader" in first.stdout
    second = _run_block(admin, tmp_path)
    assert second.returncode in (0, 1), second.stderr  # diff: exit 1 only when a change breaks clients
    assert "delete_book" in second.stdout and "tool_added" in second.stdout
    assert (tmp_path / "snap" / "reader" / "modern" / "tools.json").is_file()


def test_the_eval_example_on_the_shipped_config_says_skipped_without_a_key(tmp_path: Path):
    line = next(line for doc, line in EXAMPLES if doc == "evaluation.md" and line.endswith("2.4.0b1 --json"))
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "MCP_WATCHER_CONFIG")}
    env["MCP_WATCHER_CONFIG"] = str(tmp_path / "watcher.yaml")
    # The shipped config, its run folders moved out of the checkout (the rest as shipped).
    shipped = (ROOT / "config" / "watcher.yaml").read_text(encoding="utf-8").replace("../", str(ROOT) + "/")
    shipped = shipped.replace(f"{ROOT}/state/", str(tmp_path / "state") + "/")
    (tmp_path / "watcher.yaml").write_text(shipped, encoding="utf-8")
    done = subprocess.run(
        [str(ROOT / "scripts" / "run"), *shlex.split(line, comments=True)[1:]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert '"error": "skipped: ANTHROPIC_API_KEY not set' in done.stdout, done.stdout + done.stderr
    assert "no evaluation set declared" not in done.stdout
