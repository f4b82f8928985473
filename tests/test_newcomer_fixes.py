"""Issue 37's smaller items met by a newcomer at the command line: a mistyped subcommand gets a suggestion,
`run --once`'s exit 3 and `diff --fail-on dangerous` are explained where a reader looks, `status` counts one
version as one, and the kit's comments point at sections that exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs.helpers import ROOT, anchors, section, slug
from watcher.cli import build_parser, main
from watcher.service import ONCE_JOB_FAILED, ONCE_OK, ONCE_PARTIAL

CLI_DOC = ROOT / "docs" / "cli.md"


def _help(*argv: str, capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as stopped:
        main([*argv, "--help"])
    assert stopped.value.code == 0
    return " ".join(capsys.readouterr().out.split())


def test_a_mistyped_subcommand_is_told_the_nearest_name(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit) as stopped:
        main(["pol"])
    assert stopped.value.code == 2
    said = capsys.readouterr().err
    assert "invalid choice: 'pol'" in said and "did you mean 'poll'?" in said
    with pytest.raises(SystemExit):
        main(["deprecation"])
    assert "did you mean 'deprecations'?" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["zzzzzz"])
    assert "did you mean" not in capsys.readouterr().err, "no suggestion when nothing is near"
    with pytest.raises(SystemExit):  # an option's choices too, in a subcommand's own parser
        main(["diff", "a", "b", "--format", "markdwn"])
    assert "did you mean 'markdown'?" in capsys.readouterr().err


def test_run_once_exit_codes_are_in_its_help_and_its_section(capsys: pytest.CaptureFixture[str]):
    """Issue 37: `run --once` exits 3 when the jobs ran but a source failed or a notice is undelivered; nothing
    said so. Every code `once_exit_code` returns is named in `run --help` and in docs/cli.md."""
    helped = _help("run", capsys=capsys)
    documented = " ".join(section(CLI_DOC, "`mcp-watcher run`").split())
    for code in (ONCE_OK, ONCE_JOB_FAILED, ONCE_PARTIAL):
        assert re.search(rf"--once[^|]*\b{code}\b", helped), f"run --help says nothing of --once's exit {code}"
        assert re.search(rf"`--once`[^\n]*\b{code}\b", documented), f"docs/cli.md: --once's exit {code}"
    assert "source failed" in helped and "undelivered" in helped


def test_diff_help_explains_every_fail_on_level(capsys: pytest.CaptureFixture[str]):
    """Issue 37: `diff --help` listed `dangerous` among the choices but did not say what it fails on."""
    from watcher.contract.report import LEVELS

    helped = _help("diff", "a", "b", capsys=capsys)
    explained = helped.split("options:", 1)[1].split("--fail-on", 1)[1].split("--server-name")[0]
    for level in LEVELS:
        assert re.search(rf"\b{level}\b[^,;]*:", explained), f"--fail-on {level} is not explained: {explained}"
    assert "still validates" in explained or "still valid" in explained


def test_the_parser_is_the_one_main_uses():
    """The suggestion lives in the parser class, so every subcommand's own parser has it."""
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command")
    assert all(type(p) is type(parser) for p in subparsers.choices.values())  # type: ignore[union-attr]


KIT_FILES = sorted(
    p
    for p in [*(ROOT / "deploy").rglob("*"), *(ROOT / "config").glob("*.yaml")]
    if p.is_file() and p.suffix in (".yaml", ".yml", ".service", "") and p.name != "README.md"
)


def _comments(path: Path) -> list[tuple[int, str]]:
    return [
        (n, line.split("#", 1)[1])
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "#" in line
    ]


def _names_a_heading(words: str, found: set[str]) -> bool:
    """`§ Kubernetes says what…`: some first words of the text after § are a heading, or its start."""
    parts = words.split()
    prefixes = [slug(" ".join(parts[:k])) for k in range(1, len(parts) + 1)]
    return any(p in found or any(a.startswith(p + "-") for a in found) for p in prefixes)


