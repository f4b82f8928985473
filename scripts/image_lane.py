"""The image lane: deploy/Dockerfile built without Docker and its image run for real (scripts/image runs this).

    scripts/image [--rebuild] [--keep] [--steps base,build,check,cycle,rooms,unit]

Steps, each timed, each ending in a line `lane: STEP ok|FAILED …` and a summary table at the end:

- base: a Debian bookworm root, `mmdebstrap --variant=minbase` with python3, python3-venv, python-is-python3
  and ca-certificates, from the host's own apt sources, imported into podman (reused unless --rebuild);
- build: `podman build --isolation=chroot --network=host --format docker` of the shipped Dockerfile on that
  base (`--build-arg PYTHON_IMAGE=…`), the host's CA bundle mounted read-only; then the image's metadata:
  HEALTHCHECK on /healthz kept, user 10001:10001, entrypoint `tini -- mcp-watcher`, command `run`;
- check: `mcp-watcher run --check` of the baked-in config under `buildah run --isolation chroot --user
  10001:10001`, first with no page token (must fail naming the secret file), then with one (must pass);
- cycle: the service's jobs once (`run --once`) twice under the same chroot, sandbox off (a chrooted
  unprivileged uid cannot make a user namespace here), against a loopback PyPI, GitHub and Slack (the
  product's own fakes): the first poll is the baseline, the second finds mcp 2.0.0rc1, posts its notice
  to Slack and runs the example server's suite against it, the verdict threaded under the notice;
- rooms: the image's root file system (`buildah mount`) under bubblewrap as uid 10001, tini as PID 1,
  `mcp-watcher run` with `suites.sandbox: bubblewrap` as shipped: every install and the server in rooms
  of their own inside it; the same cycle on a fresh state, /healthz and /readyz answered, then SIGTERM:
  exit 0 and "stopped cleanly";
- unit: `systemd-analyze verify` and `security --offline` of deploy/systemd/mcp-watcher.service against
  the image's root (its ExecStart is the image's own program). `systemd-run` is not possible here: PID 1
  is not systemd, and the lane says so.

Installs inside the image reach the package indexes the way the host does (the host's CA bundle mounted,
SSL_CERT_FILE / NODE_EXTRA_CA_CERTS set); everything else it talks to is on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import select
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.github_server import FakeGitHub  # noqa: E402
from tests.fakes.mcp_history import MCP_PAGE, McpHistory  # noqa: E402
from tests.fakes.registry_server import FIXTURES, serve_registry  # noqa: E402
from tests.fakes.slack_server import FakeSlack  # noqa: E402
from tests.helpers import SERVICE_CLOCK_START, free_port, wait_until  # noqa: E402
from tests.spec.helpers import REGISTRY_PATH, REPO, serve_spec  # noqa: E402
from watcher.core.clock import START_VARIABLE  # noqa: E402

WORK = Path(os.environ.get("MCP_WATCHER_IMAGE_WORK", "/var/tmp/mcp-watcher-image"))
BASE_IMAGE = "localhost/mcp-watcher-base:bookworm"
IMAGE = os.environ.get("MCP_WATCHER_IMAGE", "localhost/mcp-watcher:lane")
BASE_PACKAGES = "python3,python3-venv,python-is-python3,ca-certificates"
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
SERVICE_UID = 10001
SECRETS_IN_IMAGE = "/run/secrets/mcp-watcher"
STATE_IN_IMAGE = "/var/lib/mcp-watcher"
LANE_CONFIG_IN_IMAGE = "/etc/mcp-watcher/watcher.yaml"
"""Mounted over the baked-in config, as compose and Kubernetes mount theirs."""
SHIPPED_CONFIG = ROOT / "deploy" / "config" / "watcher.yaml"
UNIT = ROOT / "deploy" / "systemd" / "mcp-watcher.service"
STEPS = ("base", "build", "check", "cycle", "rooms", "unit")
BASELINE_CUT, NEW_BETA = "2.0.0rc1", "2.0.0rc1"
"""The loopback PyPI first lists mcp as it was before 2.0.0rc1 (the baseline), then with it (the news)."""
VERDICTS = ("pass", "fail")


class LaneFailure(Exception):
    """A step's check did not hold; the message says which and shows the evidence."""


