"""The digest laid out once — parts, items, lines of styled spans — for every rendering to format.

``document(digest)`` decides what each section says; ``slack``, ``markdown`` (and HTML) only format it, so the
preview formats say exactly what Slack says.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from typing import Literal

from watcher.digest.model import (
    UNKNOWN_REGISTRY,
    ChangeItem,
    Digest,
    Feature,
    ReleaseItem,
    ServerFindings,
    ThreadRef,
    Verdict,
)

Style = Literal["plain", "bold", "italic", "code", "link"]

VERDICT_WORDS = {
    "pass": "PASS",
    "fail": "FAIL",
    "error": "ERROR (not judged)",
    "pending": "PENDING",
    "not-run": "NOT RUN",
}


@dataclass(frozen=True)
class Span:
    text: str
    style: Style = "plain"
    url: str | None = None


Line = list[Span]


@dataclass(frozen=True)
class Item:
    title: Line
    lines: list[Line] = field(default_factory=list)


@dataclass(frozen=True)
class Part:
    title: str
    intro: list[Line] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)


@dataclass(frozen=True)
class Document:
    title: str
    summary: Line
    notes: list[Line]
    parts: list[Part]


def t(text: str) -> Span:
    return Span(text)


def b(text: str) -> Span:
    return Span(text, "bold")


def i(text: str) -> Span:
    return Span(text, "italic")


def c(text: str) -> Span:
    return Span(text, "code")


def link(text: str, url: str) -> Span:
    return Span(text, "link", url)


def plain(line: Iterable[Span]) -> str:
    """The text of a line without any markup (what every rendering must contain)."""
    return "".join(span.text for span in line)


def _days(days: int | None) -> str:
    if days is None:
        return "date unknown"
    if days < 0:
        return f"{-days} days ago"
    return "today" if days == 0 else f"{days} day{'s' if days != 1 else ''} left"


def _removal(feature: Feature) -> Line:
    if feature.state != "deprecated":
        return [t("Removed in "), b(feature.earliest_removal or "(revision not stated)")]
    if not feature.resolved or feature.earliest_removal is None:
        return [t("Earliest removal: "), b("UNRESOLVED"), t(" — not guessed: " + feature.basis)]
    kind = "projected revision" if feature.projected else "released revision"
    return [t("Earliest removal: "), b(feature.earliest_removal), t(f" ({kind}), "), b(_days(feature.days_left))]


def _feature_item(feature: Feature) -> Item:
    title: Line = [t("Removed: "), b(feature.feature)] if feature.state != "deprecated" else [b(feature.feature)]
    if feature.deprecated_in:
        title += [t(" — deprecated in "), c(feature.deprecated_in)]
    if feature.sep:
        title.append(t(f" ({feature.sep})"))
    if feature.affected_servers:
        title += [t(" — "), b("affects " + ", ".join(feature.affected_servers))]
    lines: list[Line] = [_removal(feature)]
    if feature.earliest_removal_text:
        lines.append([t("Registry says: "), i(f"“{feature.earliest_removal_text}”")])
    elif feature.state == "deprecated":
        lines.append([t("Registry says: "), i("(empty: the policy's 12 months apply)")])
    if feature.migration:
        lines.append([t("Migration: " + feature.migration)])
    if feature.basis and feature.resolved:
        lines.append([t("Basis: " + feature.basis)])
    lines += [[b("Warning: "), t(flag)] for flag in feature.flags]
    return Item(title, lines)


def _change_line(change: ChangeItem) -> Line:
    after, before = change.after or {}, change.before or {}
    subject = change.subject
    when = f" (recorded {change.recorded[:10]})"
    if change.kind == "new-deprecation":
        removal = after.get("earliest_removal") or "unresolved"
        return [b("New deprecation: "), b(subject), t(f" — earliest removal {removal}{when}")]
    if change.kind == "moved-to-removed":
        return [b("Removed: "), b(subject), t(f" moved to the registry's Removed section{when}")]
    if change.kind == "earliest-removal-changed":
        old = before.get("earliest_removal") or "unresolved"
        new = after.get("earliest_removal") or "unresolved"
        text_change = ""
        if before.get("earliest_removal_text") != after.get("earliest_removal_text"):
            old_text, new_text = before.get("earliest_removal_text", ""), after.get("earliest_removal_text", "")
            text_change = f"; registry text “{old_text}” → “{new_text}”"
        return [b("Date moved: "), b(subject), t(f" earliest removal {old} → {new}{text_change}{when}")]
    if change.kind == "deprecation-gone":
        return [
            b("No longer listed: "),
            b(subject),
            t(f" left the Deprecated section without a Removed entry (restored?){when}"),
        ]
    if change.kind == "new-rc":
        return [b("Spec release candidate: "), b(subject), t(f" published{when}")]
    if change.kind == "new-revision":
        return [b("Spec revision released: "), b(subject), t(f" is now Current{when}")]
    return [b(change.kind + ": "), t(subject + when)]


def _server_item(findings: ServerFindings, total_deprecated: int, unknown: bool = False) -> Item:
    title: Line = [b(findings.server), t(f" ({findings.sdk} SDK)")]
    lines: list[Line] = []
    for exposure in findings.exposures:
        when = (
            [t(" — may go "), b(exposure.earliest_removal), t(f" ({_days(exposure.days_left)})")]
            if exposure.earliest_removal
            else [t(" — earliest removal unresolved")]
        )
        evidence: Line = []
        for n, item in enumerate(exposure.evidence):
            evidence += [t("; " if n else ". Evidence: "), *_inline_code(item.detail), t(f" [{item.source}]")]
        lines.append([b(exposure.feature), *when, *evidence])
    if unknown:
        lines.append([b("Not known"), t(" which deprecated features this server uses: " + UNKNOWN_REGISTRY)])
    elif not findings.exposures:
        lines.append([b("Nothing found"), t(f": none of the {total_deprecated} deprecated features seen in use")])
    elif len(findings.exposures) < total_deprecated:
        lines.append(
            [t(f"Nothing found for the other {total_deprecated - len(findings.exposures)} deprecated features")]
        )
    if findings.checked:
        lines.append([i("Checked: " + "; ".join(findings.checked))])
    if findings.gaps:
        lines.append([i("Not checked: " + "; ".join(findings.gaps))])
    return Item(title, lines)


def _inline_code(text: str) -> Line:
    """`a` spans inside evidence text become code spans."""
    spans: Line = []
    for n, piece in enumerate(text.split("`")):
        if piece:
            spans.append(c(piece) if n % 2 else t(piece))
    return spans


def _thread(ref: ThreadRef | None, label: str) -> Line:
    if ref is None:
        return []
    if ref.url:
        return [t(" — "), link(label, ref.url)]
    return [t(" — thread "), c(ref.key), t(f" ({ref.status})")]


def _verdict_line(verdict: Verdict) -> Line:
    line: Line = [t(verdict.server + ": "), b(VERDICT_WORDS.get(verdict.verdict, verdict.verdict.upper()))]
    if verdict.detail:
        line.append(t(" — " + verdict.detail))
    if verdict.run_id is not None and "#" not in verdict.detail:
        line.append(t(f" (run #{verdict.run_id})"))
    return line + _thread(verdict.thread, "result")


def _release_item(release: ReleaseItem) -> Item:
    kind = "pre-release" if release.prerelease else "release"
    title: Line = [b(f"{release.package} {release.version}"), t(f" ({release.sdk} SDK, {kind}")]
    if release.first_seen:
        title.append(t(f", first seen {release.first_seen[:10]}"))
    title.append(t(")"))
    if release.page:
        title += [t(" — "), link("registry page", release.page)]
    title += _thread(release.thread, "alert thread")
    lines = [_verdict_line(v) for v in release.verdicts]
    if not release.verdicts:
        lines.append([t("No server of this team is built on this SDK.")])
    return Item(title, lines)


def document(digest: Digest) -> Document:
    deprecated, removed = digest.deprecated, digest.removed
    affected = [f for f in deprecated if f.affected_servers]
    if digest.registry_unknown:  # counts of zero would read as an all-clear
        summary: Line = [t(f"{digest.today} · deprecated features: "), b(UNKNOWN_REGISTRY)]
    else:
        summary = [
            t(f"{digest.today} · {len(deprecated)} deprecated feature{'s' if len(deprecated) != 1 else ''}"),
            t(f", {len(affected)} in use by this team's servers"),
        ]
    if digest.outlook.next_removal:
        summary.append(
            t(f" · next earliest removal {digest.outlook.next_removal} ({_days(digest.outlook.next_removal_days)})")
        )
    summary.append(t(f" · period {digest.since[:10]} → {digest.today}"))
    notes = [[b("Heads-up: "), t(problem)] for problem in digest.problems]

    since = digest.since[:10]
    out_intro: list[Line] = []
    if digest.changes:
        out_intro.append([b(f"Changes since the last digest ({since}):")])
        out_intro += [[t("• "), *_change_line(change)] for change in digest.changes]
    else:
        out_intro.append([b("Changes since the last digest: "), t(f"none recorded since {since}.")])
    items = [_feature_item(f) for f in deprecated]
    items += [_feature_item(f) for f in removed]
    if deprecated or removed:
        out_intro.append(
            [
                b("The registry: "),
                t(f"{len(deprecated)} deprecated ({len(affected)} used by this team), "),
                t(f"{len(removed)} removed; soonest earliest removal first."),
            ]
        )
    elif digest.registry_unknown:
        out_intro.append([b("The registry: "), b(UNKNOWN_REGISTRY), t(" (nothing below means nothing is known).")])
    else:
        out_intro.append([b("The registry: "), t("no deprecated or removed features listed.")])
    part_out = Part("1 · What is on its way out", out_intro, items)

    affected_intro: list[Line] = []
    if not digest.servers:
        affected_intro.append([t("No servers are configured for this team, so nothing could be checked.")])
    part_affected = Part(
        f"2 · Where {digest.team} is affected",
        affected_intro,
        [_server_item(s, len(deprecated), digest.registry_unknown) for s in digest.servers],
    )

    sdk_names = ", ".join(digest.team_sdks) or "none configured"
    release_intro: list[Line] = [[t(f"Releases of the team's SDKs ({sdk_names}) first seen {since} → {digest.today}.")]]
    if not digest.releases:
        release_intro.append([t("No new pre-releases or releases.")])
    part_releases = Part("3 · SDKs this week", release_intro, [_release_item(r) for r in digest.releases])

    part_coming = Part("4 · What is coming", _outlook_lines(digest), [])
    return Document(
        title=f"Deprecation digest · {digest.team} · {digest.week}",
        summary=summary,
        notes=notes,
        parts=[part_out, part_affected, part_releases, part_coming],
    )


def _outlook_lines(digest: Digest) -> list[Line]:
    look = digest.outlook
    lines: list[Line] = []
    if look.next_revision:
        kind = "released" if look.next_revision_actual else "projected"
        name = f"revision {look.next_revision_name}, " if look.next_revision_name else ""
        lines.append(
            [b("Next spec revision: "), b(look.next_revision), t(f" ({name}{kind}: {look.next_revision_note})")]
        )
    else:
        lines.append([b("Next spec revision: "), t(look.next_revision_note)])
    if look.beta_window_start and look.beta_window_end:
        opens_in = (date.fromisoformat(look.beta_window_start) - date.fromisoformat(digest.today)).days
        state = "open now" if look.beta_window_open else f"opens in {opens_in} days"
        if look.beta_window_start > digest.today or look.beta_window_open:
            lines.append(
                [b("Expected SDK-beta window: "), t(f"{look.beta_window_start} → {look.beta_window_end} ({state})")]
            )
    if look.next_removal:
        names = ", ".join(look.next_removal_features)
        lines.append(
            [b("Next earliest removal: "), b(look.next_removal), t(f" ({_days(look.next_removal_days)}): {names}")]
        )
    else:
        lines.append([b("Next earliest removal: "), t("none scheduled (no resolved date ahead)")])
    return lines


def split_space(text: str) -> tuple[str, str, str]:
    """(leading spaces, the text, trailing spaces): markup goes around the text, not around its spaces."""
    core = text.strip()
    start = text.index(core)
    return text[:start], core, text[start + len(core) :]