def test_the_kits_comments_point_at_sections_that_exist():
    """Issue 37: deploy/config/watcher.yaml's header sent readers to "the README's Configuration section",
    which does not exist. Every "FILE § SECTION" and "the README's X section" in a comment must resolve."""
    assert KIT_FILES, "the kit's files"
    problems = []
    for path in KIT_FILES:
        for number, comment in _comments(path):
            where = f"{path.relative_to(ROOT)}:{number}"
            for name in re.findall(r"the README's ([A-Z][\w ]*?) section", comment):
                if slug(name) not in anchors(ROOT / "README.md"):
                    problems.append(f"{where}: README.md has no section {name!r}")
            for target, heading in re.findall(r"((?:docs|deploy)/[\w./-]+\.md) § ([\w ]+\w)", comment):
                if not (ROOT / target).is_file() or not _names_a_heading(heading, anchors(ROOT / target)):
                    problems.append(f"{where}: {target} has no section {heading!r}")
            for target in re.findall(r"\b((?:docs|deploy)/[\w./-]+\.md)\b", comment):
                if not (ROOT / target).is_file():
                    problems.append(f"{where}: {target} does not exist")
    assert not problems, "\n".join(problems)


def test_init_watches_the_shipped_sdks(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """`init`'s SDK list is the shipped config's, and the file it writes loads, its paths beside it."""
    import yaml

    from watcher.config import load_config, state_path
    from watcher.ops.starter import STARTER

    shipped = yaml.safe_load((ROOT / "config" / "watcher.yaml").read_text(encoding="utf-8"))["sdks"]
    assert yaml.safe_load(STARTER)["sdks"] == shipped
    assert main(["init", "--dir", str(tmp_path)]) == 0
    loaded = load_config(tmp_path / "config" / "watcher.yaml")
    assert state_path(loaded) == (tmp_path / "state" / "watcher.db").resolve()
    assert "--config" in capsys.readouterr().out, "from elsewhere, the next step names the file"


def _k8s_secret_keys() -> set[str]:
    """The keys of the Slack secret the Deployment needs (mounted items; an `optional` env key is not)."""
    import yaml

    deployment = yaml.safe_load((ROOT / "deploy" / "k8s" / "deployment.yaml").read_text(encoding="utf-8"))
    volumes = deployment["spec"]["template"]["spec"]["volumes"]
    return {item["key"] for v in volumes if "secret" in v for item in v["secret"]["items"]}


def _created_secret_keys(command: str) -> dict[str, str]:
    """`--from-file=KEY=PATH` of one `kubectl … create secret generic …` command: key → path."""
    return dict(re.findall(r"--from-file=(\w+)=(\S+)", command))


def _commands(text: str) -> list[str]:
    """Shell commands with their `\\` continuations joined."""
    return [" ".join(c.split()) for c in re.sub(r"\\\n\s*(#\s*)?", " ", text).splitlines()]


def test_every_kubernetes_recipe_creates_every_secret_key_the_pod_mounts():
    """Issue 37: the kustomization's header made the secret without `page_token`, which the Deployment mounts
    (the pod would not start); deploy/README.md's recipe read a `./token` no step created."""
    needed = _k8s_secret_keys()
    assert needed == {"slack_bot_token", "page_token"}
    header = "\n".join(
        line.removeprefix("#").strip()
        for line in (ROOT / "deploy" / "k8s" / "kustomization.yaml").read_text(encoding="utf-8").splitlines()
        if line.startswith("#")
    )
    readme = section(ROOT / "deploy" / "README.md", "Kubernetes")
    block = re.search(r"```sh\n(.*?)```", readme, re.S)
    assert block is not None
    for where, text in (("kustomization.yaml's header", header), ("deploy/README.md § Kubernetes", block.group(1))):
        commands = _commands(text)
        created = [c for c in commands if "create secret generic mcp-watcher-slack" in c]
        assert len(created) == 1, f"{where}: one command creates the secret"
        keys = _created_secret_keys(created[0])
        assert needed <= set(keys), f"{where}: the secret lacks {sorted(needed - set(keys))}"
        if where.startswith("deploy/README"):
            before = commands[: commands.index(created[0])]
            for key, path in keys.items():
                writes = [c for c in before if re.search(rf"(>|install\b.*)\s*{re.escape(path)}(\s|\)|$)", c)]
                assert writes, f"{where}: {key} is read from {path}, which no earlier step writes"
