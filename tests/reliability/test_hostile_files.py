"""Hostile files, each where the attack happens: alias bombs, bare scalars, oversize and deep documents,
links out to a "token file", XML entity bombs and external entities, in every kind of file the watcher reads
from outside (watcher/core/untrusted.py is the one door).

Each test first shows that its hostile file was really read there (the error names the file, its commit and
the line the parser stopped at, a mark only the parser can give), then that nothing was reached: no
traceback, the token's text nowhere, memory flat, and the other team's work as it should be.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.evaluation.helpers import write_config as eval_config
from tests.repos.helpers import TEAM_FILE, central_config, change, team_repo
from tests.suites.helpers import git, head
from watcher.config import LoadedConfig
from watcher.contract.accept import AcceptError, load_accept_file
from watcher.core import untrusted
from watcher.core.errors import UntrustedInputError
from watcher.core.store import Store
from watcher.evaluation.run import run_evaluation
from watcher.notify.blocks import escape
from watcher.readiness import suite as readiness_suite
from watcher.repos import sync as sync_module
from watcher.repos.sync import sync_repos
from watcher.suites.judge.conformance import ConformanceError, ConformanceTool, collect_checks, load_requirement_set

ROOT = Path(__file__).resolve().parents[2]
TOKEN_TEXT = "xoxb-0000-hostile-file-must-never-echo-this"
SELF_ALIAS = "servers: &a [*a]\n"
"""17 bytes: a list that holds itself (a RecursionError in the old line walker)."""


def laughs(top: str = "servers") -> str:
    """Nine levels of nine aliases: 9**9 values from under 400 bytes (past 1.5 GiB in the old loader)."""
    lines = [f"{top}:", '  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"  {name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\n"


XML_LAUGHS = (
    '<?xml version="1.0"?>\n<!DOCTYPE project [\n <!ENTITY a "lollollollollollollollollollol">\n'
    + "".join(f' <!ENTITY {n} "{("&" + p + ";") * 10}">\n' for p, n in zip("abcdefgh", "bcdefghi", strict=True))
    + "]>\n<project><dependencies><dependency><groupId>io.modelcontextprotocol.sdk</groupId>"
    "<artifactId>mcp</artifactId><version>&i;</version></dependency></dependencies></project>\n"
)


def xml_external(token: Path) -> str:
    return (
        f'<?xml version="1.0"?>\n<!DOCTYPE project [<!ENTITY t SYSTEM "file://{token}">]>\n'
        "<project><dependencies><dependency><groupId>io.modelcontextprotocol.sdk</groupId>"
        "<artifactId>mcp</artifactId><version>&t;</version></dependency></dependencies></project>\n"
    )


@pytest.fixture
def token(tmp_path: Path) -> Path:
    """A secret file outside every root the watcher reads under."""
    path = tmp_path / "secrets" / "slack-token"
    path.parent.mkdir()
    path.write_text(TOKEN_TEXT + "\n")
    return path


# --- memory: the bombs in a child process, peak RSS against a benign document of the same size ----------

_MEASURE = """
import sys
from watcher.core import untrusted
def peak():  # this process's peak resident set in KiB, since its exec (ru_maxrss would carry the parent's)
    status = open("/proc/self/status").read().split("VmHWM:")[1]
    return int(status.split()[0])
benign, hostile = sys.argv[1], sys.argv[2]
untrusted.yaml_document(benign, "benign.yaml", limits=untrusted.TEAM_FILE)
before = peak()
try:
    untrusted.yaml_document(hostile, "hostile.yaml", limits=untrusted.TEAM_FILE)
    print("parsed", before, peak())
except untrusted.UntrustedInputError as exc:
    print("refused", before, peak(), str(exc))
