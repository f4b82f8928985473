"""Section 1, what is on its way out: the spec's registry rows (read through the spec's read model,
`watcher.spec.view`) as the digest's features, and the spec changes the spec watcher recorded since the team's
last digest."""

from __future__ import annotations

from datetime import datetime

from watcher.core.store import Store
from watcher.core.timefmt import parse_iso
from watcher.digest.model import ChangeItem, Feature
from watcher.spec.removal import DeprecationRow

SPEC_CHANGE_PREFIX = "spec-"
SPEC_CHANGE_KINDS = (
    "new-deprecation",
    "moved-to-removed",
    "earliest-removal-changed",
    "deprecation-gone",
    "new-rc",
    "new-revision",
)


def feature_of(row: DeprecationRow, servers: list[str]) -> Feature:
    return Feature(
        feature=row["feature"],
        key=row["key"],
        state=row["state"],
        deprecated_in=row.get("deprecated_in") or "",
        sep=row.get("sep") or "",
        migration=row.get("migration") or "",
        earliest_removal_text=row.get("earliest_removal_text") or "",
        window_starts=row.get("window_starts"),
        window_ends=row.get("window_ends"),
        earliest_removal=row.get("earliest_removal"),
        projected=bool(row.get("earliest_removal_projected")),
        days_left=row.get("days_left"),
        basis=row.get("basis") or "",
        resolved=bool(row.get("resolved")),
        flags=list(row.get("flags") or []),
        affected_servers=sorted(servers),
    )


def spec_changes(store: Store, since: datetime, until: datetime) -> list[ChangeItem]:
    items = []
    for event in store.events(since=since):
        kind = event["kind"].removeprefix(SPEC_CHANGE_PREFIX)
        if not event["kind"].startswith(SPEC_CHANGE_PREFIX) or kind not in SPEC_CHANGE_KINDS:
            continue
        created = parse_iso(event["created"])
        if created is not None and created >= until:
            continue
        payload = event["payload"]
        items.append(
            ChangeItem(
                kind=kind,
                subject=str(payload.get("subject", "")),
                before=payload.get("before"),
                after=payload.get("after"),
                recorded=event["created"],
            )
        )
    return items
