"""Every benchmark still starts: each bench/bench_*.py runs in its quick mode, measures something small and
prints its figures. A benchmark without a quick mode, or one broken by a rename, fails here.

Figures are not judged (the machine's load decides them); only that the run completes and reports.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHES = sorted((ROOT / "bench").glob("bench_*.py"))


def test_there_are_benchmarks_to_run():
    assert len(BENCHES) >= 10, BENCHES


@pytest.mark.timeout(400)
@pytest.mark.parametrize("script", BENCHES, ids=[path.stem for path in BENCHES])
def test_the_benchmark_runs_in_quick_mode_and_prints_figures(script: Path, tmp_path: Path):
    done = subprocess.run(
        [sys.executable, str(script), "--quick"],
        capture_output=True,
        text=True,
        timeout=360,
        cwd=tmp_path,  # not the checkout: a benchmark finds the product and its helpers itself
    )
    assert done.returncode == 0, f"{script.name} --quick exited {done.returncode}:\n{done.stderr[-3000:]}"
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    figures = re.findall(r"\d+(?:\.\d+)?\s*(?:ms|s|min|MB|MiB|×|x|%|bytes|requests)\b|\d+(?:\.\d+)?×", done.stdout)
    assert figures, f"{script.name} --quick printed no figures:\n{done.stdout[-2000:]}"


@pytest.mark.timeout(300)
def test_the_recorded_cycle_is_reproducible_and_a_changed_one_is_shown(tmp_path: Path):
    """bench/cycle_unchanged.py: two runs of the cycle record the same bytes (every id and time normalised), and
    a record that differs by one value exits 1 with a diff naming it."""
    script, record = str(ROOT / "bench" / "cycle_unchanged.py"), tmp_path / "cycle.json"
    first = subprocess.run([sys.executable, script, "--quick", "--record", str(record)], capture_output=True, text=True)
    assert first.returncode == 0, first.stderr[-3000:]
    text = record.read_text(encoding="utf-8")
    for stage in ('"commands"', '"runs"', '"outbox"', '"messages"', '"api_status"'):
        assert stage in text, stage
    assert '"verdict": "fail"' in text and "release:python:2.0.0rc1:books" in text
    again = subprocess.run(
        [sys.executable, script, "--quick", "--compare", str(record)], capture_output=True, text=True
    )
    assert again.returncode == 0, again.stdout[-3000:]
    assert "byte-identical" in again.stdout
    changed = tmp_path / "changed.json"
    changed.write_text(text.replace('"versions_seen": 67', '"versions_seen": 66', 1), encoding="utf-8")
    differs = subprocess.run(
        [sys.executable, script, "--quick", "--compare", str(changed)], capture_output=True, text=True
    )
    assert differs.returncode == 1
    lines = differs.stdout.splitlines()
    assert [line for line in lines if line.startswith("-") and '"versions_seen": 66' in line]
    assert [line for line in lines if line.startswith("+") and '"versions_seen": 67' in line]
    assert "DIFFERS" in differs.stdout