"""


@pytest.mark.parametrize("bomb", [SELF_ALIAS, laughs()], ids=["17-byte self alias", "billion laughs"])
def test_an_alias_bomb_is_refused_with_its_line_and_memory_stays_flat(bomb: str) -> None:
    benign = "servers:\n" + "".join(f"  - name: s{i}\n" for i in range(len(bomb) // 14 + 1))
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, benign, bomb], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    outcome, before, after, message = done.stdout.split(" ", 3)
    assert outcome == "refused" and message.startswith("hostile.yaml:")
    assert "an anchor (&a) is refused" in message  # the parser stopped at the bomb's first anchor
    assert (int(after) - int(before)) / 1024 < 8, f"peak RSS grew {(int(after) - int(before)) / 1024:.1f} MiB"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (SELF_ALIAS, "f.yaml:1: an anchor (&a) is refused"),
        ("servers:\n  - &x {name: a}\n  - *x\n", "f.yaml:2: an anchor (&x) is refused"),
        ("servers: [*nowhere]\n", "f.yaml:1: an alias (*nowhere) is refused"),
        ("servers: " + "[" * 70 + "]" * 70 + "\n", "f.yaml:1: nested deeper than 64 levels"),
        ("just text\n", "f.yaml:1: expected a mapping at the top level, found a single text value"),
        ("- a\n", "f.yaml:1: expected a mapping at the top level, found a list"),
        ("2027-01-01\n", "f.yaml:1: expected a mapping at the top level, found a date"),
        ("? [a, b]\n: c\n", "f.yaml:1: a mapping key must be a single value"),
        ("a: 1\na: 2\n", "f.yaml:2: duplicate key 'a' (first given on line 1)"),
        ("a: !!python/object:os.system x\n", "f.yaml:1: not valid YAML"),
    ],
)
def test_the_yaml_door_refuses_with_file_and_line(text: str, expected: str) -> None:
    with pytest.raises(UntrustedInputError) as caught:
        untrusted.yaml_document(text, "f.yaml", limits=untrusted.TEAM_FILE)
    assert str(caught.value).startswith(expected)


def test_the_operators_configuration_takes_aliases_as_pyyaml_writes_them_but_no_bomb(tmp_path: Path) -> None:
    import yaml

    from watcher.config import parse_config

    shared = ["2026-07-28"]
    written = yaml.safe_dump(
        {
            "sdks": [{"name": "python", "registry": "pypi", "package": "mcp"}],
            "teams": [{"name": "books", "slack_channel": "#b"}],
            "servers": [
                {"name": n, "team": "books", "sdk": "python", "language": "python", "path": ".", "start": ["x"]}
                | {"baseline_sdk_version": "2.3.0", "requirements": shared}
                for n in "ab"
            ],
        }
    )
    assert "&id001" in written and "*id001" in written  # PyYAML shares the list through an anchor
    assert [s.requirements for s in parse_config(written, "w.yaml").servers] == [shared, shared]
    for bomb, expected in [
        (SELF_ALIAS, "w.yaml:1: an alias refers to a value that holds it; refused"),
        (laughs(), "w.yaml:6: more than 50,000 values (aliases expanded); refused"),
    ]:
        with pytest.raises(UntrustedInputError) as caught:
            parse_config(bomb, "w.yaml")
        assert str(caught.value) == expected


def test_caps_on_size_nodes_and_json_depth() -> None:
    with pytest.raises(UntrustedInputError, match=r"over the limit of 262,144 bytes for the team file"):
        untrusted.yaml_document("a: b\n" * 60_000, "f.yaml", limits=untrusted.TEAM_FILE)
    with pytest.raises(UntrustedInputError, match=r":\d+: more than 50,000 values"):
        untrusted.yaml_document("[" + "1," * 60_000 + "1]", "f.yaml", limits=untrusted.TASK_FILE)
    with pytest.raises(UntrustedInputError, match=r"^a.json: nested deeper than 128 levels"):
        untrusted.answer_json(b"[" * 100_000 + b"]" * 100_000, "a.json")  # orjson and json both refuse
    with pytest.raises(UntrustedInputError, match=r"^a.json: nested deeper than 128 levels"):
        untrusted.answer_json(b"[" * 200 + b"]" * 200, "a.json")
    with pytest.raises(UntrustedInputError, match=r"^a.json:1: expected a mapping at the top level, found a list"):
        untrusted.answer_json(b"[]", "a.json", expect=dict)
    assert untrusted.answer_json(b'{"n": NaN}', "a.json")["n"] != 0  # what json reads beyond orjson, still read


def test_files_are_read_under_their_root_without_following_any_link(tmp_path: Path, token: Path) -> None:
    root = tmp_path / "repo"
    (root / "conf").mkdir(parents=True)
    (root / "conf" / "real.yaml").write_text("a: 1\n")
    (root / "conf" / "token.yaml").symlink_to(token)
    (root / "linked").symlink_to(token.parent)
    os.mkfifo(root / "conf" / "fifo.yaml")
    assert untrusted.load_yaml(root, "conf/real.yaml", limits=untrusted.ACCEPT_FILE)[0] == {"a": 1}
    for path, problem in [
        ("conf/token.yaml", "is a symbolic link; links are never followed"),
        ("linked/slack-token", "is a symbolic link (or not a folder); links are never followed"),
        ("conf/fifo.yaml", "is not a regular file; refused"),  # opened without waiting for a writer
        ("../secrets/slack-token", "'..' leaves its folder; refused"),
        (str(token), "not inside"),
    ]:
        with pytest.raises(UntrustedInputError) as caught:
            untrusted.load_yaml(root, path, limits=untrusted.ACCEPT_FILE)
        assert problem in str(caught.value) and TOKEN_TEXT not in str(caught.value)


# --- team files: the sync job, two real repositories -----------------------------------------------------


HOSTILE_TEAM_FILES: dict[str, tuple[dict[str, str | bytes | None], str]] = {
    "self alias": ({".mcp-watcher.yaml": SELF_ALIAS}, ".mcp-watcher.yaml:1: an anchor (&a) is refused"),
    "billion laughs": ({".mcp-watcher.yaml": laughs()}, ".mcp-watcher.yaml:2: an anchor (&a) is refused"),
    "bare scalar": (
        {".mcp-watcher.yaml": "hello\n"},
        ".mcp-watcher.yaml:1: expected a mapping with a `servers` list at the top level, found a single text value",
    ),
    "oversize": ({".mcp-watcher.yaml": "# x\n" * 70_000}, ".mcp-watcher.yaml: is 280,000 bytes, over the limit"),
    "not UTF-8": ({".mcp-watcher.yaml": b"servers: \xff\xfe\n"}, ".mcp-watcher.yaml: not UTF-8 text (byte 9)"),
    "XML entity bomb": (
        {"server/pom.xml": XML_LAUGHS, "server/pyproject.toml": None},  # the pom is the manifest read
        ".mcp-watcher.yaml:2: servers.0: server/pom.xml: cannot be parsed: has a DTD",
    ),
}


def two_teams(tmp_path: Path) -> tuple[Path, Path, LoadedConfig]:
    """Team books's repository, listed first, then team infra's: the pass reads books, then infra."""
    books = team_repo(tmp_path / "books-repo", "books")
    infra = team_repo(tmp_path / "infra-repo", "gateway")
    loaded = central_config(tmp_path, [{"git": str(books), "team": "books"}, {"git": str(infra), "team": "infra"}])
    return books, infra, loaded


def _write(repo: Path, files: dict[str, str | bytes | None]) -> str:
    """Write (None: delete) and commit; returns the commit."""
    for name, content in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if content is None:
            path.unlink()
        else:
            path.write_bytes(content if isinstance(content, bytes) else content.encode())
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "--message", "hostile")
    return head(repo)


@pytest.mark.parametrize("case", sorted(HOSTILE_TEAM_FILES))
def test_a_hostile_team_file_is_its_teams_error_and_the_next_repository_is_still_read(
    tmp_path: Path, case: str
) -> None:
    books, infra, loaded = two_teams(tmp_path)
    store = Store(tmp_path / "state" / "watcher.db")
    good = head(books)
    sync_repos(loaded, store)
    files, expected = HOSTILE_TEAM_FILES[case]
    hostile = _write(books, files)
    change(infra, {".mcp-watcher.yaml": TEAM_FILE.format(name="gateway").replace("2026-07-28", "2025-11-25")})

    result = sync_repos(loaded, store)

    books_state = next(s for s in result.repos if s.team == "books")
    assert books_state.error is not None and books_state.error_commit == hostile
    assert f"@{hostile[:12]}:{expected}" in books_state.error  # the hostile file at that commit was read
    assert "Traceback" not in books_state.error and "RecursionError" not in books_state.error
    kept = result.config.server("books")  # the last good servers stay
    assert kept.source is not None and kept.source.ref == good
    assert result.config.server("gateway").requirements == ["2025-11-25"]  # the next team's change is read
    queued = [n for n in store.outbox() if n["kind"] == "repo-config-error"]
    said = str(escape(expected.split(":", 1)[1][:30]))  # as Slack gets it: our text is escaped (`&` → `&amp;`)
    assert [n["team"] for n in queued] == ["books"] and said in queued[0]["text"]


def test_a_team_file_that_is_a_link_and_an_external_entity_in_a_manifest_reach_no_token(
    tmp_path: Path, token: Path
) -> None:
    books, infra, loaded = two_teams(tmp_path)
    store = Store(tmp_path / "state" / "watcher.db")
    (books / ".mcp-watcher.yaml").unlink()
    (books / ".mcp-watcher.yaml").symlink_to(token)
    linked = _write(books, {})
    assert git(books, "ls-tree", "HEAD", ".mcp-watcher.yaml").startswith("120000")
    first = sync_repos(loaded, store)
    error = next(s for s in first.repos if s.team == "books").error or ""
    assert f"@{linked[:12]}:.mcp-watcher.yaml: is a symbolic link" in error
    assert first.config.server("gateway")

    (books / ".mcp-watcher.yaml").unlink()
    external = _write(
        books, {".mcp-watcher.yaml": TEAM_FILE.format(name="books"), "server/pom.xml": xml_external(token)}
    )
    (books / "server" / "pyproject.toml").unlink()
    external = _write(books, {})
    second = sync_repos(loaded, store)
    error = next(s for s in second.repos if s.team == "books").error or ""
    assert f"@{external[:12]}:.mcp-watcher.yaml:2: servers.0: server/pom.xml: cannot be parsed: has a DTD" in error
    assert second.config.server("gateway")
    everything = json.dumps([s.__dict__ for s in second.repos]) + json.dumps(store.outbox(), default=str)
    assert TOKEN_TEXT not in everything


def test_an_unforeseen_failure_reading_one_repository_does_not_stop_the_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    books, infra, loaded = two_teams(tmp_path)
    real = sync_module.parse_team_file
    seen: list[str] = []

    def failing(text: str, **kwargs: object) -> object:
        seen.append(str(kwargs["team"]))
        if kwargs["team"] == "books":
            raise RecursionError("maximum recursion depth exceeded")
        return real(text, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sync_module, "parse_team_file", failing)
    result = sync_repos(loaded, Store(tmp_path / "state" / "watcher.db"))
    assert seen == ["books", "infra"]
    books_state = next(s for s in result.repos if s.team == "books")
    assert books_state.error == ".mcp-watcher.yaml could not be read: RecursionError: maximum recursion depth exceeded"
    assert result.config.server("gateway")


# --- a suite version's requirement sets and a run's checks.json ------------------------------------------


def _suite(tmp_path: Path, sets: dict[str, str]) -> ConformanceTool:
    """An installed suite's layout (<prefix>/node_modules/<name>/requirements/<set>.yaml)."""
    root = tmp_path / "_tools" / "conformance-x" / "node_modules" / "@modelcontextprotocol" / "conformance"
    (root / "requirements").mkdir(parents=True)
    for name, text in sets.items():
        (root / "requirements" / f"{name}.yaml").write_text(text)
    return ConformanceTool("@modelcontextprotocol/conformance", "0.2.0-alpha.13", root)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("just a scalar\n", "draft.yaml:1: expected a mapping with a `server` list at the top level, found a single"),
        (laughs("server"), "draft.yaml:2: an anchor (&a) is refused"),
        ("server: tools-list\n", "draft.yaml:1: server: expected a list"),
    ],
)
def test_a_bad_requirement_set_is_that_suite_versions_recorded_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, expected: str
) -> None:
    tool = _suite(tmp_path, {"2026-07-28": "server: [tools-list]\n", "draft": text})
    loaded = central_config(tmp_path, [])
    store = Store(tmp_path / "state" / "watcher.db")
    monkeypatch.setattr(readiness_suite, "install", lambda _loaded, _version, timeout=600, cancel=None: tool)
    found = readiness_suite.inspect(loaded, store, "0.2.0-alpha.13")
    assert found.error is not None and expected in found.error and found.sets == {}
    assert store.get_kv(readiness_suite.KV_INSPECTED)["0.2.0-alpha.13"] == {"error": found.error}
    assert load_requirement_set(tool, "2026-07-28").scored == ("tools-list",)  # the good set still reads


