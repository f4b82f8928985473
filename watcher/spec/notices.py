"""Slack text and Block Kit for spec changes and for operator alerts about the spec sources.

Every change message says what changed with a "Before" and an "After"; the plain ``text`` carries the same
facts (it is the notification text and the fallback where blocks are not shown).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from watcher.notify.blocks import MAX_SECTION_CHARS, clip, context, escape, fields, header, section


@dataclass(frozen=True)
class Change:
    kind: str
    """Stable kebab-case id: new-deprecation, moved-to-removed, earliest-removal-changed, deprecation-gone,
    new-rc, new-revision."""
    subject: str
    """The feature name, or the release tag."""
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    key: str
    """The event key (stable across restarts)."""

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "subject": self.subject, "before": self.before, "after": self.after, "key": self.key}


def removal_summary(row: dict[str, Any] | None) -> str:
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


def revision_summary(revision: dict[str, Any] | None) -> str:
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


def _lead(change: Change) -> str:
    after = change.after or {}
    subject = escape(change.subject)
    if change.kind == "new-deprecation":
        return (
            f"*{subject}* was added to the spec's deprecated-features registry. "
            f"Migration: {escape(after.get('migration') or 'none given')}."
        )
    if change.kind == "moved-to-removed":
        return f"*{subject}* is now in the registry's Removed section."
    if change.kind == "earliest-removal-changed":
        return f"The earliest removal of *{subject}* changed. Basis now: {escape(after.get('basis', ''))}"
    if change.kind == "deprecation-gone":
        return (
            f"*{subject}* is no longer in the Deprecated section and has no Removed entry: "
            "restored to Active, or an editing mistake? Check the spec repo."
        )
    if change.kind == "new-rc":
        return f"The spec repo published release candidate *{subject}* (revision {escape(after.get('revision', ''))})."
    if change.kind == "new-revision":
        return f"Spec revision *{subject}* was released and is now Current."
    return f"{escape(change.kind)}: *{subject}*"


def render_change(change: Change, source_url: str) -> tuple[str, list[dict[str, Any]]]:
    if change.kind in ("new-rc", "new-revision"):
        before, after = revision_summary(change.before), revision_summary(change.after)
        before_label = "Current before" if change.kind == "new-revision" else "Current"
    else:
        before, after = removal_summary(change.before), removal_summary(change.after)
        before_label = "Before"
    title = _title(change)
    lead = _lead(change)
    text = f"{escape(title)}. {lead}\n{before_label}: {escape(before)}\nAfter: {escape(after)}"
    blocks = [
        header(title),
        section(lead),
        fields([(before_label, escape(before)), ("After", escape(after))]),
        context(f"Source: <{source_url}>"),
    ]
    return clip(text, MAX_SECTION_CHARS), blocks


def render_operator(title: str, body: str, detail: str) -> tuple[str, list[dict[str, Any]]]:
    text = escape(f"{title}: {body}\n{detail}")
    blocks = [header(title), section(escape(body)), context(escape(detail))]
    return clip(text, MAX_SECTION_CHARS), blocks
