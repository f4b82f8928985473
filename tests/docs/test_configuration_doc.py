"""docs/configuration.md against the config model: every key documented with its real default, nothing else."""

from __future__ import annotations

import typing
from typing import Any

import yaml
from pydantic import BaseModel

from tests.docs.helpers import DOCS, code_spans, tables
from watcher.config import WatcherConfig
from watcher.sources import DEFAULT_BASES
from watcher.sources.settings import Registry

CONFIG_DOC = DOCS / "configuration.md"
REQUIRED = object()


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _nested_models(annotation: Any) -> tuple[list[type[BaseModel]], str]:
    """The models a field holds: one, a list of one, an optional one, or a union of several (`executor`)."""
    if _is_model(annotation):
        return [annotation], ""
    if typing.get_origin(annotation) is typing.Annotated:
        return _nested_models(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation)
        if _is_model(item):
            return [item], "[]"
    members = [m for m in typing.get_args(annotation) if m is not type(None)]
    if members and all(_is_model(m) for m in members):
        return members, ""
    return [], ""


def _keys(model: type[BaseModel], prefix: str = "") -> dict[str, Any]:
    """Every leaf key as the YAML spells it (`servers[].timeouts.install`, `log.json`) → its default.
    For a union of models the first one's default counts (the union's default member comes first)."""
    found: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        key = f"{prefix}{info.alias or name}"
        nested, suffix = _nested_models(info.annotation)
        for member in nested:
            for sub, default in _keys(member, f"{key}{suffix}.").items():
                found.setdefault(sub, default)
        if not nested:
            found[key] = REQUIRED if info.is_required() else info.get_default(call_default_factory=True)
    return found


def _documented() -> dict[str, tuple[str, int]]:
    """key → (its default cell, the table's line) from every `| key | default | meaning |` table."""
    found: dict[str, tuple[str, int]] = {}
    for table in tables(CONFIG_DOC):
        if table.header[:2] != ["key", "default"]:
            continue
        for row in table.rows:
            spans = code_spans(row[0])
            assert len(spans) == 1, f"docs/configuration.md:{table.line}: row {row[0]!r}: one `key` per row"
            assert spans[0] not in found, f"docs/configuration.md: `{spans[0]}` is documented twice"
            found[spans[0]] = (row[1], table.line)
    return found


def test_the_walk_sees_nested_and_aliased_keys():
    keys = _keys(WatcherConfig)
    assert {"state", "sdks[].url", "servers[].timeouts.install", "spec.calendar.moved", "log.json"} <= set(keys)


def test_every_configuration_key_is_documented_and_nothing_else():
    real, documented = _keys(WatcherConfig), _documented()
    problems = [f"docs/configuration.md: `{key}` is not documented" for key in real if key not in documented]
    problems += [
        f"docs/configuration.md:{line}: `{key}` is documented but not a configuration key"
        for key, (_, line) in documented.items()
        if key not in real
    ]
    assert not problems, "\n".join(problems)


def test_every_documented_default_is_the_real_one():
    real = _keys(WatcherConfig)
    problems = []
    for key, (cell, line) in _documented().items():
        if key not in real:
            continue  # reported by the test above
        default = real[key]
        if default is REQUIRED:
            if cell != "required":
                problems.append(f"docs/configuration.md:{line}: `{key}` has no default; write 'required'")
            continue
        spans = code_spans(cell)
        written = yaml.safe_load(spans[0]) if spans else "(none)"
        if written != default:
            problems.append(f"docs/configuration.md:{line}: `{key}` default is {default!r}, documented {written!r}")
    assert not problems, "\n".join(problems)


def test_what_url_means_is_said_for_every_registry():
    rows = {}
    for table in tables(CONFIG_DOC):
        if table.header[:2] == ["registry", "`url:` is"]:
            rows.update({code_spans(row[0])[0]: row for row in table.rows})
    registries = set(typing.get_args(Registry))
    assert registries == set(rows), f"url: table: missing {registries - set(rows)}, unknown {set(rows) - registries}"
    assert registries == set(DEFAULT_BASES)
    for name, row in rows.items():
        assert all(cell.strip() for cell in row), f"docs/configuration.md: the url: row of `{name}` has an empty cell"


def _team_file_keys() -> dict[str, Any]:
    """The team file's keys: a central server's, minus the platform's, `path` meaning the repository folder."""
    from watcher.repos.teamfile import DETECTED, NESTED_PLATFORM_KEYS, PLATFORM_KEYS
    from watcher.suites.settings import Server

    keys = _keys(Server, "servers[].")
    found = {
        key: "detected" if key.split(".")[1] in DETECTED else default
        for key, default in keys.items()
        if key.split(".")[1] not in (*PLATFORM_KEYS, "path", "source")
        and tuple(key.split(".")[1:3]) not in NESTED_PLATFORM_KEYS
    }
    found["servers[].path"] = ""
    return found


def test_every_team_file_key_is_documented_with_its_default():
    real = _team_file_keys()
    documented: dict[str, tuple[str, int]] = {}
    for table in tables(CONFIG_DOC):
        if table.header[:2] == ["team file key", "default"]:
            documented.update({code_spans(row[0])[0]: (row[1], table.line) for row in table.rows})
    assert set(real) == set(documented), (
        f"team file keys undocumented: {sorted(set(real) - set(documented))}; "
        f"documented but not keys: {sorted(set(documented) - set(real))}"
    )
    for key, (cell, line) in documented.items():
        default = real[key]
        if default is REQUIRED or default == "detected":
            want = "required" if default is REQUIRED else "detected"
            assert cell == want, f"docs/configuration.md:{line}: `{key}`: write {want!r}"
        else:
            assert yaml.safe_load(code_spans(cell)[0]) == default, f"docs/configuration.md:{line}: `{key}` default"
