"""The answer as a terminal table and as Markdown (the JSON form is the answer itself)."""

from __future__ import annotations

from typing import Any

VERDICT_MARK = {"pass": "pass", "fail": "FAIL", "error": "error", "not run": "–"}


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return out


def _version_rows(answer: dict[str, Any]) -> list[list[str]]:
    rows = []
    for v in answer["versions"]:
        kind = "pre-release" if v["prerelease"] else "final"
        problems = "; ".join(p["text"] for p in v["problems"]) or (
            "–" if v["verdict"] != "error" else "; ".join(v["reasons"])[:80]
        )
        how = "reused" if v["reused"] else (f"{v['seconds']:.0f} s" if v["seconds"] is not None else "")
        rows.append(
            [v["published"][:10], v["version"], kind, VERDICT_MARK.get(v["verdict"], v["verdict"]), how, problems]
        )
    return rows


def headline(answer: dict[str, Any]) -> str:
    return (
        f"Backtest #{answer['id']}: {answer['server']} against {answer['package']} "
        f"{answer['since']} … {answer['until']} ({answer['cost']['versions']} versions)"
    )


def conclusion(answer: dict[str, Any]) -> list[str]:
    lines = []
    if answer["warned"]:
        lines.append("Would it have warned you? Yes:")
        lines += [f"  • {f['sentence']}" for f in answer["warned"]]
    if answer["final_only"]:
        lines.append("Shipped in a final with no pre-release showing it first (watching betas would not have helped):")
        lines += [f"  • {f['sentence']}" for f in answer["final_only"]]
    others = [f for f in answer["findings"] if f["status"] not in ("warned", "final-only")]
    if others:
        lines.append("Seen in pre-releases only:")
        lines += [f"  • {f['sentence']}" for f in others]
    if not answer["findings"]:
        lines.append("No problem appeared in any version of the period: nothing to warn about, no lead time.")
    if answer["status"] != "done":
        lines.append(f"This backtest is {answer['status']}: run the same command again to continue it.")
    return lines


def render_text(answer: dict[str, Any]) -> str:
    header = ["published", "version", "kind", "verdict", "time", "problems"]
    lines = [headline(answer), "", *_table(header, _version_rows(answer)), "", *conclusion(answer)]
    cost = answer["cost"]
    lines.append("")
    lines.append(f"{cost['ran']} run(s), {cost['reused']} reused, {cost['seconds']:.0f} s")
    if answer.get("older_lines"):
        lines.append(f"not replayed (release lines older than the server's): {', '.join(answer['older_lines'])}")
    if answer["undated"]:
        lines.append(f"not placed (no publication time): {', '.join(answer['undated'])}")
    return "\n".join(lines)


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(answer: dict[str, Any]) -> str:
    lines = [f"## {_md_cell(headline(answer))}", ""]
    lines += ["| published | version | kind | verdict | problems |", "|---|---|---|---|---|"]
    for row in _version_rows(answer):
        published, version, kind, verdict, _, problems = row
        lines.append(f"| {published} | `{version}` | {kind} | {verdict} | {_md_cell(problems)} |")
    lines.append("")
    if answer["findings"]:
        lines += ["| line | problem | first shown | final that shipped it | lead time |", "|---|---|---|---|---|"]
        for f in answer["findings"]:
            first = f"`{f['first_version']}` ({f['first_published'][:10]})"
            final = f"`{f['final_version']}` ({f['final_published'][:10]})" if f["final_version"] else "–"
            lead = f"{f['lead_days']} days" if f["lead_days"] is not None else f["status"]
            lines.append(f"| {f['line']} | {_md_cell(f['text'])} | {first} | {final} | {lead} |")
        lines.append("")
    lines += [line.strip() if not line.startswith("  •") else "-" + line[3:] for line in conclusion(answer)]
    return "\n".join(lines) + "\n"
