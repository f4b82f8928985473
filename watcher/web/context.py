"""What every page reads from: the config (the service's live one, read for each page), the state, the clock,
and the secrets to mask."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from watcher.config import LoadedConfig, secret_env_names
from watcher.core import vault
from watcher.core.secret_policy import mask
from watcher.core.store import Store
from watcher.core.timefmt import utcnow
from watcher.live import ConfigSource


@dataclass(frozen=True)
class WebContext:
    source: ConfigSource
    """The service's live configuration (or, in tests and one-off renders, a fixed one)."""
    store: Store
    now: Callable[[], datetime] = utcnow
    """Injected so that ages and countdowns are testable without the wall clock."""
    secrets: tuple[str, ...] = field(default_factory=tuple)
    """Values that must never appear on a page (masked wherever free text from the state is shown)."""

    @property
    def loaded(self) -> LoadedConfig:
        """The configuration in force now (a page reads it once and keeps it for that one render)."""
        return self.source.loaded

    def clean(self, text: object) -> str:
        """Free text from the state (errors, log tails) with every known secret masked."""
        return mask(str(text), self.secrets)


def known_secrets(
    loaded: LoadedConfig, environ: Mapping[str, str] | None = None, extra: tuple[str, ...] = ()
) -> tuple[str, ...]:
    """The values of the watcher's secret variables (Slack, GitHub, the page token), to mask on pages."""
    env = vault.environ() if environ is None else environ
    values = [env.get(name, "") for name in sorted(secret_env_names(loaded.config))]
    return tuple(v for v in (*values, *extra) if v and len(v) >= 4)


def age(moment: datetime | None, now: datetime) -> str:
    """A short age: "45 s", "12 min", "3 h", "4 d"."""
    if moment is None:
        return ""
    seconds = max(0, int((now - moment).total_seconds()))
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 90 * 60:
        return f"{seconds // 60} min"
    if seconds < 36 * 3600:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} d"