@dataclass
class Step:
    name: str
    seconds: float = 0.0
    ok: bool = False
    notes: list[str] = field(default_factory=list)


def sh(args: list[str], timeout: float = 600, check: bool = True, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Runs one command, echoing it; a non-zero exit with `check` is a lane failure with its output."""
    print("+ " + " ".join(args), flush=True)
    done = subprocess.run(args, text=True, capture_output=True, timeout=timeout, **kwargs)
    if check and done.returncode != 0:
        raise LaneFailure(f"{args[0]} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done


def expect(condition: bool, what: str, evidence: str = "") -> None:
    if not condition:
        raise LaneFailure(f"{what}\n{evidence[-4000:]}")


# --- base and build ----------------------------------------------------------------------------------


def host_apt_sources() -> list[Path]:
    """The host's enabled apt source files: mmdebstrap pastes them into the new root, so the base comes
    from wherever this machine's apt is configured to fetch (no archive host written here)."""
    candidates = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*.list"))]
    candidates += sorted(Path("/etc/apt/sources.list.d").glob("*.sources"))
    enabled = []
    for path in candidates:
        lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()] if path.is_file() else []
        if any(line and not line.startswith("#") for line in lines):
            enabled.append(path)
    return enabled


def image_exists(name: str) -> bool:
    return sh(["podman", "image", "exists", name], check=False).returncode == 0


def step_base(step: Step, rebuild: bool) -> None:
    if image_exists(BASE_IMAGE) and not rebuild:
        step.notes.append(f"{BASE_IMAGE} reused (--rebuild makes it anew)")
        return
    sources = host_apt_sources()
    expect(bool(sources), "no enabled apt source on this host for mmdebstrap to use")
    tarball = WORK / "base.tar"
    tarball.unlink(missing_ok=True)
    sh(
        ["mmdebstrap", "--variant=minbase", f"--include={BASE_PACKAGES}", "bookworm", str(tarball)]
        + [str(path) for path in sources],
        timeout=1800,
    )
    sh(["podman", "import", str(tarball), BASE_IMAGE], timeout=600)
    step.notes.append(f"base.tar {tarball.stat().st_size / 1e6:.0f} MB")


def step_build(step: Step) -> None:
    sh(
        [
            "podman", "build", "--isolation=chroot", "--network=host", "--format", "docker",
            "-v", f"{CA_BUNDLE}:{CA_BUNDLE}:ro",
            "--build-arg", f"PYTHON_IMAGE={BASE_IMAGE}",
            "--ignorefile", "deploy/Dockerfile.dockerignore",
            "-f", "deploy/Dockerfile", "-t", IMAGE, ".",
        ],
        timeout=3600,
        cwd=ROOT,
    )  # fmt: skip
    sh(["podman", "image", "prune", "--force"], check=False)  # the previous build's image, now untagged
    (meta,) = json.loads(sh(["podman", "image", "inspect", IMAGE]).stdout)
    config = meta.get("Config") or {}
    health = (meta.get("Healthcheck") or config.get("Healthcheck") or {}).get("Test") or []
    expect(any("/healthz" in part for part in health), "the image has no HEALTHCHECK on /healthz", json.dumps(meta))
    expect(config.get("User") == f"{SERVICE_UID}:{SERVICE_UID}", f"image user is {config.get('User')!r}")
    expect(config.get("Entrypoint") == ["tini", "--", "mcp-watcher"], f"entrypoint {config.get('Entrypoint')}")
    expect(config.get("Cmd") == ["run"], f"command {config.get('Cmd')}")
    step.notes.append(f"{IMAGE}: {meta.get('Size', 0) / 1e6:.0f} MB, HEALTHCHECK {' '.join(health[:1])} kept")


# --- running the image ---------------------------------------------------------------------------------


@contextmanager
def working_container() -> Iterator[str]:
    """A buildah working container of the image, removed afterwards."""
    name = sh(["buildah", "from", "--pull-never", IMAGE]).stdout.strip().splitlines()[-1]
    # buildah 1.28's `run`, given several binds, may put its own anonymous volume at the image's VOLUME over
    # the bind to the same path; the state folder is bound explicitly here, as a runtime's volume would be.
    sh(["buildah", "config", "--volume", f"{STATE_IN_IMAGE}-", name])
    try:
        yield name
    finally:
        sh(["buildah", "rm", name], check=False)


