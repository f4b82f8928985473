"""The non-root path, proven: the watcher as uid 65534 (as the image and the unit run it), from a venv of
/usr/bin/python3 outside /root, with the sandbox on, no tun device and no capability, runs

- a `check` cycle whose install step is outside code in an install room reaching out only through the egress
  proxy, with the refusals in the run report, the run page and `status` (tests/reliability/test_egress_audit.py);
- a readiness pass: a new suite version installed and run against a server whose build installs through the
  proxy, the refusals (the suite's install's too) recorded in the readiness run's report, and a suite install that
  fails after a refused request carrying it in its error (tests/reliability/test_readiness_egress.py); and
  the hostile-suite readiness scene, a new suite version whose postinstall and CLI attack the deployment
  (tests/reliability/test_hostile_suite.py, its first case). Its one write that succeeds unprivileged, into the
  environments folder, is proven to land on the room's own /tmp tmpfs (the folders bwrap makes on the way to a
  bind are the room user's own when the watcher is not root), not in the host's folder;
- an evaluation (`eval`'s sides built in install rooms through the proxy and started in rooms, against the fake
  model provider: tests/evaluation/test_eval_e2e.py, one case);
- the hostile sdist through real pip (tests/boundary/test_install_egress.py, its first case, which then runs
  as the unprivileged uid itself).

The venv holds no copy of the product: a `.pth` names this checkout and the test venv's site-packages (built
for the same CPython minor version), as an editable install would.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
import tempfile
from pathlib import Path

import pytest

from watcher.boundary import sandbox

ROOT = Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = "/usr/bin/python3"
NOBODY = 65534
CASES = [
    "tests/reliability/test_egress_audit.py",
    "tests/reliability/test_readiness_egress.py",
    "tests/reliability/test_hostile_suite.py::"
    "test_readiness_and_the_candidate_comparison_run_a_hostile_new_suite_version_in_rooms",
    "tests/evaluation/test_eval_e2e.py::test_an_unchanged_contract_gives_no_regression",
    "tests/boundary/test_install_egress.py::"
    "test_a_hostile_install_reaches_only_its_index_and_every_other_way_out_is_refused_and_recorded",
]

pytestmark = pytest.mark.timeout(1500)


def _readable_by_anyone(path: Path) -> bool:
    return all(os.stat(p).st_mode & 0o005 == 0o005 for p in [path, *path.parents] if p != Path("/"))


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run the watcher as another, unprivileged uid")
@pytest.mark.skipif(not Path(SYSTEM_PYTHON).exists(), reason="no system Python at /usr/bin/python3")
def test_an_unprivileged_watcher_runs_installs_through_the_proxy_a_check_readiness_and_an_evaluation_in_rooms() -> None:
    site = Path(sysconfig.get_paths()["purelib"])
    if shutil.which("setpriv") is None or not sandbox.choose("bubblewrap").active:
        pytest.skip("needs setpriv and a working bwrap")
    if not _readable_by_anyone(ROOT / "watcher") or not _readable_by_anyone(site):
        pytest.skip(f"the checkout or its venv's site-packages is not readable by uid {NOBODY}")
    home = Path(tempfile.mkdtemp(prefix="mcp-watcher-nonroot-"))  # not pytest's: those are root's, mode 0700
    try:
        venv = home / "venv"
        subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
        [own_site] = (venv / "lib").glob("python3*/site-packages")
        (own_site / "zz-mcp-watcher-checkout.pth").write_text(f"{ROOT}\n{site}\n", encoding="utf-8")
        for path in [home, *home.rglob("*")]:
            os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
        env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(home), "TMPDIR": str(home)}
        env.update({k: v for k, v in os.environ.items() if k.startswith(("PIP_", "UV_"))})  # the machine's indexes
        done = subprocess.run(
            ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--inh-caps=-all"]
            + ["--bounding-set=-all", "--", str(venv / "bin" / "python"), "-c", _PROBE]
            + ["-p", "no:cacheprovider", "-n", "0", "-q", "-rs", *CASES],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=1400,
            check=False,
        )
    finally:
        shutil.rmtree(home, ignore_errors=True)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-5000:]
    first = out.splitlines()[0]
    assert first.startswith(f"uid {NOBODY} caps 0000000000000000 tun ") and "/root" not in first, first
    assert "7 passed" in out and "skipped" not in out, out[-3000:]


_PROBE = """
import os, sys
status = dict(line.split(":\\t", 1) for line in open("/proc/self/status").read().splitlines() if ":\\t" in line)
tun = "unopenable" if not os.access("/dev/net/tun", os.R_OK | os.W_OK) else "open"
print("uid", os.geteuid(), "caps", status["CapEff"].strip(), "tun", tun, "python", sys.executable, flush=True)
import pytest
raise SystemExit(pytest.main(sys.argv[1:]))
"""
