"""The start-up window: while the installed `mcp-watcher` starts, a same-user process polling
/proc/*/environ never reads SLACK_BOT_TOKEN once the CLI's imports have begun, because the console
script's first lines (watcher.entry) make the process non-dumpable and scrub the environment block first.

What no code of ours can close: the interpreter's own start-up, between exec and the entry's first line
(tens of milliseconds; seconds on a loaded machine), when the environment is the caller's. The poller
records those reads apart ("early": no heavy library mapped into the process yet) from the ones that
matter ("late": pydantic's compiled core already mapped, i.e. the CLI is importing). The token file
(`slack.token_file`) keeps even the early window empty.

As root, "same user" means root without capabilities (CAP_SYS_PTRACE reads any process): the poller and
the started command run under `setpriv` with an empty capability bounding set.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from watcher.core import vault

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

STARTS = 20

_POLLER = r"""
import os, sys
needle = sys.argv[1].encode()
stop_file = sys.argv[2]
me = str(os.getpid())
early, late, scans, readable = set(), set(), 0, set()
print("ready", flush=True)
while not os.path.exists(stop_file):
    scans += 1
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or pid == me:
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                block = handle.read()
        except OSError:
            continue
        readable.add(pid)
        if needle not in block:
            continue
        try:
            with open(f"/proc/{pid}/maps", "rb") as handle:
                maps = handle.read()
        except OSError:
            continue
        (late if b"pydantic_core" in maps else early).add(pid)
print(len(early), len(late), scans, len(readable), flush=True)
"""


def _console_script() -> Path:
    script = Path(sysconfig.get_path("scripts")) / "mcp-watcher"
    if not script.exists():
        pytest.skip(f"the console script is not installed at {script}")
    return script


def _as_same_user() -> list[str]:
    """A prefix that runs a command as this user without capabilities."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root and no setpriv to drop capabilities")
    return [setpriv, "--bounding-set=-all", "--inh-caps=-all", "--ambient-caps=-all", "--"]


def _race(tmp_path: Path, command: list[str], starts: int) -> tuple[int, int, int, int]:
    token = "xoxb-race-" + secrets.token_hex(12)
    stop_file = tmp_path / f"stop-{token}"
    prefix = _as_same_user()
    poller = subprocess.Popen(
        [*prefix, sys.executable, "-c", _POLLER, token, str(stop_file)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert poller.stdout is not None
        assert poller.stdout.readline().strip() == "ready"
        for _ in range(starts):
            # `env` puts the token into the exec of the command itself (never into a launcher's own block).
            done = subprocess.run(
                [*prefix, "env", f"SLACK_BOT_TOKEN={token}", *command], capture_output=True, timeout=120
            )
            assert done.returncode == 0, done.stderr
        stop_file.touch()
        early, late, scans, readable = (int(n) for n in poller.stdout.readline().split())
    finally:
        stop_file.touch()
        poller.wait(timeout=60)
    assert scans > starts and readable > 0  # it did look, at every process it could
    return early, late, scans, readable


def test_a_same_user_poller_never_reads_the_token_once_the_cli_imports_begin(tmp_path: Path):
    # `status` reads a configuration (pydantic's core mapped: the "late" mark); `--help` no longer imports it.
    (tmp_path / "state").mkdir()
    config = tmp_path / "watcher.yaml"
    config.write_text("state: state/watcher.db\n")
    early, late, _, _ = _race(tmp_path, [str(_console_script()), "--config", str(config), "status"], STARTS)
    assert late == 0, f"the token was readable during the CLI's imports in {late} of {STARTS} starts"
    # The same poller against the old entry (the CLI first, the seal after its imports) does see it late.
    old = [sys.executable, "-c", "from watcher.cli import main; raise SystemExit(main())", "--config", str(config)]
    _, old_late, _, _ = _race(tmp_path, [*old, "status"], 3)
    assert old_late >= 1


def test_seal_early_holds_secret_looking_variables_and_seal_gives_back_what_is_not_the_watchers(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-early")
    monkeypatch.setenv("OTHER_DB_PASSWORD", "granted-to-a-server")
    monkeypatch.setenv("NPM_TOKEN", "npm-for-installs")
    monkeypatch.setenv("PLAIN_SETTING", "kept")
    try:
        held = vault.seal_early()
        assert {"SLACK_BOT_TOKEN", "OTHER_DB_PASSWORD", "NPM_TOKEN"} <= set(held)
        assert "PLAIN_SETTING" not in held and os.environ["PLAIN_SETTING"] == "kept"
        assert "SLACK_BOT_TOKEN" not in os.environ and vault.environ()["SLACK_BOT_TOKEN"] == "xoxb-early"
        protection = vault.seal(["SLACK_BOT_TOKEN"], granted=["OTHER_DB_PASSWORD"])
        # The configuration decides: the watcher's own secret stays held (read once), the rest go back.
        assert protection.removed == ("SLACK_BOT_TOKEN",)
        assert "SLACK_BOT_TOKEN" not in os.environ
        assert os.environ["OTHER_DB_PASSWORD"] == "granted-to-a-server"
        assert os.environ["NPM_TOKEN"] == "npm-for-installs"
    finally:
        vault.unseal()
    assert os.environ["SLACK_BOT_TOKEN"] == "xoxb-early"


def test_the_entry_module_imports_nothing_heavy_before_the_seal():
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import watcher.entry\n"
        "new = sorted(m for m in set(sys.modules) - before if m.startswith('watcher'))\n"
        "heavy = [m for m in ('pydantic', 'httpx', 'yaml', 'apscheduler', 'watcher.cli') if m in sys.modules]\n"
        "print(new, heavy)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == (
        "['watcher', 'watcher.core', 'watcher.core.secret_policy', 'watcher.core.vault', 'watcher.entry'] []"
    )
