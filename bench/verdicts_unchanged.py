"""Every verdict of `mcp-watcher diff` that changed between this checkout and a git revision, each with its reason;
every other output byte-identical.

    .venv/bin/python bench/verdicts_unchanged.py --against REV [--tools 1000]

Cases: every ordered pair of versions of each recorded real server (tests/contract/fixtures/real), generated
snapshots (bench/contracts.py: one era, both eras, one against both), and damaged or unusual files (NaN, an
integer beyond 64 bits, a lone surrogate, minified, CRLF, truncated, duplicate keys, an entry that is not an
object). Each case runs through the CLI's `main()` in every --format and every --fail-on, in a child process per
code tree (REV's `watcher/` exported with `git archive`). A case whose outputs differ has its verdicts (rule,
grade and place of each change, read from the json report) compared: each one that changed is listed with the
rule of the diff that explains it (bench/verdict_changes.py). The hand-checked breaking items of the real
fixtures (their verdicts.yaml) must all still be found.
Exit 0: every changed verdict explained, every hand-checked breaking item found, and no output differs without a
verdict change; 1 otherwise (what failed is listed).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import yaml  # noqa: E402

from bench.contracts import snapshot_pair  # noqa: E402
from bench.verdict_changes import VerdictChange, changed_verdicts, verdicts  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "tests" / "contract" / "fixtures" / "real"
FORMATS = ("json", "markdown", "junit", "github")
FAIL_ON = ("clients", "models", "lints", "none")

DRIVER = f"""
FORMATS, FAIL_ON = {FORMATS!r}, {FAIL_ON!r}
import contextlib, io, json, sys
import watcher
from watcher.cli import main
cases = json.load(open(sys.argv[1]))
out = {{"tree": watcher.__file__, "results": {{}}}}
for name, (base, cand) in cases.items():
    for fmt in FORMATS:
        for fail_on in FAIL_ON:
            stdout, stderr = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                try:
                    code = main(["diff", base, cand, "--format", fmt, "--fail-on", fail_on, "--server-name", "srv"])
                except Exception as exc:  # a crash is an output too
                    code = "raised " + type(exc).__name__ + ": " + str(exc)
            out["results"][name + " " + fmt + " " + fail_on] = [code, stdout.getvalue(), stderr.getvalue()]
