"""The repository state as the store keeps it (key-value `repo:<git>`) is loaded through its types: a state
written by an earlier version loads (and is saved back the same), a field of another type is a StateError
naming it."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from watcher.core.errors import StateError
from watcher.core.store import Store
from watcher.repos.proposal import Proposal
from watcher.repos.settings import TeamRepo
from watcher.repos.sync import RepoState

# As the code at 5e9fc10 stored them after its first pass over two repositories (one with a team file, one
# without: its proposal), taken from a real pass (tests/repos' fixtures); only the paths are shortened.
WITH_FILE = {
    "checked": "2026-12-02T16:16:38Z",
    "commit": "6140c84b2061331d642d7c59d3f55171f777873b",
    "detections": {
        "books": {
            "language": "python",
            "manifest": "server/pyproject.toml",
            "package": "mcp",
            "registry": "pypi",
            "resolved": None,
            "specifier": None,
            "version": "1.26.0",
        }
    },
    "error": None,
    "error_commit": None,
    "git": "/srv/git/books-repo",
    "has_file": True,
    "lines": {"books": 2},
    "onboarded": False,
    "onboarding_runs": ["books@1.26.0"],
    "overridden": {"books": []},
    "proposal": None,
    "ref": "HEAD",
    "refused": {},
    "seen": True,
    "servers": [
        {
            "accept": None,
            "baseline_sdk_version": "1.26.0",
            "baseline_snapshot": None,
            "client_profiles": ["typical", "none"],
            "contract": {"levels": {}},
            "env": {},
            "env_files": {},
            "env_from": [],
            "evaluation": None,
            "executor": {"kind": "local"},
            "expected_failures": None,
            "http_path": "/mcp",
            "language": "python",
            "name": "books",
            "path": None,
            "prepare": [],
            "requirements": ["2026-07-28"],
            "sdk": "python",
            "sdk_package": "mcp",
            "source": {
                "git": "/srv/git/books-repo",
                "ref": "6140c84b2061331d642d7c59d3f55171f777873b",
                "subdir": "server",
            },
            "start": ["python", "server.py"],
            "team": "books",
            "timeouts": {"install": 600.0, "snapshot": 120.0, "start": 60.0, "suite": 600.0},
            "token_env": None,
            "token_file": None,
            "transport": "http",
        }
    ],
    "team": "books",
}

WITHOUT_FILE = {
    "checked": "2026-12-02T16:16:38Z",
    "commit": "75c10f86c915c5a9a0f6fdaf255552393c70798b",
    "detections": {},
    "error": None,
    "error_commit": None,
    "git": "/srv/git/books-mcp",
    "has_file": False,
    "lines": {},
    "onboarded": False,
    "onboarding_runs": [],
    "overridden": {},
    "proposal": {
        "detection": {
            "language": "python",
            "manifest": "pyproject.toml",
            "package": "mcp",
            "registry": "pypi",
            "specifier": ">=2",
            "version": "2",
        },
        "folder": "",
        "name": "books-mcp",
        "prepare": [],
        "start": ["library-server"],
        "text": "# .mcp-watcher.yaml: proposed by mcp-watcher from what it found in this repository; "
        "commit it as it is or\n"
        "# change it. Left out, language, sdk and baseline_sdk_version are detected from the "
        "manifest.\n"
        '# A server over HTTP: transport: http, and a start command that listens on "{port}".\n'
        "servers:\n"
        "- name: books-mcp\n"
        "  transport: stdio\n"
        "  start: [library-server]\n",
        "transport": "stdio",
    },
    "ref": "HEAD",
    "refused": {},
    "seen": False,
    "servers": [],
    "team": "books",
}


def _store(tmp_path: Path, *states: dict[str, object]) -> Store:
    store = Store(tmp_path / "state" / "watcher.db")
    for state in states:
        store.set_kv(f"repo:{state['git']}", state)
    return store


def _repo(git: object, ref: str = "HEAD") -> TeamRepo:
    return TeamRepo(git=str(git), team="books", ref=ref)


def test_a_state_stored_by_the_earlier_version_loads_typed_and_is_saved_back_the_same(tmp_path: Path):
    store = _store(tmp_path, WITH_FILE, WITHOUT_FILE)
    read = RepoState.load(store, _repo(WITH_FILE["git"]))
    [server] = read.servers
    assert (server["name"], server["language"], server["sdk"], server["baseline_sdk_version"]) == (
        "books",
        "python",
        "python",
        "1.26.0",
    )
    assert server["requirements"] == ["2026-07-28"] and server.get("sdk_package") == "mcp"
    [model] = read.server_models()  # the fields no message reads are kept as stored
    assert model.source is not None and model.source.subdir == "server" and model.timeouts.install == 600.0
    assert read.detections["books"] == WITH_FILE["detections"]["books"]
    assert read.onboarding_runs == ["books@1.26.0"] and read.seen and not read.onboarded and read.proposal is None

    proposed = RepoState.load(store, _repo(WITHOUT_FILE["git"]))
    assert isinstance(proposed.proposal, Proposal) and proposed.proposal.start == ["library-server"]
    assert proposed.proposal.detection is not None and proposed.proposal.detection["specifier"] == ">=2"
    assert proposed.proposal.summary().startswith("python, SDK mcp 2 (from >=2) in pyproject.toml")

    for state, stored in ((read, WITH_FILE), (proposed, WITHOUT_FILE)):
        state.save(store)
        assert store.get_kv(f"repo:{stored['git']}") == stored


def test_a_key_no_longer_known_is_left_out_and_a_field_not_stored_takes_its_default(tmp_path: Path):
    old = {k: v for k, v in WITH_FILE.items() if k not in ("refused", "onboarded", "onboarding_runs")}
    store = _store(tmp_path, {**old, "retired_field": [1, 2]})
    read = RepoState.load(store, _repo(WITH_FILE["git"], ref="main"))
    assert read.refused == {} and read.onboarded is False and read.onboarding_runs == []
    assert read.ref == "main" and not hasattr(read, "retired_field")  # the configured ref, not the stored one
    assert RepoState.load(store, _repo("/srv/git/never-read")) == RepoState(git="/srv/git/never-read", team="books")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s["servers"][0].update(name=7), "servers.0.name: Input should be a valid string"),
        (lambda s: s["servers"][0].pop("baseline_sdk_version"), "servers.0.baseline_sdk_version: Field required"),
        (lambda s: s["detections"]["books"].update(manifest=None), "detections.books.manifest: Input should be"),
        (lambda s: s.update(proposal={"name": "books"}), "proposal.folder: Field required"),
        (lambda s: s.update(lines={"books": "two"}), "lines.books: Input should be a valid integer"),
    ],
)
def test_a_malformed_stored_state_is_a_state_error_naming_its_field(tmp_path: Path, change, message: str):
    broken = copy.deepcopy(WITH_FILE)
    change(broken)
    store = _store(tmp_path, broken)
    with pytest.raises(StateError) as caught:
        RepoState.load(store, _repo(WITH_FILE["git"]))
    assert str(caught.value).startswith(f"state repo:{WITH_FILE['git']}: {message}")


def test_a_stored_state_that_is_no_object_is_a_state_error(tmp_path: Path):
    store = Store(tmp_path / "state" / "watcher.db")
    store.set_kv("repo:/srv/git/books-repo", ["servers"])
    with pytest.raises(StateError, match="a repository's state is a JSON object, not list"):
        RepoState.load(store, _repo("/srv/git/books-repo"))
