"""A team file proposed for a repository that has none: what detection found in it (language, SDK and version,
the likely start command) and a `.mcp-watcher.yaml` ready to commit as it is. The repository's team gets it
once, in one onboarding message, and the status page shows it until a file appears.

The proposal writes only what detection cannot know (name, folder, transport, start and, for languages the
watcher does not build itself, the build's `prepare` steps); language, SDK and baseline version are left to the
team-file loader's own detection, so the proposal and the loader never disagree about them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

import yaml
from typing_extensions import TypedDict

from watcher.config import WatcherConfig
from watcher.core import untrusted
from watcher.core.configfile import NAME_PATTERN
from watcher.core.errors import UntrustedInputError
from watcher.core.store import Store
from watcher.core.store_schema import Notice
from watcher.notify import keys
from watcher.notify.blocks import Mrkdwn, escape, section
from watcher.repos.detect import Detection, DetectionEntry, ManifestError, Read, detect
from watcher.repos.teamfile import FILE_NAME
from watcher.suites.source.checkout import display_url

if TYPE_CHECKING:
    from watcher.repos.sync import RepoState

DOC = "docs/configuration.md#team-repositories-repos-and-the-team-file"
MAX_FOLDERS = 20
"""Top-level folders looked into for a manifest when the root has none (a monorepo's server folder)."""
_NAME = re.compile(NAME_PATTERN)


@dataclass(frozen=True)
class Proposal:
    name: str
    folder: str
    """The server's folder in the repository ("": its root)."""
    detection: DetectionEntry | None
    start: list[str]
    transport: str
    prepare: list[list[str]]
    text: str
    """The proposed `.mcp-watcher.yaml`, ready to commit."""

    def summary(self) -> str:
        """What detection found, in one line."""
        found = self.detection
        if not found:
            return "no manifest names an MCP SDK: the file must say language, sdk and baseline_sdk_version"
        version = found.get("version") or "no version"
        spec = f" (from {found['specifier']})" if found.get("specifier") else ""
        return (
            f"{found['language']}, SDK {found['package']} {version}{spec} in {found['manifest']}; "
            f"likely start: {' '.join(self.start)}"
        )


class ProposedServer(TypedDict, total=False):
    """The one server of a proposed team file, as written to its YAML (only what detection cannot know, and the
    placeholders a team fills in when no manifest names an SDK)."""

    name: str
    path: str
    transport: str
    start: list[str]
    prepare: list[list[str]]
    language: str
    sdk: str
    baseline_sdk_version: str


def propose(repository: str, files: list[str], read: Read, taken: set[str]) -> Proposal:
    """The team file for a repository called ``repository`` without one, from its ``files`` at one commit."""
    folder, found = _find_manifest(files, read)
    name = _free_name(repository, taken)
    language = found.server_language if found else "other"
    start, prepare = _start(found, folder, files, read)
    entry: ProposedServer = {"name": name}
    if folder:
        entry["path"] = folder
    entry["transport"] = "stdio"
    entry["start"] = start
    if language == "other" and prepare:
        entry["prepare"] = prepare
    if not found:
        entry["language"], entry["sdk"], entry["baseline_sdk_version"] = "other", "SDK-NAME", "VERSION"
    head = (
        f"# {FILE_NAME}: proposed by mcp-watcher from what it found in this repository; commit it as it is or\n"
        "# change it. Left out, language, sdk and baseline_sdk_version are detected from the manifest.\n"
        '# A server over HTTP: transport: http, and a start command that listens on "{port}".\n'
    )
    text = head + yaml.safe_dump({"servers": [entry]}, sort_keys=False, default_flow_style=None, width=110)
    return Proposal(name, folder, found.as_dict() if found else None, start, "stdio", prepare, text)


def _find_manifest(files: list[str], read: Read) -> tuple[str, Detection | None]:
    try:
        found = detect(files, read, "")
    except ManifestError:
        found = None
    if found:
        return "", found
    folders = sorted({f.split("/", 1)[0] for f in files if "/" in f and not f.startswith(".")})[:MAX_FOLDERS]
    for folder in folders:
        try:
            found = detect(files, read, folder)
        except ManifestError:
            continue
        if found:
            return folder, found
    return "", None


def _free_name(repository: str, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_.-]+", "-", PurePosixPath(repository.rstrip("/")).name.removesuffix(".git"))
    base = base.strip("-.") or "server"
    if not _NAME.fullmatch(base):
        base = "server-" + re.sub(r"[^a-z0-9-]+", "", base.lower())[:40] or "server"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    return name


def _start(found: Detection | None, folder: str, files: list[str], read: Read) -> tuple[list[str], list[list[str]]]:
    """The likely start command (and, for languages the watcher does not build, the build's steps)."""
    prefix = f"{folder}/" if folder else ""
    here = {f[len(prefix) :] for f in files if f.startswith(prefix)}
    language = found.language if found else ""
    if language == "python":
        return _python_start(read(prefix + "pyproject.toml"), here), []
    if language == "typescript":
        return _node_start(read(prefix + "package.json"), here), []
    builds: dict[str, tuple[list[str], list[list[str]]]] = {
        "go": (["./server"], [["go", "get", "{package}@{version}"], ["go", "build", "-o", "server", "."]]),
        "rust": (["cargo", "run", "--release", "--offline"], [["cargo", "build", "--release"]]),
        "csharp": (["dotnet", "run", "--no-build"], [["dotnet", "build"]]),
        "java": (["java", "-jar", "target/server.jar"], [["mvn", "-q", "package"]]),
        "kotlin": (["java", "-jar", "build/libs/server.jar"], [["gradle", "-q", "build"]]),
        "ruby": (["bundle", "exec", "ruby", "server.rb"], [["bundle", "install"]]),
        "php": (["php", "server.php"], [["composer", "install"]]),
    }
    return builds.get(language, (["./server"], [["true"]]))


def _python_start(pyproject: str | None, here: set[str]) -> list[str]:
    if pyproject:
        try:
            scripts = (
                untrusted.toml_document(pyproject, "pyproject.toml", limits=untrusted.MANIFEST).get("project") or {}
            ).get("scripts") or {}
        except UntrustedInputError:
            scripts = {}
        if isinstance(scripts, dict) and scripts:
            return [str(next(iter(scripts)))]
    for name in ("server.py", "main.py", "app.py", "__main__.py"):
        if name in here:
            return ["python", name]
    package = next((p.split("/")[-2] for p in sorted(here) if p.endswith("/__main__.py") and p.count("/") <= 2), None)
    return ["python", "-m", package] if package else ["python", "server.py"]


def _node_start(package_json: str | None, here: set[str]) -> list[str]:
    try:
        data = untrusted.json_document(package_json or "{}", "package.json", limits=untrusted.MANIFEST)
    except ValueError:
        data = {}
    if not isinstance(data, dict):
        data = {}
    bin_entry = data.get("bin")
    if isinstance(bin_entry, dict) and bin_entry:
        bin_entry = next(iter(bin_entry.values()))
    for candidate in (bin_entry, data.get("main")):
        if isinstance(candidate, str) and candidate:
            return ["node", candidate.removeprefix("./")]
    for name in ("index.js", "server.js", "src/index.js", "dist/index.js"):
        if name in here:
            return ["node", name]
    return ["node", "index.js"]


def queue_proposals(config: WatcherConfig, store: Store, states: list[RepoState]) -> list[str]:
    """One onboarding message per repository without a team file, to its team: what detection found and the
    file proposed (once: a second pass, or the file removed later, sends nothing again). Returns the keys."""
    queued = []
    for state in states:
        if state.has_file or not state.proposal or state.error or not state.commit:
            continue
        team = config.team(state.team)
        text, blocks = proposal_text(state, state.proposal)
        if store.enqueue(Notice(keys.repo_proposal(state.git, team.name), team.name, team.slack_channel,
                                "repo-proposal", text, blocks)):  # fmt: skip
            queued.append(keys.repo_proposal(state.git, team.name))
    return queued


def proposal_text(state: RepoState, proposal: Proposal) -> tuple[Mrkdwn, list[dict[str, Any]]]:
    repo = display_url(state.git)
    head = (
        f"mcp-watcher reads {repo} ({state.ref} @ {(state.commit or '?')[:12]}) for team {state.team}, "
        f"but it has no {FILE_NAME}: none of its servers is watched yet"
    )
    found = f"Found: {proposal.summary()}"
    how = f"Commit this as {FILE_NAME} at the repository's root to be watched (every key: {DOC}):"
    text = escape("\n".join([head, found, how, proposal.text]))
    blocks = [section(Mrkdwn("*{}*").format(head)), section(escape(found)), section(escape(how)),
              section(Mrkdwn("```{}```").format(proposal.text))]  # fmt: skip
    return text, blocks
