"""The answer as a terminal table and as Markdown (the JSON form is the answer itself)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby

from watcher.backtest.analysis import sentence
from watcher.backtest.answer import BacktestAnswer, FindingEntry, GroupedFinding, ProblemEntry
from watcher.core.timefmt import parse_iso

VERDICT_MARK = {"pass": "pass", "fail": "FAIL", "error": "error", "not run": "–"}
PLURAL = {
    "install": "install failures",
    "start": "start failures",
    "conformance": "conformance checks that now fail",
    "contract": "changes that break clients",
    "deprecation": "new SDK deprecation warnings",
}
SHOWN = 2
"""Problems named when several of one kind are summed up."""


def summarize(problems: Sequence[ProblemEntry | FindingEntry]) -> list[str]:
    """One phrase per kind: the problem's own text, or "55 conformance checks that now fail (a, b, …)"."""
    phrases = []
    for kind, group in groupby(problems, key=lambda p: p["kind"]):
        items = list(group)
        if len(items) == 1:
            phrases.append(items[0]["text"])
        else:
            named = ", ".join(p["key"] for p in items[:SHOWN]) + (", …" if len(items) > SHOWN else "")
            phrases.append(f"{len(items)} {PLURAL.get(kind, kind)} ({named})")
    return phrases


def _same(f: FindingEntry) -> tuple[str, ...]:
    return (f["line"], f["status"], f["kind"], f["first_version"], str(f["final_version"]))


def grouped(findings: list[FindingEntry]) -> list[GroupedFinding]:
    """Findings of one kind that share their line, status, first version and final: one row, one sentence."""
    rows: list[GroupedFinding] = []
    for _, group in groupby(sorted(findings, key=lambda f: (f["first_published"], *_same(f))), key=_same):
        items = list(group)
        head = items[0]
        text = summarize(items)[0] if len(items) > 1 else head["text"]
        moment = parse_iso(head["first_published"])
        assert moment is not None
        told = sentence(
            head["status"], head["first_version"], moment, text, head["line"], head["lead_days"], head["final_version"]
        )
        row: GroupedFinding = {**head, "text": text, "count": len(items), "sentence": told}
        rows.append(row)
    return rows


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return out


def _version_rows(answer: BacktestAnswer) -> list[list[str]]:
    rows = []
    for v in answer["versions"]:
        kind = "pre-release" if v["prerelease"] else "final"
        problems = "; ".join(summarize(v["problems"])) or (
            "–" if v["verdict"] != "error" else "; ".join(v["reasons"])[:80]
        )
        how = "reused" if v["reused"] else (f"{v['seconds']:.0f} s" if v["seconds"] is not None else "")
        rows.append(
            [v["published"][:10], v["version"], kind, VERDICT_MARK.get(v["verdict"], v["verdict"]), how, problems]
        )
    return rows


def headline(answer: BacktestAnswer) -> str:
    count = answer["cost"]["versions"]
    return (
        f"Backtest #{answer['id']}: {answer['server']} against {answer['package']} "
        f"{answer['since']} … {answer['until']} ({count} version{'' if count == 1 else 's'})"
    )


def conclusion(answer: BacktestAnswer) -> list[str]:
    lines = []
    rows = grouped(answer["findings"])
    warned = [f for f in rows if f["status"] == "warned"]
    final_only = [f for f in rows if f["status"] == "final-only"]
    if warned:
        lines.append("Would it have warned you? Yes:")
        lines += [f"  • {f['sentence']}" for f in warned]
    if final_only:
        lines.append("Shipped in a final with no pre-release showing it first (watching betas would not have helped):")
        lines += [f"  • {f['sentence']}" for f in final_only]
    others = [f for f in rows if f["status"] not in ("warned", "final-only")]
    if others:
        lines.append("Seen in pre-releases only:")
        lines += [f"  • {f['sentence']}" for f in others]
    if answer["status"] != "done":
        # Not "no problem": the versions that did not run could hold one.
        not_run = [v["version"] for v in answer["versions"] if v["verdict"] == "not run"]
        total = len(answer["versions"])
        lines.append(
            f"This backtest is {answer['status']} after {total - len(not_run)} of {total} versions: "
            "run the same command again to continue it."
        )
        if not_run:
            lines.append(f"not run: {', '.join(not_run)}")
    elif not answer["findings"]:
        lines.append("No problem appeared in any version of the period: nothing to warn about, no lead time.")
    return lines


def render_text(answer: BacktestAnswer) -> str:
    header = ["published", "version", "kind", "verdict", "time", "problems"]
    lines = [headline(answer), "", *_table(header, _version_rows(answer)), "", *conclusion(answer)]
    cost = answer["cost"]
    lines.append("")
    lines.append(f"{cost['ran']} run(s), {cost['reused']} reused, {cost['seconds']:.0f} s")
    if answer.get("older_lines"):
        lines.append(
            f"not replayed (older lines or backports below the server's baseline): {', '.join(answer['older_lines'])}"
        )
    if answer["undated"]:
        lines.append(f"not placed (no publication time): {', '.join(answer['undated'])}")
    return "\n".join(lines)


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(answer: BacktestAnswer) -> str:
    lines = [f"## {_md_cell(headline(answer))}", ""]
    lines += ["| published | version | kind | verdict | problems |", "|---|---|---|---|---|"]
    for row in _version_rows(answer):
        published, version, kind, verdict, _, problems = row
        lines.append(f"| {published} | `{version}` | {kind} | {verdict} | {_md_cell(problems)} |")
    lines.append("")
    if answer["findings"]:
        lines += ["| line | problem | first shown | final that shipped it | lead time |", "|---|---|---|---|---|"]
        for f in grouped(answer["findings"]):
            first = f"`{f['first_version']}` ({f['first_published'][:10]})"
            final = f"`{f['final_version']}` ({(f['final_published'] or '')[:10]})" if f["final_version"] else "–"
            lead = f"{f['lead_days']} days" if f["lead_days"] is not None else f["status"]
            lines.append(f"| {f['line']} | {_md_cell(f['text'])} | {first} | {final} | {lead} |")
        lines.append("")
    lines += [line.strip() if not line.startswith("  •") else "-" + line[3:] for line in conclusion(answer)]
    return "\n".join(lines) + "\n"