def service_folder(name: str) -> Path:
    """An empty folder owned by the service's uid (its state volume or secrets)."""
    folder = WORK / "steps" / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    os.chown(folder, SERVICE_UID, SERVICE_UID)
    return folder


def secrets_folder(slack_token: str, page_token: bool) -> Path:
    """The secret files the image's config names, readable by the service only."""
    folder = service_folder("secrets")
    (folder / "slack_bot_token").write_text(slack_token, encoding="utf-8")
    if page_token:
        (folder / "page_token").write_text(secrets.token_hex(32), encoding="utf-8")
    for path in folder.iterdir():
        os.chown(path, SERVICE_UID, SERVICE_UID)
        path.chmod(0o400)
    return folder


def image_env() -> dict[str, str]:
    """The image's ENV, plus the host's CA bundle for the installers (as behind a TLS-inspecting proxy)."""
    (meta,) = json.loads(sh(["podman", "image", "inspect", IMAGE]).stdout)
    env = dict(item.split("=", 1) for item in (meta.get("Config") or {}).get("Env") or [])
    env.update({"SSL_CERT_FILE": str(CA_BUNDLE), "NODE_EXTRA_CA_CERTS": str(CA_BUNDLE)})
    return env


def chroot_run(
    container: str, command: list[str], mounts: dict[Path, str], env: dict[str, str], timeout: float = 900
) -> subprocess.CompletedProcess[str]:
    """`buildah run --isolation chroot` as uid 10001 with host networking (the fakes are on its loopback)."""
    args = ["buildah", "run", "--isolation", "chroot", "--network", "host", "--user", f"{SERVICE_UID}:{SERVICE_UID}"]
    for source, target in {**mounts, CA_BUNDLE: str(CA_BUNDLE)}.items():
        args += [
            "-v",
            f"{source}:{target}:ro" if "secrets" in target or target.startswith("/etc") else f"{source}:{target}",
        ]
    for key, value in env.items():
        args += ["--env", f"{key}={value}"]
    return sh([*args, container, "--", *command], timeout=timeout, check=False)


def step_check(step: Step) -> None:
    with working_container() as container:
        state = service_folder("state-check")
        missing = chroot_run(
            container, ["mcp-watcher", "run", "--check"], {secrets_folder("", page_token=False): SECRETS_IN_IMAGE,
                                                          state: STATE_IN_IMAGE}, {}
        )  # fmt: skip
        print(missing.stdout + missing.stderr)
        expect(missing.returncode != 0, "run --check passed without the page token", missing.stdout)
        expect(f"{SECRETS_IN_IMAGE}/page_token" in missing.stdout + missing.stderr, "the missing file is not named")
        ready = chroot_run(
            container, ["mcp-watcher", "run", "--check"], {secrets_folder("", page_token=True): SECRETS_IN_IMAGE,
                                                          state: STATE_IN_IMAGE}, {}
        )  # fmt: skip
        print(ready.stdout + ready.stderr)
        expect(ready.returncode == 0 and "ready to start" in ready.stdout, "run --check failed", ready.stdout)
        step.notes.append("no page token: refused naming it; with one: " + ready.stdout.strip().splitlines()[-1])


@dataclass
class Fakes:
    """The loopback world the image's service talks to: PyPI (mcp's recorded page), GitHub (spec), Slack."""

    history: McpHistory
    registry_url: str
    gh: FakeGitHub
    slack: FakeSlack


@contextmanager
def loopback_world(name: str) -> Iterator[Fakes]:
    root = WORK / "steps" / f"registry-{name}"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(FIXTURES, root)
    with ExitStack() as stack:
        registry = stack.enter_context(serve_registry(root))
        gh = stack.enter_context(FakeGitHub())
        slack = stack.enter_context(FakeSlack(token="xoxb-image-lane", channels=["#books-mcp"]))
        serve_spec(gh)
        history = McpHistory(root / MCP_PAGE)
        history.before(BASELINE_CUT)
        yield Fakes(history, registry.url("pypi/simple"), gh, slack)


