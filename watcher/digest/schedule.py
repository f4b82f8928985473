"""Sending the weekly digest: once per team and ISO week, through the outbox, with its timeline picture.

The digest time is ``digest.day_of_week`` / ``hour`` / ``minute`` in ``digest.timezone`` (an APScheduler
cron expression; default Monday 09:00 UTC). ``send_due_digests`` is idempotent and safe to call at any
time: a team gets its digest when this ISO week's digest time has passed, no digest for that team and week
is in the outbox yet (``keys.weekly_digest``), and the time is not more than
``misfire_grace_hours`` ago — so a service that was down at digest time sends it once when it is back.

Each digest is one parent message and its thread replies (see ``notices``), queued in one transaction.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from pathlib import Path
from typing import Any

from apscheduler.triggers.cron import CronTrigger

from watcher.config import LoadedConfig
from watcher.core.errors import ConfigError
from watcher.core.store import Store
from watcher.core.timefmt import utcnow
from watcher.decisions.buttons import digest_buttons, with_actions
from watcher.digest.build import build_digest
from watcher.digest.model import iso_week
from watcher.digest.notices import digest_notices, safe_name
from watcher.digest.settings import DigestSettings
from watcher.digest.timeline import digest_timeline, write_timeline
from watcher.notify import keys
from watcher.notify.settings import Team
from watcher.spec.view import SpecView

log = logging.getLogger(__name__)

JOB_ID = "digest"
KEEP_PICTURES_WEEKS = 13
"""Timeline pictures of digests older than this are deleted from the state folder (long delivered or given up on)."""


def digest_trigger(settings: DigestSettings) -> CronTrigger:
    """The configured digest time as a cron trigger; a bad day or time zone is a configuration error."""
    try:
        return CronTrigger(
            day_of_week=settings.day_of_week,
            hour=settings.hour,
            minute=settings.minute,
            timezone=settings.timezone,
        )
    except (ValueError, LookupError) as exc:  # unknown zone names raise a LookupError subclass
        raise ConfigError(
            f"digest: day_of_week={settings.day_of_week!r}, timezone={settings.timezone!r}: not usable: {exc}"
        ) from exc


def digest_zone(settings: DigestSettings) -> tzinfo:
    zone = digest_trigger(settings).timezone
    assert isinstance(zone, tzinfo)
    return zone


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def due_time(settings: DigestSettings, now: datetime) -> datetime | None:
    """This ISO week's digest time (in the configured zone) if it has passed by ``now``, else None."""
    trigger = digest_trigger(settings)
    zone = digest_zone(settings)
    local = _aware(now).astimezone(zone)
    monday = local.date() - timedelta(days=local.weekday())
    week_start = datetime.combine(monday, time(), tzinfo=zone)
    fire: datetime | None = trigger.get_next_fire_time(None, week_start)  # APScheduler is untyped
    if fire is None or fire > local or fire.isocalendar()[:2] != local.isocalendar()[:2]:
        return None
    return fire


@dataclass(frozen=True)
class QueuedDigest:
    key: str
    team: str
    week: str
    keys: list[str]
    """Every notice queued: the parent first, then the thread replies."""
    picture: Path


def pictures_dir(loaded: LoadedConfig) -> Path:
    return loaded.resolve(loaded.config.state).parent / "digests"


_PICTURE_WEEK = re.compile(r"_(\d{4})-W(\d{2})(?:[_.]|$)")


def prune_pictures(
    folder: Path, now: datetime, keep_weeks: int = KEEP_PICTURES_WEEKS, keep: Path | None = None
) -> list[Path]:
    """Delete the timeline pictures of digests more than ``keep_weeks`` ISO weeks before ``now``'s week,
    except ``keep`` (the picture just queued, whatever week it is for).

    The age comes from the week in the file's name, not from its modification time: file times are the
    system's, ``now`` is the service's clock, and the two need not agree (a rehearsal, a restored backup).
    """
    this_week = date.fromisocalendar(*now.isocalendar()[:2], 1)
    removed = []
    for path in folder.glob("digest_*.png"):
        match = _PICTURE_WEEK.search(path.stem)
        if match is None or path == keep:
            continue  # not a picture this code named: leave it alone
        try:
            week_monday = date.fromisocalendar(int(match[1]), int(match[2]), 1)
        except ValueError:
            continue
        if (this_week - week_monday).days > keep_weeks * 7:
            try:
                path.unlink()
                removed.append(path)
            except OSError:
                continue  # another process pruned it first
    return removed