def test_a_requirement_set_or_checks_json_linked_to_the_token_is_refused_without_its_text(
    tmp_path: Path, token: Path
) -> None:
    tool = _suite(tmp_path, {})
    (tool.root / "requirements" / "draft.yaml").symlink_to(token)
    assert tool.requirement_sets() == ["draft"]  # the link is listed, so its refusal is reported
    with pytest.raises(ConformanceError) as caught:
        load_requirement_set(tool, "draft")
    assert "draft.yaml: is a symbolic link" in str(caught.value) and TOKEN_TEXT not in str(caught.value)

    results = tmp_path / "results"
    (results / "server-tools-list-2026-11-29T10-00-00-000Z").mkdir(parents=True)
    (results / "server-tools-list-2026-11-29T10-00-00-000Z" / "checks.json").symlink_to(token)
    found = collect_checks(results)
    [check] = found["tools-list"]
    assert check["status"] == "FAILURE" and "checks.json: is a symbolic link" in check["errorMessage"]
    assert TOKEN_TEXT not in json.dumps(found)


# --- accept files, expected-failures files and task files ------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (laughs("x").replace("x:\n", "- x:\n", 1), "accept.yaml:2: an anchor (&a) is refused"),
        ("tool_removed\n", "accept.yaml:1: expected a list of entries (rule, list, name, reason, expires…)"),
    ],
)
def test_a_hostile_accept_file_in_the_repository_is_the_runs_error(tmp_path: Path, text: str, expected: str) -> None:
    repo = tmp_path / "source"
    repo.mkdir()
    (repo / "accept.yaml").write_text(text)
    with pytest.raises(AcceptError) as caught:
        load_accept_file(repo / "accept.yaml", repo)
    assert expected in str(caught.value)


