"""Family `evolution`: the common mistakes of evolving a server, as lints. A lint breaks nothing by
itself (grade `lint`); it fails a run only with `--fail-on lints`.

Looked at: a tool's description (a deprecation notice without a date or version), removals (without a
notice in the baseline, or before the date the notice named) and server.json's list cache lifetimes
(`listTtlMs`: a long one without `listChanged` leaves clients on a stale list).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator, Mapping
from typing import Any

from watcher.contract.rules.base import Change, Compared, Rule, make_change

FAMILY = "evolution"
DEPRECATED_WITHOUT_DATE = Rule(
    id="deprecated_without_removal_date",
    family=FAMILY,
    doc="A tool's description says it is deprecated but names no removal date or version: clients cannot plan.",
    breaks_clients=False,
    affects_models=False,
    lint=True,
)
REMOVED_BEFORE_ANNOUNCED_DATE = Rule(
    id="removed_before_announced_date",
    family=FAMILY,
    doc="A tool was removed before the date its own deprecation notice (in the baseline's description) named.",
    breaks_clients=False,
    affects_models=False,
    lint=True,
)
REMOVED_WITHOUT_DEPRECATION = Rule(
    id="removed_without_deprecation",
    family=FAMILY,
    doc="A tool was removed with no deprecation notice in the previous version: clients had no warning.",
    breaks_clients=False,
    affects_models=False,
    lint=True,
)
LONG_TTL_WITHOUT_LIST_CHANGED = Rule(
    id="long_ttl_without_list_changed",
    family=FAMILY,
    doc="A list is cached for long (ttlMs ≥ 1 hour) while the server does not declare listChanged for it: "
    "clients keep a stale list after an update.",
    breaks_clients=False,
    affects_models=False,
    lint=True,
)

RULES = (
    DEPRECATED_WITHOUT_DATE,
    REMOVED_BEFORE_ANNOUNCED_DATE,
    REMOVED_WITHOUT_DEPRECATION,
    LONG_TTL_WITHOUT_LIST_CHANGED,
)

LONG_TTL_MS = 3_600_000
_DEPRECATED = re.compile(r"\bdeprecat", re.IGNORECASE)
_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
_VERSION = re.compile(r"\b(?:v|version\s*)?\d+\.\d+(?:\.\d+)?\b", re.IGNORECASE)
_LIST_CAPABILITY = {"tools": "tools", "prompts": "prompts", "resources": "resources", "resource-templates": "resources"}


def check(compared: Compared) -> Iterator[Change]:
    """Three shapes of `compared`: the server.json records (list "server"); the entries on one side only
    of a list (name == list name, before = removed, after = added); one tool as both sides have it."""
    if compared.list_name == "server":
        yield from _cache_lifetimes(compared)
    elif compared.name == compared.list_name:
        if compared.list_name == "tools":
            yield from _removals(compared.before, compared.today)
    elif compared.list_name == "tools" and compared.after is not None:
        yield from _undated_deprecation(compared)


def deprecation_notice(entry: Any) -> str | None:
    description = entry.get("description") if isinstance(entry, dict) else None
    return description if isinstance(description, str) and _DEPRECATED.search(description) else None


def _undated_deprecation(compared: Compared) -> Iterator[Change]:
    notice = deprecation_notice(compared.after)
    if notice is None or _DATE.search(notice) or _VERSION.search(notice):
        return
    if compared.before is not None and deprecation_notice(compared.before) == notice:
        return  # reported when it first appeared
    yield make_change(
        DEPRECATED_WITHOUT_DATE,
        compared.list_name,
        compared.name,
        "description",
        None,
        notice,
        "say when it goes, e.g. 'deprecated: removed after 2027-03-31 (use get-widget)'",
    )


def _removals(removed: Mapping[str, Any], today: dt.date | None) -> Iterator[Change]:
    for name in sorted(removed):
        notice = deprecation_notice(removed[name])
        if notice is None:
            yield make_change(
                REMOVED_WITHOUT_DEPRECATION,
                "tools",
                name,
                None,
                removed[name].get("description"),
                None,
                "mark a tool deprecated (with a removal date) for a release before removing it",
            )
            continue
        dates = sorted(dt.date.fromisoformat(d) for d in _DATE.findall(notice) if _valid(d))
        if today is not None and dates and today < dates[-1]:
            yield make_change(
                REMOVED_BEFORE_ANNOUNCED_DATE,
                "tools",
                name,
                None,
                dates[-1].isoformat(),
                today.isoformat(),
                f"its notice promised it until {dates[-1].isoformat()}",
            )


def _valid(text: str) -> bool:
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _cache_lifetimes(compared: Compared) -> Iterator[Change]:
    after: dict[str, Any] = compared.after or {}
    before: dict[str, Any] = compared.before or {}
    capabilities = after.get("capabilities") or {}
    for list_name, ttl in sorted((after.get("listTtlMs") or {}).items()):
        if not isinstance(ttl, int | float) or ttl < LONG_TTL_MS:
            continue
        capability = capabilities.get(_LIST_CAPABILITY.get(list_name, list_name))
        if isinstance(capability, dict) and capability.get("listChanged") is True:
            continue
        old_ttl = (before.get("listTtlMs") or {}).get(list_name)
        old_capability = (before.get("capabilities") or {}).get(_LIST_CAPABILITY.get(list_name, list_name))
        if old_ttl == ttl and old_capability == capability:
            continue  # unchanged since the baseline: reported then
        yield make_change(
            LONG_TTL_WITHOUT_LIST_CHANGED,
            compared.list_name,
            list_name,
            f"listTtlMs.{list_name}",
            old_ttl,
            ttl,
            "declare listChanged for this list, or shorten its ttlMs",
        )