json.dump(out, open(sys.argv[2], "w"))
"""


def real_pairs() -> dict[str, tuple[str, str]]:
    cases = {}
    for server in sorted(p for p in REAL.iterdir() if p.is_dir()):
        versions = sorted(p for p in server.iterdir() if p.is_dir())
        for a in versions:
            for b in versions:
                if a != b:
                    cases[f"real {server.name} {a.name}→{b.name}"] = (str(a), str(b))
    return cases


def generated_pairs(root: Path, tools: int) -> dict[str, tuple[str, str]]:
    one_a, one_b = snapshot_pair(root / "one", tools, None)
    both_a, both_b = snapshot_pair(root / "both", tools, ("legacy", "modern"))
    return {
        "generated one era": (str(one_a), str(one_b)),
        "generated both eras": (str(both_a), str(both_b)),
        "generated one era vs both": (str(one_a), str(both_b)),
        "generated both vs one era": (str(both_a), str(one_b)),
    }


def unusual_pairs(root: Path) -> dict[str, tuple[str, str]]:
    """Copies of a small generated snapshot with one file rewritten; each compared with the original."""
    base, _ = snapshot_pair(root / "src", 12, None)
    text = (base / "tools.json").read_text(encoding="utf-8")
    variants = {
        "nan": text.replace('"maximum": 100', '"maximum": NaN', 1),
        "infinity": text.replace('"maximum": 100', '"maximum": Infinity', 1),
        "big integer": text.replace('"maximum": 100', '"maximum": 123456789012345678901234567890', 1),
        "19-digit integer": text.replace('"maximum": 100', '"maximum": 9223372036854775807', 1),
        "lone surrogate": text.replace("What tool 1 searches", "What tool \\ud800 searches", 1),
        "minified": json.dumps(json.loads(text)),
        "crlf": text.replace("\n", "\r\n"),
        "truncated": text[: len(text) // 2],
        "duplicate name": text.replace('"name": "tool_0001"', '"name": "tool_0000"', 1),
        "entry not an object": "[1, " + text.lstrip()[1:],
        "not an array": '{"tools": []}',
        "empty": "[]",
        "float bound": text.replace('"maximum": 100', '"maximum": 1e+300', 1),
        "nested 300 levels": text.replace('"maximum": 100', '"maximum": 100, "x-deep": ' + "[" * 300 + "]" * 300, 1),
        "reordered keys": json.dumps([dict(reversed(list(t.items()))) for t in json.loads(text)], indent=2),
    }
    cases = {}
    for name, content in variants.items():
        folder = root / name.replace(" ", "-")
        shutil.copytree(base, folder)
        (folder / "tools.json").write_text(content, encoding="utf-8", newline="")
        cases[f"unusual {name}"] = (str(base), str(folder))
        cases[f"unusual {name} (reversed)"] = (str(folder), str(base))
    return cases


def outputs(tree: Path | None, cases_file: Path, out_file: Path, clock: str) -> dict[str, object]:
    env = {**os.environ, "MCP_WATCHER_CLOCK_START": clock, "MCP_WATCHER_CONFIG": str(cases_file.parent / "none.yaml")}
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    else:
        env.pop("PYTHONPATH", None)
    # Not from ROOT: `python -c` puts its working directory first on sys.path, and this checkout's watcher/ with it.
    cwd = cases_file.parent
    subprocess.run([sys.executable, "-c", DRIVER, str(cases_file), str(out_file)], env=env, check=True, cwd=cwd)
    loaded: dict[str, object] = json.loads(out_file.read_text(encoding="utf-8"))
    return loaded


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--against", required=True, metavar="REV", help="the git revision whose outputs are the reference"
    )
    parser.add_argument("--tools", type=int, default=1000, help="tools in the generated snapshots (default 1000)")
    parser.add_argument("--clock", default="2026-12-01T12:00:00Z", help="MCP_WATCHER_CLOCK_START of both runs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="verdicts-") as tmp:
        root = Path(tmp)
        old_tree = root / "old"
        old_tree.mkdir()
        archive = subprocess.run(["git", "archive", args.against, "watcher"], cwd=ROOT, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(old_tree)], input=archive.stdout, check=True)
        cases = {**real_pairs(), **generated_pairs(root / "gen", args.tools), **unusual_pairs(root / "unusual")}
        cases_file = root / "cases.json"
        cases_file.write_text(json.dumps(cases), encoding="utf-8")
        old = outputs(old_tree, cases_file, root / "old.json", args.clock)
        new = outputs(None, cases_file, root / "new.json", args.clock)
    assert str(old["tree"]).startswith(str(old_tree)), f"the reference run imported {old['tree']}"
    assert str(new["tree"]).startswith(str(ROOT)), f"this checkout's run imported {new['tree']}"
    old_results, new_results = old["results"], new["results"]
    assert isinstance(old_results, dict) and isinstance(new_results, dict)
    differ = sorted(key for key in old_results if old_results[key] != new_results.get(key))
    changes = sum(
        len(json.loads(v[1]).get("changes", [])) for k, v in new_results.items() if k.endswith(" json none") and v[1]
    )
    print(
        f"{len(cases)} cases × {len(FORMATS)} formats × {len(FAIL_ON)} --fail-on = {len(old_results)} outputs "
        f"({changes} changes reported in the json outputs); against {args.against}: "
        f"{len(old_results) - len(differ)} identical, {len(differ)} differ"
    )
    by_case = {name: case_changes(old_results, new_results, name) for name in cases}
    failed = report_verdicts(args.against, {name: found for name, found in by_case.items() if found})
    silent = sorted({key.rsplit(" ", 2)[0] for key in differ} - {name for name, found in by_case.items() if found})
    for name in silent:
        print(f"  DIFFERS without a verdict change: {name}")
    missing, hand_checked = missing_breaking(new_results)
    print(f"hand-checked breaking items of the real fixtures (verdicts.yaml): {hand_checked}, {len(missing)} not found")
    for item in missing:
        print(f"  NOT FOUND: {item}")
    return 1 if failed or silent or missing else 0


def case_changes(old_results: dict[str, Any], new_results: dict[str, Any], name: str) -> list[VerdictChange]:
    """The verdicts of one case that differ, read from both trees' json reports (--fail-on none)."""
    key = f"{name} json none"
    reports = [_report(results.get(key)) for results in (old_results, new_results)]
    return changed_verdicts(verdicts(reports[0]), verdicts(reports[1]))


def _report(output: Any) -> dict[str, Any]:
    if not output or not isinstance(output[1], str) or not output[1].strip():
        return {}
    try:
        loaded: dict[str, Any] = json.loads(output[1])
    except ValueError:
        return {}
    return loaded


def report_verdicts(against: str, by_case: dict[str, list[VerdictChange]]) -> bool:
    """Print each changed verdict with its reason; True when one has none."""
    every = [change for found in by_case.values() for change in found]
    no_longer = sum(1 for c in every if c.was_breaking and not c.is_breaking)
    newly = sum(1 for c in every if c.is_breaking and not c.was_breaking)
    print(
        f"verdicts changed against {against}: {len(every)} in {len(by_case)} cases "
        f"({no_longer} no longer breaking, {newly} newly breaking)"
    )
    reasons: dict[str, int] = {}
    for change in every:
        reasons[change.reason or "UNEXPLAINED"] = reasons.get(change.reason or "UNEXPLAINED", 0) + 1
    for reason, count in sorted(reasons.items(), key=lambda item: -item[1]):
        print(f"  {count:4} × {reason}")
    for name, found in by_case.items():
        print(f"  {name}")
        for change in found:
            print(f"    {change.shown()}")
    return any(change.reason is None for change in every)


def missing_breaking(new_results: dict[str, Any]) -> tuple[list[str], int]:
    """The hand-checked breaking items of the real fixtures' verdicts.yaml that this checkout does not report."""
    missing, total = [], 0
    for path in sorted(REAL.glob("*/verdicts.yaml")):
        for pair in yaml.safe_load(path.read_text(encoding="utf-8"))["pairs"]:
            name = f"real {path.parent.name} {pair['baseline']}→{pair['candidate']}"
            report = _report(new_results.get(f"{name} json none"))
            found = {(c["rule"], c["name"], c["path"]) for c in report.get("changes", []) if c["breaksClients"]}
            for rule, entry, where in pair["breaking"] or []:
                total += 1
                if (rule, entry, where) not in found:
                    missing.append(f"{name}: {rule} {entry} {where}")
    return missing, total


if __name__ == "__main__":
    raise SystemExit(main())