def test_an_accept_file_linked_out_of_the_repository_is_refused(tmp_path: Path, token: Path) -> None:
    repo = tmp_path / "source"
    (repo / "contract").mkdir(parents=True)
    (repo / "contract" / "accept.yaml").symlink_to(token)
    (repo / "out").symlink_to(token.parent)
    from watcher.suites.judge.contract import steer_contract

    for configured in ("contract/accept.yaml", "out/slack-token"):
        run = SimpleNamespace(
            loaded=central_config(tmp_path, []),
            server=SimpleNamespace(team="books", contract=SimpleNamespace(levels={}), accept=configured, name="s"),
            repo_path=lambda c: repo / c,
            repo_root_of=lambda _c: repo,
        )
        with pytest.raises(AcceptError) as caught:
            steer_contract(run, {"changes": []})  # type: ignore[arg-type]
        assert "symbolic link" in str(caught.value) and TOKEN_TEXT not in str(caught.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (laughs("tasks"), "eval-tasks.yaml:2: an anchor (&a) is refused"),
        ("42\n", "eval-tasks.yaml:1: expected a mapping with a `tasks:` list at the top level, found a number"),
    ],
)
def test_a_hostile_task_file_is_the_evaluations_reported_error(tmp_path: Path, text: str, expected: str) -> None:
    loaded = eval_config(tmp_path, "http://127.0.0.1:9")
    (tmp_path / "eval-tasks.yaml").write_text(text)
    report = run_evaluation(loaded, "notes", "2.4.0b1", environ={"EVAL_TEST_API_KEY": "k"})
    assert expected in str(report["error"]) and report["tasks"] == []
    assert report["tasks_file"] == str(tmp_path / "eval-tasks.yaml")
