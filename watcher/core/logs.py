"""Logging set-up: plain or JSON lines, with secrets masked wherever they might slip in."""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime

from watcher.core import vault
from watcher.core.secret_policy import mask
from watcher.core.text import shown


class RedactingFilter(logging.Filter):
    """Rewrites each record's message with secrets masked, including the values of known secret variables."""

    def __init__(self, secret_env: tuple[str, ...] = ("SLACK_BOT_TOKEN", "SLACK_WEBHOOK_URL", "GITHUB_TOKEN")) -> None:
        super().__init__()
        self.secret_env = secret_env

    def filter(self, record: logging.LogRecord) -> bool:
        env = vault.environ()
        secrets = (*(env.get(name, "") for name in self.secret_env), *vault.held_values())
        message = record.getMessage()
        # A log line in a terminal is terminal output: outside text in it cannot send escape sequences.
        cleaned = shown(mask(message, secrets), keep="\n\t")
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key in ("source", "server", "run_id", "notice"):
            if hasattr(record, key):
                entry[key] = getattr(record, key)
        if record.exc_info:
            entry["exception"] = mask(self.formatException(record.exc_info), vault.held_values())
        return json.dumps(entry)


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes each line to the standard error of that moment, not the one at set-up: a stream swapped or
    closed since (a test's captured output, a daemon's redirect) is never written to."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


def setup_logging(level: str = "INFO", as_json: bool = False) -> None:
    handler = _StderrHandler(sys.stderr)
    handler.addFilter(RedactingFilter())
    handler.setFormatter(
        JsonFormatter() if as_json else logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # Third-party chatter stays at WARNING unless debugging.
    for noisy in ("httpx", "httpx2", "httpcore", "httpcore2", "apscheduler", "slack_sdk", "mcp", "uvicorn"):
        logging.getLogger(noisy).setLevel(logging.DEBUG if level == "DEBUG" else logging.WARNING)
