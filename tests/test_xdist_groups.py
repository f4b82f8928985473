"""The tests of one `xdist_group` run on one worker under the suite's `-n 6 --dist loadgroup`, so a module's
shared fixture is built once (tests/xdist_groups.py makes the mark hold on this pytest)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.helpers import ROOT

GROUPED = """
import os
import re
from pathlib import Path
import pytest

pytestmark = pytest.mark.xdist_group("shared-build")

@pytest.fixture(scope="module")
def build(tmp_path_factory):
    Path(os.environ["OUT"], "builds").open("a").write("built\\n")

@pytest.mark.parametrize("i", range(8))
def test_grouped(i, build):
    Path(os.environ["OUT"], "grouped").open("a").write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")
"""

UNGROUPED = """
import os
import re
from pathlib import Path
import pytest

@pytest.mark.parametrize("i", range(8))
def test_free(i):
    Path(os.environ["OUT"], "free").open("a").write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")
"""


def test_the_tests_of_one_group_run_on_one_worker_and_share_its_module_fixture(tmp_path: Path) -> None:
    project, out = tmp_path / "project", tmp_path / "out"
    project.mkdir()
    out.mkdir()
    (project / "test_grouped.py").write_text(GROUPED)
    (project / "test_free.py").write_text(UNGROUPED)
    env = {**os.environ, "OUT": str(out), "PYTHONPATH": str(ROOT)}
    # A temp folder of its own: without one, the nested controller makes a numbered folder in the shared
    # temp root and, as it exits, deletes the unlocked older ones (whole earlier suite runs, GBs of SDK
    # environments): under load that took this 8-test run past its time-out.
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.xdist_groups", "-p", "no:cacheprovider", "-q"]
        + ["-n", "2", "--dist", "loadgroup", "--rootdir", str(project), "--basetemp", str(tmp_path / "temp")]
        + [str(project)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    grouped = (out / "grouped").read_text().split()
    assert len(grouped) == 8 and len(set(grouped)) == 1, grouped  # one worker ran the whole group
    assert (out / "builds").read_text().split() == ["built"]  # so its module fixture ran once
    assert len((out / "free").read_text().split()) == 8


def test_each_group_is_one_module_whose_tests_share_a_module_fixture() -> None:
    # A group that spans modules, or holds tests that share nothing, only stacks work on one worker.
    users: dict[str, list[Path]] = {}
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        if path.name == Path(__file__).name:
            continue
        for name in re.findall(r'xdist_group\("([^"]+)"\)', path.read_text(encoding="utf-8")):
            users.setdefault(name, []).append(path)
    assert users, "no group found: the reader is broken"
    for name, paths in users.items():
        assert len(set(paths)) == 1, f"group {name!r} spans {sorted({str(p.relative_to(ROOT)) for p in paths})}"
        text = paths[0].read_text(encoding="utf-8")
        assert 'scope="module"' in text, f"{paths[0].relative_to(ROOT)}: group {name!r} shares no module fixture"


def test_every_nested_pytest_run_has_a_temp_folder_of_its_own() -> None:
    # A nested pytest without --basetemp cleans the shared temp root of other runs' folders on exit.
    starts = 0
    for path in sorted((ROOT / "tests").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r'sys\.executable, "-m", "pytest"', text):
            starts += 1
            call = text[match.start() : text.find("\n    )", match.start())]
            assert '"--basetemp"' in call, f"{path.relative_to(ROOT)}: a nested pytest without --basetemp"
    assert starts >= 3, "the reader found too few nested pytest runs: it is broken"