def lane_config(fakes: Fakes, sandbox: str, port: int) -> Path:
    """The image's baked-in config with only the outside world moved to loopback: one SDK source (the
    loopback PyPI), the spec on the loopback GitHub, the loopback Slack, the pages on 127.0.0.1, quick polls,
    no run on the baseline. State, servers and everything else stay as shipped."""
    data: dict[str, Any] = yaml.safe_load(SHIPPED_CONFIG.read_text(encoding="utf-8"))
    data["sdks"] = [{"name": "python", "registry": "pypi", "package": "mcp", "url": fakes.registry_url}]
    data["teams"][0]["sdks"] = ["python"]
    data["spec"] = {"registry_url": fakes.gh.raw_url(REGISTRY_PATH), "repo": REPO, "github_api_url": fakes.gh.api_url}
    data["slack"] = {**data["slack"], "api_url": fakes.slack.api_url, "retries": 1}
    data["http"] = {**data["http"], "host": "127.0.0.1", "port": port}
    data["schedule"] = {**data["schedule"], "poll_minutes": 0.1, "spec_poll_minutes": 60, "deliver_seconds": 1}
    data["suites"] = {**data["suites"], "sandbox": sandbox, "on_baseline": False}
    data["log"] = {"level": "INFO", "json": False}
    path = WORK / "steps" / f"lane-{sandbox}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    path.chmod(0o644)
    return path


def thread_verdict(slack: FakeSlack) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The beta's notice and the suite result threaded under it, once both are in Slack."""
    notices = [m for m in slack.messages if m.get("metadata", {}).get("event_payload", {}).get("key", "")
               == f"release:python:{NEW_BETA}:books"]  # fmt: skip
    if not notices:
        return None
    replies = [m for m in slack.messages if m.get("thread_ts") == notices[0].get("ts")]
    return (notices[0], replies[0]) if replies else None


def judged_run(state: Path, reply: dict[str, Any], boundary: str) -> str:
    """The run's stored report: installed, started and judged by every requirement set (a verdict reached
    on the server's behaviour, not a failed install). Returns its verdict with what decided it."""
    reports = sorted(state.glob(f"runs/library/*{NEW_BETA}*/report.json"))
    expect(len(reports) == 1, f"expected one stored run of library at {NEW_BETA}", str(reports))
    report = json.loads(reports[0].read_text(encoding="utf-8"))
    install, start = report.get("install") or {}, report.get("start") or {}
    expect(bool(install.get("ok")), f"the install failed: {install.get('error')}", str(install.get("evidence")))
    expect(bool(start.get("ok")), f"the server did not start: {start.get('error')}", str(start.get("evidence")))
    judged = [c for c in report.get("conformance") or [] if not c.get("error") and not c.get("skipped")]
    expect(bool(judged), "no requirement set was judged", json.dumps(report.get("conformance"))[:3000])
    verdict = str(report.get("verdict"))
    expect(verdict in VERDICTS, f"verdict {verdict!r}", json.dumps(report.get("reasons")))
    expect(verdict.upper() in str(reply.get("text", "")).upper(), "the Slack reply does not carry the verdict")
    mode = (report.get("sandbox") or {}).get("mode")
    expect(mode == boundary, f"the run's boundary was {mode!r}, not {boundary!r}", json.dumps(report.get("sandbox")))
    expect(bool(install.get("sandboxed")) == (boundary == "bubblewrap"), "the install's room is not as configured")
    where = "in rooms" if boundary == "bubblewrap" else "no rooms"
    return f"{verdict}: installed with {install.get('installer')} {where}, started, {len(judged)} set(s) judged"


