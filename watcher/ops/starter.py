"""`mcp-watcher init`: a first configuration, written where the user stands, for the installed product.

The file goes to `config/watcher.yaml` below the chosen folder (the path every command reads by default,
so `mcp-watcher run` there needs no `--config`), and its paths are relative to its own folder, as every
config's are: `../state/…` is the `state/` folder beside `config/`, wherever mcp-watcher is started from.
It watches every official SDK and names one team with no servers yet; the comments say what to fill in.
"""

from __future__ import annotations

from pathlib import Path

from watcher.core.configfile import DEFAULT_CONFIG

SDK_LINES = """\
  - {name: python, registry: pypi, package: mcp}
  - {name: typescript, registry: npm, package: "@modelcontextprotocol/sdk"}
  - {name: typescript-server, registry: npm, package: "@modelcontextprotocol/server"}
  - {name: typescript-client, registry: npm, package: "@modelcontextprotocol/client"}
  - {name: typescript-core, registry: npm, package: "@modelcontextprotocol/core"}
  - {name: typescript-node, registry: npm, package: "@modelcontextprotocol/node"}
  - {name: typescript-express, registry: npm, package: "@modelcontextprotocol/express"}
  - {name: csharp, registry: nuget, package: ModelContextProtocol}
  - {name: csharp-aspnetcore, registry: nuget, package: ModelContextProtocol.AspNetCore}
  - {name: csharp-core, registry: nuget, package: ModelContextProtocol.Core}
  - {name: go, registry: goproxy, package: github.com/modelcontextprotocol/go-sdk}
  - {name: rust, registry: crates, package: rmcp}
  - {name: java, registry: maven, package: "io.modelcontextprotocol.sdk:mcp"}
  - {name: kotlin, registry: maven, package: "io.modelcontextprotocol:kotlin-sdk"}
  - {name: ruby, registry: rubygems, package: mcp}
  - {name: php, registry: packagist, package: mcp/sdk}
  - {name: swift, registry: github, package: modelcontextprotocol/swift-sdk}
"""
"""Every official MCP SDK, as the shipped config/watcher.yaml lists them (a test keeps the two the same)."""

STARTER = f"""\
# mcp-watcher's configuration, written by `mcp-watcher init`. Every key: docs/configuration.md in
# mcp-watcher's repository. Relative paths in this file resolve against this file's folder, wherever
# mcp-watcher is started from: ../state is the state folder beside this config/ folder.
state: ../state/watcher.db
suites:
  runs_dir: ../state/runs
  envs_dir: ../state/envs
  git_cache_dir: ../state/git

# Every official MCP SDK; drop the ones no team uses. `url:` on an entry reads a mirror instead.
sdks:
{SDK_LINES}
# Your teams: the Slack channel each one's notices go to, and the SDKs it cares about.
teams:
  - name: my-team
    slack_channel: "#my-team-mcp"
    sdks: [python, typescript]
    servers: []                       # the names of its servers below

# Your servers, each run against every new pre-release of its SDK. For example (paths relative to this file):
#   - name: my-server
#     team: my-team
#     sdk: python
#     language: python
#     path: ../my-server                # its code; or source: {{git: https://…, ref: main}}
#     transport: http
#     start: ["python", "-m", "my_server", "--port", "{{port}}"]
#     baseline_sdk_version: "2.3.0"
servers: []

# The Slack bot token comes from the environment (or a file: slack.token_file), never from this file.
# Without one, notices are printed to the console and recorded.
slack:
  token_env: SLACK_BOT_TOKEN
  webhook_env: SLACK_WEBHOOK_URL
"""


class StarterExists(Exception):
    """The file is there already: `init` never overwrites a configuration without --force."""


def write_starter(folder: Path, force: bool = False) -> Path:
    """Writes the starter config below `folder` (config/watcher.yaml) and the empty state folder beside it."""
    path = folder / DEFAULT_CONFIG
    if path.exists() and not force:
        raise StarterExists(f"{path} exists already (--force replaces it)")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(STARTER, encoding="utf-8")
    (path.parent / ".." / "state").resolve().mkdir(parents=True, exist_ok=True)
    return path
