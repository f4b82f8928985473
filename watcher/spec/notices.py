"""Slack text and Block Kit for spec changes and for operator alerts about the spec sources.

Every change message says what changed with a "Before" and an "After"; the plain ``text`` carries the same
facts (it is the notification text and the fallback where blocks are not shown).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from watcher.notify.blocks import MAX_SECTION_CHARS, Mrkdwn, clip, context, escape, fields, header, link, section


@dataclass(frozen=True)
class Change:
    kind: str
    """Stable kebab-case id: new-deprecation, moved-to-removed, earliest-removal-changed, deprecation-gone,
    new-rc, new-revision."""
    subject: str
    """The feature name, or the release tag."""
    before: Mapping[str, object] | None
    """The stored row before the change: a `DeprecationRow`, or a revision's `to_json()` (new-rc, new-revision)."""
    after: Mapping[str, object] | None
    key: str
    """The event key (stable across restarts)."""

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "subject": self.subject, "before": self.before, "after": self.after, "key": self.key}


def removal_summary(row: Mapping[str, object] | None) -> str:
    if row is None:
        return "not listed"
    state = "Removed" if row["state"] == "removed" else "Deprecated"
    lines = [f"{state} (deprecated in {row['deprecated_in'] or '?'}, {row['sep'] or 'no SEP'})"]
    written = row["earliest_removal_text"] or "(empty: policy applies)"
    lines.append(f"Earliest removal: “{written}”")
    if row["resolved"]:
        projected = " (projected)" if row.get("earliest_removal_projected") else ""
        lines.append(f"→ {row['earliest_removal']}{projected}, {row['days_left']} days left")
    else:
        lines.append(f"→ unresolved: {row['basis']}")
    return "\n".join(lines)


def revision_summary(revision: Mapping[str, object] | None) -> str:
    if revision is None:
        return "none"
    kind = "release candidate" if revision["prerelease"] else "revision"
    return f"{kind} {revision['tag']} (published {revision['released']})"


def _title(change: Change) -> str:
    subject = change.subject
    return {
        "new-deprecation": f"Spec: {subject} is now Deprecated",
        "moved-to-removed": f"Spec: {subject} moved to Removed",
        "earliest-removal-changed": f"Spec: earliest removal of {subject} changed",
        "deprecation-gone": f"Spec: {subject} is no longer listed (restored?)",
        "new-rc": f"Spec: release candidate {subject} published",
        "new-revision": f"Spec: revision {subject} released",
    }.get(change.kind, f"Spec: {change.kind} ({subject})")


def _lead(change: Change) -> Mrkdwn:
    after = change.after or {}
    subject = change.subject
    if change.kind == "new-deprecation":
        return Mrkdwn("*{}* was added to the spec's deprecated-features registry. Migration: {}.").format(
            subject, after.get("migration") or "none given"
        )
    if change.kind == "moved-to-removed":
        return Mrkdwn("*{}* is now in the registry's Removed section.").format(subject)
    if change.kind == "earliest-removal-changed":
        return Mrkdwn("The earliest removal of *{}* changed. Basis now: {}").format(subject, after.get("basis", ""))
    if change.kind == "deprecation-gone":
        return Mrkdwn(
            "*{}* is no longer in the Deprecated section and has no Removed entry: "
            "restored to Active, or an editing mistake? Check the spec repo."
        ).format(subject)
    if change.kind == "new-rc":
        return Mrkdwn("The spec repo published release candidate *{}* (revision {}).").format(
            subject, after.get("revision", "")
        )
    if change.kind == "new-revision":
        return Mrkdwn("Spec revision *{}* was released and is now Current.").format(subject)
    return Mrkdwn("{}: *{}*").format(change.kind, subject)


def render_change(change: Change, source_url: str) -> tuple[Mrkdwn, list[dict[str, Any]]]:
    if change.kind in ("new-rc", "new-revision"):
        before, after = revision_summary(change.before), revision_summary(change.after)
        before_label = "Current before" if change.kind == "new-revision" else "Current"
    else:
        before, after = removal_summary(change.before), removal_summary(change.after)
        before_label = "Before"
    title = _title(change)
    lead = _lead(change)
    text = Mrkdwn("{}. {}\n{}: {}\nAfter: {}").format(title, lead, before_label, before, after)
    blocks = [
        header(title),
        section(lead),
        fields([(before_label, escape(before)), ("After", escape(after))]),
        context(Mrkdwn("Source: {}").format(link(source_url, source_url))),
    ]
    return clip(text, MAX_SECTION_CHARS), blocks


def render_operator(title: str, body: str, detail: str) -> tuple[Mrkdwn, list[dict[str, Any]]]:
    """An operator alert; all three parts may carry outside text (a source's error message)."""
    text = Mrkdwn("{}: {}\n{}").format(title, body, detail)
    blocks = [header(title), section(escape(body)), context(escape(detail))]
    return clip(text, MAX_SECTION_CHARS), blocks
