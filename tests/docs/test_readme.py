"""The README is the user's entry point: short, its set-up commands real, its package map the tree's."""

from __future__ import annotations

import subprocess

from tests.docs.helpers import DOCS, README, ROOT, code_spans, links, tables

TEXT = README.read_text(encoding="utf-8")
MAX_LINES = 185  # the package map grows a row per capability; reference text still belongs in docs/
WATCHER = ROOT / "watcher"


def test_the_two_setup_commands_exist_and_ci_runs_the_test_one():
    assert "scripts/run " in TEXT and "scripts/test " in TEXT
    assert (ROOT / "scripts" / "run").stat().st_mode & 0o111
    assert "scripts/test" in (ROOT / ".ci" / "run").read_text()


def test_the_readme_is_short():
    lines = len(TEXT.splitlines())
    assert lines <= MAX_LINES, f"README.md has {lines} lines (at most {MAX_LINES}): move reference text to docs/"


def test_the_readme_links_every_reference_page():
    linked = {(README.parent / link.target.split("#")[0]).resolve() for link in links(README)}
    for page in sorted(DOCS.glob("*.md")):
        assert page.resolve() in linked, f"README.md does not link {page.relative_to(ROOT)}"


# --- the package map -------------------------------------------------------------------------------------


def _package_map() -> dict[str, list[str]]:
    """path → the module names in its "modules" cell, from the README's "Package map" table."""
    found = [t for t in tables(README) if t.heading == "Package map" and t.header[:2] == ["path", "modules"]]
    assert len(found) == 1, "README.md needs one table under '## Package map' with columns path | modules | …"
    entries: dict[str, list[str]] = {}
    for row in found[0].rows:
        paths = code_spans(row[0])
        assert len(paths) == 1, f"package map row {row[0]!r}: expected one `path` in the first cell"
        assert paths[0] not in entries, f"package map: {paths[0]} is listed twice"
        entries[paths[0]] = code_spans(row[1])
    return entries


def _watcher_tree() -> dict[str, list[str]]:
    """What the map must list: every module directly in watcher/, every package folder below it with its modules."""
    tree: dict[str, list[str]] = {}
    for module in sorted(WATCHER.glob("*.py")):
        if module.name != "__init__.py":
            tree[f"watcher/{module.name}"] = []
    for init in sorted(WATCHER.rglob("__init__.py")):
        folder = init.parent
        if folder == WATCHER:
            continue
        modules = sorted(p.stem for p in folder.glob("*.py") if p.name != "__init__.py")
        tree[f"{folder.relative_to(ROOT).as_posix()}/"] = modules
    return tree


def _tracked_top_level_folders() -> set[str] | None:
    try:
        listed = subprocess.run(
            ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True, timeout=60
        ).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return None  # not a git checkout: only the "listed folders exist" direction is checked
    return {f"{path.split('/', 1)[0]}/" for path in listed if "/" in path and not path.startswith(".")}


def test_the_package_map_lists_every_watcher_folder_and_module_and_nothing_else():
    documented = {path: mods for path, mods in _package_map().items() if path.startswith("watcher/")}
    tree = _watcher_tree()
    problems = [f"missing from the README's package map: `{path}`" for path in tree if path not in documented]
    problems += [
        f"in the README's package map but not in the tree: `{path}`" for path in documented if path not in tree
    ]
    for path in sorted(set(tree) & set(documented)):
        missing = sorted(set(tree[path]) - set(documented[path]))
        extra = sorted(set(documented[path]) - set(tree[path]))
        problems += [f"package map row `{path}`: module `{name}` missing from its modules cell" for name in missing]
        problems += [
            f"package map row `{path}`: module `{name}` listed but {path}{name}.py does not exist" for name in extra
        ]
    assert not problems, "\n".join(problems)


def test_the_package_map_lists_every_top_level_folder_and_nothing_else():
    documented = {path for path in _package_map() if not path.startswith("watcher/")}
    problems = [
        f"in the README's package map but not a folder: `{path}`"
        for path in sorted(documented)
        if not path.endswith("/") or not (ROOT / path).is_dir()
    ]
    tracked = _tracked_top_level_folders()
    if tracked is not None:
        tracked.discard("watcher/")  # mapped folder by folder above
        problems += [f"missing from the README's package map: `{path}`" for path in sorted(tracked - documented)]
    assert not problems, "\n".join(problems)


def test_the_map_test_sees_the_tree_it_checks():
    # Guard against a silently empty comparison (e.g. the tree moved and nothing is globbed any more).
    tree = _watcher_tree()
    assert "watcher/cli.py" in tree and "watcher/sources/" in tree
    assert "pypi" in tree["watcher/sources/"]


def test_the_rules_are_linked_not_copied():
    # The rules table lives in docs/contract-rules.md (tests/contract/test_contract_rules_doc.py keeps it true).
    from watcher.contract.rules import RULES

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/contract-rules.md" in readme and (ROOT / "docs" / "contract-rules.md").is_file()
    assert not any(line.startswith(f"| `{rule_id}` |") for rule_id in RULES for line in readme.splitlines())
