"""Reading a YAML settings file into typed settings: errors name the file, line and key, and say what was
expected. The sections themselves live beside the capability that owns them (`watcher/<capability>/settings.py`);
`watcher.config` assembles them."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from watcher.core.errors import ConfigError
from watcher.core.yaml_strict import DuplicateKeyError, UniqueKeyLoader

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


Lines = dict[tuple[str | int, ...], int]


_M = TypeVar("_M", bound=BaseModel)


def config_path(explicit: str | os.PathLike[str] | None) -> Path:
    if explicit:
        return Path(explicit)
    env = os.environ.get(CONFIG_ENV)
    return Path(env) if env else DEFAULT_CONFIG


def yaml_with_lines(text: str, filename: str) -> tuple[Any, Lines]:
    """The YAML document and the line of every key and item in it (for errors that name a line)."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{filename}:{mark.line + 1}" if mark else filename
        raise ConfigError(f"{where}: not valid YAML: {getattr(exc, 'problem', exc)}") from exc
    if node is None:
        return {}, {}
    lines: Lines = {}
    _index_lines(node, (), lines)
    _check_dates(node, (), filename)
    try:
        data = yaml.load(text, Loader=UniqueKeyLoader)  # noqa: S506 (a SafeLoader subclass)
    except DuplicateKeyError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else 1
        raise ConfigError(f"{filename}:{line}: {exc.problem}") from exc
    return data, lines


def _check_dates(node: yaml.Node, loc: tuple[str | int, ...], filename: str) -> None:
    """A date-shaped value that is no date (2027-13-01) fails in the YAML library without a line: name it."""
    if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:timestamp":
        try:
            yaml.SafeLoader("").construct_yaml_timestamp(node)
        except ValueError as exc:
            key = ".".join(str(part) for part in loc)
            line = node.start_mark.line + 1
            raise ConfigError(f"{filename}:{line}: {key}: {node.value!r} is not a valid date: {exc}") from exc
    elif isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            _check_dates(value_node, (*loc, key_node.value), filename)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _check_dates(item, (*loc, index), filename)


def validate_with_lines(model: type[_M], data: Any, filename: str, lines: Lines) -> _M:
    """Validate `data` as `model`; a ConfigError names file, line and key of every problem."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, filename, lines)) from exc


def _index_lines(node: yaml.Node, loc: tuple[str | int, ...], out: dict[tuple[str | int, ...], int]) -> None:
    out[loc] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value
            out[(*loc, key)] = key_node.start_mark.line + 1
            _index_lines(value_node, (*loc, key), out)
            out[(*loc, key)] = key_node.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _index_lines(item, (*loc, i), out)


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