def queue_digest(
    loaded: LoadedConfig,
    store: Store,
    team: Team,
    now: datetime,
    *,
    today: date | None = None,
    force: bool = False,
    spec: SpecView | None = None,
) -> QueuedDigest | None:
    """Queue one team's digest for the ISO week of ``today`` (default: ``now`` in the digest's zone).

    None when that week's digest is already in the outbox (unless ``force``: then a distinct key is used).
    ``spec``: the spec as just read (default: the state's copy).
    """
    now = _aware(now)
    local_today = now.astimezone(digest_zone(loaded.config.digest)).date()
    today = today or local_today
    week = iso_week(today)
    base = keys.weekly_digest(team.name, week)
    if not force and store.outbox_row(base) is not None:
        return None
    key = keys.forced_digest(team.name, week, now) if force else base
    until = now if today == local_today else datetime.combine(today + timedelta(days=1), time(), tzinfo=UTC)
    digest = build_digest(loaded, store, team.name, today, until=until, spec=spec)
    picture = write_timeline(digest_timeline(digest), pictures_dir(loaded) / f"{safe_name(key)}.png")
    notices = digest_notices(digest, key, picture)
    if notices:  # Open deprecations, on the parent message (when Slack can answer buttons and the page has a URL)
        parent = notices[0]
        notices[0] = dataclasses.replace(parent, blocks=with_actions(parent.blocks, digest_buttons(loaded.config)))
    with store.transaction():
        # Another process may have queued it since the check above: the parent's key decides.
        if store.outbox_row(key) is not None:
            return None
        for notice in notices:
            store.enqueue(notice)
    log.info("digest %s queued for %s: %d message(s) and the timeline picture", key, team.slack_channel, len(notices))
    prune_pictures(picture.parent, now, keep=picture)
    return QueuedDigest(key, team.name, week, [n.key for n in notices], picture)


def digest_teams(loaded: LoadedConfig) -> list[Team]:
    return [team for team in loaded.config.teams if team.digest]


def send_due_digests(loaded: LoadedConfig, store: Store, now: datetime | None = None, force: bool = False) -> list[str]:
    """Queue the digest of every team that is due (see the module's docstring). Returns the parents' keys.

    ``force``: queue now for every digest team, even before the digest time or when already queued.
    """
    now = _aware(now or utcnow())
    settings = loaded.config.digest
    if not force:
        due = due_time(settings, now)
        if due is None:
            return []
        late = now - due
        if late > timedelta(hours=settings.misfire_grace_hours):
            log.warning(
                "digest time %s passed %.1f h ago, beyond digest.misfire_grace_hours (%s): not sent this week",
                due.isoformat(),
                late.total_seconds() / 3600,
                settings.misfire_grace_hours,
            )
            return []
    queued: list[str] = []
    for team in digest_teams(loaded):
        try:
            result = queue_digest(loaded, store, team, now, force=force)
        except ConfigError:
            raise
        except Exception:  # one team's broken data must not keep the other teams' digests back
            log.exception("digest for team %s could not be assembled", team.name)
            continue
        if result is not None:
            queued.append(result.key)
    return queued


def register_digest_job(
    scheduler: Any,
    settings: DigestSettings,
    job: Callable[[], None],
    *,
    catch_up: bool = True,
    job_id: str = JOB_ID,
) -> Any:
    """Add the weekly cron job to an APScheduler scheduler; returns the job.

    ``misfire_grace_time`` and ``coalesce`` let a scheduler that was busy or paused at the digest time run
    it once late. A restarted process has no memory of the missed time, so ``catch_up`` also runs ``job``
    once at start: ``send_due_digests`` then sends this week's digest if it is due and not sent yet.
    """
    cron = scheduler.add_job(
        job,
        trigger=digest_trigger(settings),
        id=job_id,
        name=job_id,
        misfire_grace_time=max(1, int(settings.misfire_grace_hours * 3600)),
        coalesce=True,
        max_instances=1,
        replace_existing=True,
    )
    if catch_up:
        scheduler.add_job(
            job,
            trigger="date",
            id=f"{job_id}-catch-up",
            name=f"{job_id}-catch-up",
            misfire_grace_time=None,
            max_instances=1,
            replace_existing=True,
        )
    return cron