def step_cycle(step: Step) -> None:
    with loopback_world("cycle") as fakes, working_container() as container:
        config = lane_config(fakes, "off", free_port())
        mounts = {
            secrets_folder(fakes.slack.token, page_token=True): SECRETS_IN_IMAGE,
            service_folder("state-cycle"): STATE_IN_IMAGE,
            config: LANE_CONFIG_IN_IMAGE,
        }
        env = {
            START_VARIABLE: SERVICE_CLOCK_START,
            "SSL_CERT_FILE": str(CA_BUNDLE),
            "NODE_EXTRA_CA_CERTS": str(CA_BUNDLE),
        }
        first = chroot_run(container, ["mcp-watcher", "run", "--once"], mounts, env)
        print(first.stdout[-3000:] + first.stderr[-3000:])
        expect(first.returncode == 0, f"the baseline run --once exited {first.returncode}", first.stderr)
        expect("baseline taken for python" in first.stderr + first.stdout, "no baseline", first.stderr)
        expect(fakes.slack.messages == [], "the baseline was news", str(fakes.slack.messages))
        fakes.history.whole()
        second = chroot_run(container, ["mcp-watcher", "run", "--once"], mounts, env, timeout=1800)
        print(second.stdout[-3000:] + second.stderr[-5000:])
        expect(second.returncode == 0, f"the second run --once exited {second.returncode}", second.stderr)
        found = thread_verdict(fakes.slack)
        expect(found is not None, f"no notice for {NEW_BETA} with its suite result threaded", str(fakes.slack.messages))
        assert found is not None
        verdict = judged_run(mounts_state(mounts), found[1], "off")
        step.notes.append(f"baseline, then {NEW_BETA}: notice, suite reply in its thread ({verdict})")


# --- the full cycle with rooms ---------------------------------------------------------------------------


@dataclass
class RoomedService:
    process: subprocess.Popen[bytes]
    init_pid: int
    log_path: Path
    port: int
    status: Any
    """bwrap's --json-status-fd, kept open to the end (it writes the command's exit code there last)."""

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def get(self, path: str) -> httpx.Response:
        return httpx.get(f"http://127.0.0.1:{self.port}{path}", timeout=5)


def tun_device() -> Path:
    """/dev/net/tun as a container gets it (`--device /dev/net/tun`, mode 0666 as Debian and Ubuntu ship it):
    this machine's own node is root-only (0600), which no unprivileged slirp4netns could open."""
    node = WORK / "dev" / "tun"
    node.parent.mkdir(parents=True, exist_ok=True)
    node.unlink(missing_ok=True)
    host = os.stat("/dev/net/tun")
    os.mknod(node, 0o666 | stat.S_IFCHR, host.st_rdev)
    node.chmod(0o666)
    return node


def start_in_bubblewrap(rootfs: Path, mounts: dict[Path, str], env: dict[str, str], log_path: Path, port: int
                        ) -> RoomedService:  # fmt: skip
    """The image's root under bubblewrap as uid 10001 (no root anywhere), tini as PID 1 of its own PID
    namespace as in a container, the host's network (the fakes are on its loopback). The service makes its
    own rooms inside (nested user namespaces), as it does in a pod."""
    args = [
        "setpriv", f"--reuid={SERVICE_UID}", f"--regid={SERVICE_UID}", "--clear-groups", "--inh-caps=-all", "--",
        "bwrap", "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--as-pid-1",
        "--die-with-parent", "--clearenv",
        "--ro-bind", str(rootfs), "/", "--proc", "/proc", "--dev", "/dev",
        "--dev-bind", str(tun_device()), "/dev/net/tun", "--tmpfs", "/tmp",
        "--ro-bind", "/etc/resolv.conf", "/etc/resolv.conf", "--ro-bind", str(CA_BUNDLE), str(CA_BUNDLE),
        "--chdir", STATE_IN_IMAGE,
    ]  # fmt: skip
    for source, target in mounts.items():
        args += ["--ro-bind" if target != STATE_IN_IMAGE else "--bind", str(source), target]
    for key, value in env.items():
        args += ["--setenv", key, value]
    status_read, status_write = os.pipe()
    args += ["--json-status-fd", str(status_write), "--", "tini", "--", "mcp-watcher", "run"]
    print("+ " + " ".join(args), flush=True)
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            args, stdout=log, stderr=subprocess.STDOUT, pass_fds=(status_write,), start_new_session=True
        )
    os.close(status_write)
    status = os.fdopen(status_read, "rb", buffering=0)
    ready, _, _ = select.select([status], [], [], 60)
    first = status.readline() if ready else b""
    if not first:
        os.killpg(process.pid, signal.SIGKILL)
        status.close()
        raise LaneFailure(f"bubblewrap did not start (exit {process.wait()}):\n{log_path.read_text(errors='replace')}")
    init_pid = int(json.loads(first)["child-pid"])
    return RoomedService(process, init_pid, log_path, port, status)


