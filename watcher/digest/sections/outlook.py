"""Section 4, what is coming: the next spec revision, the SDK-beta window before it, the next earliest removal."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, timedelta

from watcher.digest.model import Feature, Outlook
from watcher.spec.calendar import beta_window, next_release
from watcher.spec.view import SpecView


def outlook(spec: SpecView, features: Iterable[Feature], today: date) -> Outlook:
    slot = next_release(spec.calendar, spec.revisions, today - timedelta(days=1), today)
    beta_start = beta_end = None
    beta_open = False
    if slot is not None:
        start, end = beta_window(spec.calendar, slot.date)
        beta_start, beta_end = start.isoformat(), end.isoformat()
        beta_open = start <= today <= end
    upcoming = [
        f
        for f in features
        if f.state == "deprecated" and f.earliest_removal and f.earliest_removal >= today.isoformat()
    ]
    first = min((f.earliest_removal for f in upcoming if f.earliest_removal), default=None)
    return Outlook(
        next_revision=slot.date.isoformat() if slot else None,
        next_revision_note=slot.note if slot else "no release projected by the calendar",
        next_revision_actual=bool(slot and slot.actual),
        next_revision_name=slot.revision if slot else None,
        beta_window_start=beta_start,
        beta_window_end=beta_end,
        beta_window_open=beta_open,
        next_removal=first,
        next_removal_days=(date.fromisoformat(first) - today).days if first else None,
        next_removal_features=[f.feature for f in upcoming if f.earliest_removal == first],
    )
