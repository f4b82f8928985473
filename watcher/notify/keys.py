"""Every key a notice, an event or a suite run is filed under: one function per format.

Keys are idempotency keys. The outbox ignores a notice whose key it already holds and the event log an event
whose key it already holds, so a crash or a second process repeats nothing — and a format must never change
(a new spelling would send every notice again). A thread reply names its parent by the parent's key. A notice
that tells several teams (or channels) about one event is keyed by the event's key and the team (or channel).
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

BASELINE_PREFIX = "baseline:"

NOTICE_KINDS: dict[str, str] = {
    "release": "a new SDK version, to each team watching the SDK (`release_alert`)",
    "suite_result": "one server's suite result, in the version's thread (`suite_result`)",
    "evaluation_result": "one server's model evaluation, in the version's thread (`evaluation_result`)",
    "digest": "the weekly deprecation digest and its continuation replies (`weekly_digest`, `digest_reply`)",
    "spec-new-deprecation": "a feature added to the spec's deprecated-features registry (`spec_registry_change`)",
    "spec-moved-to-removed": "a deprecated feature moved to Removed (`spec_registry_change`)",
    "spec-earliest-removal-changed": "a feature's earliest removal changed (`spec_registry_change`)",
    "spec-deprecation-gone": "a feature no longer listed (`spec_registry_change`)",
    "spec-new-rc": "a spec release candidate published (`spec_release_change`)",
    "spec-new-revision": "a spec revision released (`spec_release_change`)",
    "spec-registry-unreadable": "operators: the spec registry cannot be read (`spec_source_unreadable`)",
    "spec-registry-recovered": "operators: the spec registry is readable again (`spec_source_recovered`)",
    "spec-releases-unreadable": "operators: the spec's releases cannot be read (`spec_source_unreadable`)",
    "spec-releases-recovered": "operators: the spec's releases are readable again (`spec_source_recovered`)",
    "spec-unresolved": "operators: an earliest removal that could not be computed (`spec_unresolved`)",
    "source-health": "operators: an SDK registry down for a while, and back (`source_down`, `source_recovered`)",
    "repo-config-error": "a team repository's file cannot be used (`repo_config_error`)",
    "repo-onboarding": "the one onboarding message of a team repository (`repo_onboarding`)",
    "repo-proposal": "a team repository without a team file: what was found and the file proposed (`repo_proposal`)",
    "repo-unowned": "operators: discovery found a repository no ownership rule maps (`repo_unowned`)",
    "server-onboarding": "the onboarding message of a server that appeared later (`server_onboarding`)",
    "cluster": "the one reply to each team of a failure cluster that spans several teams (`cluster_reply`)",
    "cluster_upstream": "operators: a new failure cluster with a draft upstream report (`cluster_upstream`)",
    "readiness": "a team's readiness for the next spec revision (`readiness:<revision>:<team>`)",
    "readiness-candidate": "operators: a candidate suite judges a server apart (`readiness:candidate:…`)",
    "backtest": "a backtest's answer posted with `backtest --post` (`backtest:<id>:<generated>:<team>`)",
    "slack_action": "what a click or command in Slack did, in its thread (`slack-action:<id>`)",
}
"""Every kind of notice the watcher sends (a notice's `kind`), with where its key comes from. A test reads
every `Notice(...)` in the code and fails on a kind missing here; another sends each kind, hostile text in
every outside field, to the loopback Slack, and fails on a kind without such a case."""


def for_team(event_key: str, team: str) -> str:
    """The notice that tells ``team`` about the event ``event_key``."""
    return f"{event_key}:{team}"


def for_channel(event_key: str, channel: str) -> str:
    """The operator alert about ``event_key`` posted in ``channel``."""
    return f"{event_key}:{channel}"


def short_hash(text: str) -> str:
    """12 hex characters that tell texts apart inside a key (an error message, a registry text)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


# --- SDK releases and the suite runs they lead to ---------------------------------------------------------


def release_event(sdk: str, version: str) -> str:
    """A new version of an SDK, seen by polling; also the trigger of the suite runs it queues."""
    return f"release:{sdk}:{version}"


def release_alert(sdk: str, version: str, team: str) -> str:
    """The alert about a new version to one team: the thread its suite results reply in."""
    return for_team(release_event(sdk, version), team)


def baseline_trigger(sdk: str, version: str) -> str:
    """The trigger of a suite run queued because ``sdk`` was just baselined at ``version``."""
    return f"{BASELINE_PREFIX}{sdk}:{version}"


def is_baseline_trigger(trigger: str | None) -> bool:
    return (trigger or "").startswith(BASELINE_PREFIX)


def suite_result(server: str, version: str, team: str) -> str:
    """One server's suite result on one SDK version, to its team."""
    return f"run:{server}:{version}:{team}"


def evaluation_result(server: str, version: str, team: str) -> str:
    """One server's paired model evaluation on one SDK version, to its team (a reply in the beta's thread)."""
    return f"eval:{server}:{version}:{team}"


def cluster_event(sdk: str, version: str, signature: str) -> str:
    """A failure cluster (one signature on one SDK version) that crossed `clusters.threshold_teams`."""
    return f"cluster:{sdk}:{version}:{signature}"


def cluster_reply(sdk: str, version: str, signature: str, team: str) -> str:
    """The one reply telling ``team`` its result is in that cluster (in the thread of the version's alert)."""
    return for_team(cluster_event(sdk, version, signature), team)


def cluster_upstream(sdk: str, version: str, signature: str, channel: str) -> str:
    """The operators' notice of that cluster, with the draft upstream report, in ``channel``."""
    return for_channel(f"{cluster_event(sdk, version, signature)}:upstream", channel)


# --- the weekly digest ----------------------------------------------------------------------------------------


def weekly_digest(team: str, week: str) -> str:
    """The parent message of a team's digest for an ISO week (``2026-W49``): one per team and week."""
    return f"digest:{team}:{week}"


def forced_digest(team: str, week: str, moment: datetime) -> str:
    """A digest sent again on request (``digest --send --force``): distinct from the week's own and each other."""
    return f"{weekly_digest(team, week)}:forced-{moment.astimezone(UTC):%Y%m%dT%H%M%SZ}"


def digest_reply(parent_key: str, number: int) -> str:
    """The ``number``-th message of a digest (2, 3, …), posted in the parent's thread."""
    return f"{parent_key}:part{number}"


# --- the spec watcher ----------------------------------------------------------------------------------------


def source_down(source: str, since: str) -> str:
    """An SDK registry or the spec that has failed without a break since ``since`` (an operator alert)."""
    return f"source-down:{source}:{since}"


def source_recovered(source: str, since: str) -> str:
    """That source readable again after the outage that began at ``since``."""
    return f"source-recovered:{source}:{since}"


def spec_registry_change(generation: int, kind: str, feature_key: str) -> str:
    """A change of one registry row, found when the registry's ``generation`` was stored."""
    return f"spec:registry:g{generation}:{kind}:{feature_key}"


def spec_release_change(kind: str, tag: str) -> str:
    """A spec release candidate or revision (``kind`` new-rc or new-revision) published under ``tag``."""
    return f"spec:{kind}:{tag}"


def spec_source_unreadable(source: str, episode: int, error: str) -> str:
    """A spec source ("registry", "releases") that cannot be read: one alert per episode and distinct error."""
    return f"spec:{source}-unreadable:{episode}:{short_hash(error)}"


def spec_source_recovered(source: str, episode: int) -> str:
    """A spec source readable again after the episode of errors numbered ``episode``."""
    return f"spec:{source}-recovered:{episode}"


def spec_unresolved(feature_key: str, removal_text: str, basis: str) -> str:
    """A registry row whose earliest removal could not be computed, for this text and reason."""
    return f"spec:unresolved:{feature_key}:{short_hash(removal_text + '|' + basis)}"


# --- state kept by delivery ---------------------------------------------------------------------------------


def slack_channel_id(channel: str) -> str:
    """The key-value entry that caches the id Slack gave the channel named ``channel`` (``#name``)."""
    return f"slack_channel_id:{channel}"


def repo_config_error(git: str, error: str, team: str) -> str:
    """A team repository's file (or fetch) failing: once per distinct error (the error names the commit)."""
    return for_team(f"repo-config:{short_hash(git)}:{short_hash(error)}", team)


def repo_onboarding(git: str, team: str) -> str:
    """The one onboarding message of a team repository."""
    return for_team(f"repo-onboarding:{short_hash(git)}", team)


def repo_proposal(git: str, team: str) -> str:
    """The one onboarding message of a repository without a team file: what was found, the file proposed."""
    return for_team(f"repo-proposal:{short_hash(git)}", team)


def repo_unowned(git: str, channel: str) -> str:
    """The operators told once that discovery found a repository no ownership rule maps."""
    return for_channel(f"repo-unowned:{short_hash(git)}", channel)


ONBOARDING_PREFIX = "onboarding:"


def onboarding_trigger(git: str) -> str:
    """The trigger of a team repository's first runs: their verdicts go in its onboarding message."""
    return f"{ONBOARDING_PREFIX}{short_hash(git)}"


def server_onboarding_trigger(server: str) -> str:
    """The trigger of the first run of a server that appeared later (in a repository already watched, or in the
    central file): its verdict goes in that server's own onboarding message."""
    return f"{ONBOARDING_PREFIX}server:{server}"


def server_onboarding(server: str, since: str, team: str) -> str:
    """The onboarding message of a server that appeared (once per appearance)."""
    return for_team(f"server-onboarding:{server}:{since}", team)


def is_onboarding_trigger(trigger: str | None) -> bool:
    return (trigger or "").startswith(ONBOARDING_PREFIX)