def step_rooms(step: Step) -> None:
    with loopback_world("rooms") as fakes, working_container() as container:
        rootfs = Path(sh(["buildah", "mount", container]).stdout.strip())
        reachable = WORK / "steps" / "rootfs"  # buildah's storage is root-only (0700): bind it where 10001 can read
        reachable.mkdir(parents=True, exist_ok=True)
        sh(["mount", "--bind", str(rootfs), str(reachable)])
        try:
            port = free_port()
            config = lane_config(fakes, "bubblewrap", port)
            state = service_folder("state-rooms")
            mounts = {
                secrets_folder(fakes.slack.token, page_token=True): SECRETS_IN_IMAGE,
                state: STATE_IN_IMAGE,
                config: LANE_CONFIG_IN_IMAGE,
            }
            env = {**image_env(), START_VARIABLE: SERVICE_CLOCK_START}
            log_path = WORK / "steps" / "rooms-service.log"
            log_path.unlink(missing_ok=True)
            service = start_in_bubblewrap(reachable, mounts, env, log_path, port)
            try:
                _follow_the_cycle(service, fakes, state, step)
            finally:
                code = _terminate(service)
            print(service.log()[-4000:])
            expect(code == 0, f"the service exited {code} after SIGTERM", service.log())
            expect("stopped cleanly" in service.log(), "no 'stopped cleanly' after SIGTERM", service.log())
            step.notes.append("SIGTERM to tini: exit 0, stopped cleanly")
        finally:
            sh(["umount", str(reachable)], check=False)
            sh(["buildah", "umount", container], check=False)


def _follow_the_cycle(service: RoomedService, fakes: Fakes, state: Path, step: Step) -> None:
    def healthy() -> bool:
        if service.process.poll() is not None:
            raise LaneFailure(f"the service exited {service.process.returncode}:\n{service.log()[-4000:]}")
        try:
            return service.get("/healthz").status_code == 200
        except httpx.HTTPError:
            return False

    wait_until(healthy, timeout=180, interval=0.5, message="/healthz")
    wait_until(lambda: "baseline taken for python" in service.log(), timeout=120, message="the baseline poll")
    boundary = next((line for line in service.log().splitlines() if "run boundary:" in line), "")
    expect("bubblewrap" in boundary and "REFUSED" not in boundary, "the run boundary is not bubblewrap", boundary)
    expect(service.get("/readyz").status_code == 200, "not ready after the baseline", service.get("/readyz").text)
    fakes.history.whole()
    wait_until(lambda: thread_verdict(fakes.slack) is not None, timeout=1800, interval=2,
               message=f"the {NEW_BETA} notice and its suite result in Slack")  # fmt: skip
    found = thread_verdict(fakes.slack)
    assert found is not None
    verdict = judged_run(state, found[1], "bubblewrap")
    expect(fakes.slack.token not in service.log(), "the Slack token is in the log")
    expect(service.get("/readyz").status_code == 200, "not ready after the run", service.get("/readyz").text)
    step.notes.append("run boundary: bubblewrap, installs through slirp4netns, server on its own loopback")
    step.notes.append(f"baseline, then {NEW_BETA}: notice, suite reply in its thread ({verdict})")


def mounts_state(mounts: dict[Path, str]) -> Path:
    return next(source for source, target in mounts.items() if target == STATE_IN_IMAGE)


def _terminate(service: RoomedService) -> int:
    """SIGTERM to the image's PID 1 (tini), as a container runtime sends it; SIGKILL after 15 minutes
    (the kit's grace period) to bubblewrap's group, which ends everything in it."""
    with contextlib.suppress(ProcessLookupError):  # it ended by itself: its exit code says how
        os.kill(service.init_pid, signal.SIGTERM)
    try:
        code = service.process.wait(timeout=900)
    except subprocess.TimeoutExpired:
        os.killpg(service.process.pid, signal.SIGKILL)
        service.process.wait(timeout=30)
        return -9
    finally:
        said = [json.loads(line) for line in service.status.read().splitlines() if line.strip()]
        service.status.close()
    exits = [entry["exit-code"] for entry in said if "exit-code" in entry]
    return int(exits[-1]) if exits else code


