"""A conformance-suite package of our own making, shaped like the real one, and a tiny HTTP server to run it on.

The real `@modelcontextprotocol/conformance` ships `dist/index.js` (its `bin`, an ES module) and
`requirements/<set>.yaml`, and is run as `node dist/index.js server --url URL --requirements SET -o DIR`. This one
does what the watcher needs of it: it asks the server one MCP request and writes one
`server-<scenario>-<stamp>/checks.json` per scenario its set lists (SUCCESS when the server answered), and
`reached.json` (what it asked and what came back). Code given as `prelude` runs first (the tests put attacks
there, tests/reliability/helpers.py); a `postinstall` script makes npm run it at install.

    write_suite(folder, "1.0.0", {"2025-11-25": ["server-reach"]})   # the package's tree
    pack(folder, dest)                                                 # a real `npm pack` tarball
    write_node_server(folder)                                          # server.js: node server.js --port N
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from watcher.boundary import toolchain

PACKAGE = "@modelcontextprotocol/conformance"
STAMP = "2026-12-01T10-00-00-000Z"

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
{prelude}
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


def write_suite(
    folder: Path, version: str, sets: dict[str, list[str]], *, prelude: str = "", postinstall: str | None = None
) -> Path:
    """The package's tree (as `npm pack` takes it, or as npm installs it under node_modules/)."""
    (folder / "dist").mkdir(parents=True, exist_ok=True)
    (folder / "requirements").mkdir(exist_ok=True)
    (folder / "dist" / "index.js").write_text(CLI_JS.format(prelude=prelude, stamp=STAMP), encoding="utf-8")
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
    if postinstall is not None:
        (folder / "postinstall.cjs").write_text(postinstall, encoding="utf-8")
        manifest["files"] = ["dist", "requirements", "postinstall.cjs"]
        manifest["scripts"] = {"postinstall": "node postinstall.cjs"}
    (folder / "package.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return folder


def pack(folder: Path, dest: Path, timeout: float = 120) -> Path:
    """A real `npm pack` tarball of the package's tree."""
    dest.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [*toolchain.npm_command(), "pack", "--silent", "--pack-destination", str(dest)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=timeout,
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


def write_node_server(folder: Path) -> Path:
    """`server.js` in `folder`: an HTTP server on Node's own http that answers every request (its name from
    SERVER_NAME, and the Host header it was sent). Run as `node server.js --port N`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "server.js").write_text(NODE_SERVER_JS, encoding="utf-8")
    return folder / "server.js"
