"""Reading a YAML settings file into typed settings: errors name the file, line and key, and say what was
expected. The sections themselves live beside the capability that owns them (`watcher/<capability>/settings.py`);
`watcher.config` assembles them."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from watcher.core import untrusted
from watcher.core.errors import ConfigError
from watcher.core.yaml_strict import Lines

DEFAULT_CONFIG = Path("config/watcher.yaml")


CONFIG_ENV = "MCP_WATCHER_CONFIG"


NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"


ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class StrictModel(BaseModel):
    """Every settings section: an unknown key is an error (a typo never silently means the default)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class LocatedError(ValueError):
    """Raised from a validator to point the error at another place of the document (a cross-reference, say)."""

    def __init__(self, loc: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.loc = loc


_M = TypeVar("_M", bound=BaseModel)


def config_path(explicit: str | os.PathLike[str] | None) -> Path:
    if explicit:
        return Path(explicit)
    env = os.environ.get(CONFIG_ENV)
    return Path(env) if env else DEFAULT_CONFIG


def yaml_with_lines(text: str, filename: str) -> tuple[Any, Lines]:
    """The operator's YAML document and the line of every key and item in it (for errors that name a line),
    read by the same strict reader as every file from outside (`watcher.core.untrusted`)."""
    data, lines = untrusted.yaml_document(text, filename, limits=untrusted.CENTRAL_CONFIG, expect=None)
    return ({} if data is None else data), lines


def validate_with_lines(model: type[_M], data: Any, filename: str, lines: Lines) -> _M:
    """Validate `data` as `model`; a ConfigError names file, line and key of every problem."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, filename, lines)) from exc


def _describe(exc: ValidationError, filename: str, lines: dict[tuple[str | int, ...], int]) -> str:
    messages = []
    for error in exc.errors():
        loc = tuple(error["loc"])
        ctx_error = (error.get("ctx") or {}).get("error")
        if isinstance(ctx_error, LocatedError):
            loc = ctx_error.loc
            what = str(ctx_error)
        elif error["type"] == "extra_forbidden":
            what = "unknown key (check the spelling; every key is in docs/configuration.md)"
        elif error["type"] == "missing":
            what = "required key is missing"
        else:
            what = f"{error['msg']} (got {error.get('input')!r})"
        line = _nearest_line(loc, lines)
        key = ".".join(str(part) for part in loc) or "(top level)"
        messages.append(f"{filename}:{line}: {key}: {what}")
    return "\n".join(messages)


def _nearest_line(loc: tuple[str | int, ...], lines: dict[tuple[str | int, ...], int]) -> int:
    for cut in range(len(loc), -1, -1):
        if loc[:cut] in lines:
            return lines[loc[:cut]]
    return 1