# --- the systemd unit -------------------------------------------------------------------------------------


def step_unit(step: Step) -> None:
    analyze = shutil.which("systemd-analyze")
    expect(analyze is not None, "systemd-analyze is not on this machine")
    assert analyze is not None
    with working_container() as container:
        rootfs = Path(sh(["buildah", "mount", container]).stdout.strip())
        try:
            units = rootfs / "etc" / "systemd" / "system"
            units.mkdir(parents=True, exist_ok=True)
            shutil.copy(UNIT, units / UNIT.name)
            for system_units in (Path("/usr/lib/systemd/system"), Path("/lib/systemd/system")):
                if system_units.is_dir():
                    shutil.copytree(system_units, rootfs / "usr/lib/systemd/system", symlinks=True, dirs_exist_ok=True)
                    break
            verify = sh([analyze, "verify", "--man=no", f"--root={rootfs}", UNIT.name], check=False)
            said = (verify.stdout + verify.stderr).strip()
            expect(verify.returncode == 0 and not said, "systemd-analyze verify found problems", said)
            security = sh([analyze, "security", "--offline=true", f"--root={rootfs}", UNIT.name], check=False)
            score = next((line for line in security.stdout.splitlines() if "Overall exposure" in line), "")
            expect(security.returncode == 0, "systemd-analyze security failed", security.stdout + security.stderr)
            step.notes.append(f"verify: clean against the image's root; {score.strip().lstrip('→ ')}")
        finally:
            sh(["buildah", "umount", container], check=False)
    init = Path("/proc/1/comm").read_text().strip()
    if init != "systemd":
        step.notes.append(f"systemd-run not tried: PID 1 is {init!r}, not systemd")


# --- the lane ------------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rebuild", action="store_true", help="make the base root again (mmdebstrap)")
    parser.add_argument("--steps", default=",".join(STEPS), help=f"comma-separated, of {', '.join(STEPS)}")
    parser.add_argument("--keep", action="store_true", help="keep the steps' folders in the work folder")
    args = parser.parse_args()
    chosen = [name for name in args.steps.split(",") if name]
    unknown = sorted(set(chosen) - set(STEPS))
    if unknown:
        parser.error(f"unknown step(s): {', '.join(unknown)}")
    WORK.mkdir(parents=True, exist_ok=True)
    actions: dict[str, Callable[[Step], None]] = {
        "base": lambda step: step_base(step, args.rebuild),
        "build": step_build,
        "check": step_check,
        "cycle": step_cycle,
        "rooms": step_rooms,
        "unit": step_unit,
    }
    done: list[Step] = []
    for name in STEPS:
        if name not in chosen:
            continue
        step = Step(name)
        started = time.monotonic()
        try:
            actions[name](step)
            step.ok = True
        except (LaneFailure, subprocess.TimeoutExpired, AssertionError) as exc:
            step.notes.append(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            print(f"lane: {name} FAILED: {exc}", file=sys.stderr)
        step.seconds = time.monotonic() - started
        print(f"lane: {name} {'ok' if step.ok else 'FAILED'} in {step.seconds:.0f} s: {'; '.join(step.notes)}")
        done.append(step)
        if not step.ok:
            break
    if not args.keep:
        shutil.rmtree(WORK / "steps", ignore_errors=True)
    print("\n| step | result | seconds | what it showed |\n|---|---|---|---|")
    for step in done:
        print(f"| {step.name} | {'ok' if step.ok else 'FAILED'} | {step.seconds:.0f} | {'; '.join(step.notes)} |")
    passed = sum(step.ok for step in done)
    print(f"{passed} passed, {len(done) - passed} failed")
    return 0 if passed == len(done) == len(chosen) else 1


if __name__ == "__main__":
    raise SystemExit(main())
