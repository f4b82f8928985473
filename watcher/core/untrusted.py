"""The one door for data someone else wrote: team files, the suite's requirement sets and `checks.json`,
accept and task files, manifests in team repositories, CI reports, registry and API answers.

Reading a file: from a root the watcher chose, no link followed at any component, regular files only, at
most the kind's byte cap (`watcher.core.safe_files`). Parsing:

- YAML: no anchors or aliases, depth and node caps, unique keys, the line of every key
  (`watcher.core.yaml_strict`);
- JSON: orjson (which stops at 1024 levels), the standard library only for what orjson refuses, then the
  depth cap;
- XML: defusedxml with DTDs, entities and external references forbidden;
- TOML: tomllib, with its recursion turned into a refusal.

Every failure is an `UntrustedInputError` naming the file (and line where the format has lines): a link, a
path out of its folder, too large, too deep, an alias, not parseable, or a top level of the wrong type. The
text of an error never holds bytes of a file outside the root, because such a file is never opened.
"""

from __future__ import annotations

import datetime as dt
import json
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import defusedxml
import defusedxml.ElementTree
import orjson
import yaml

from watcher.core import yaml_strict
from watcher.core.errors import UntrustedInputError
from watcher.core.safe_files import FileRefused, check_tree_inside, exists_inside, files_inside, read_inside
from watcher.core.yaml_strict import Lines, YamlLimits

KIB = 1024
MIB = 1024 * KIB


@dataclass(frozen=True)
class Limits:
    """How much of one kind of input is read."""

    what: str
    max_bytes: int
    max_depth: int = 64
    """Nested lists and mappings (objects, arrays, elements), the top level included."""
    max_nodes: int = 50_000
    """YAML only: scalars, lists and mappings, keys included."""
    yaml_aliases: bool = False
    """YAML only: take anchors and aliases (the operator's own configuration), counted as they expand."""


CENTRAL_CONFIG = Limits("the configuration", 4 * MIB, yaml_aliases=True)
TEAM_FILE = Limits("the team file", 256 * KIB)
TASK_FILE = Limits("the task file", 1 * MIB)
ACCEPT_FILE = Limits("the accept file", 1 * MIB)
EXPECTED_FAILURES = Limits("the expected-failures file", 1 * MIB)
REQUIREMENT_SET = Limits("the requirement set", 1 * MIB)
SUITE_MANIFEST = Limits("the suite's package.json", 1 * MIB)
CHECKS = Limits("the checks.json", 16 * MIB)
MANIFEST = Limits("the manifest", 1 * MIB)
SNAPSHOT = Limits("a committed snapshot folder", 256 * MIB, max_depth=256)
"""A team's baseline snapshot: the contract reader (`watcher.contract.normalize`) parses it once it is checked."""
ANSWER = Limits("the answer", 1 << 62, max_depth=128)
"""Network answers: their size is the HTTP layer's cap (`http_client.max_response_bytes`), their depth ours."""
KINDS = (
    CENTRAL_CONFIG,
    TEAM_FILE,
    TASK_FILE,
    ACCEPT_FILE,
    EXPECTED_FAILURES,
    REQUIREMENT_SET,
    SUITE_MANIFEST,
    CHECKS,
    MANIFEST,
    SNAPSHOT,
    ANSWER,
)

_SHAPES: dict[type, str] = {dict: "a mapping", list: "a list"}


# --- files ----------------------------------------------------------------------------------------------


def read_bytes(root: Path | None, path: Path | str, *, limits: Limits, name: str | None = None) -> bytes:
    """The file's bytes. With a `root`, `path` (relative to it, or inside it) is reached without following a
    link; without one (the operator's own files, named on the command line or in the central config) it
    is opened as given. Either way at most `limits.max_bytes`."""
    shown = name or str(path)
    if root is None:
        try:
            with open(path, "rb") as handle:
                data = handle.read(limits.max_bytes + 1)
        except OSError as exc:
            raise UntrustedInputError(f"{shown}: cannot read {limits.what}: {exc.strerror or exc}") from exc
        if len(data) > limits.max_bytes:
            raise UntrustedInputError(f"{shown}: over the limit of {limits.max_bytes:,} bytes for {limits.what}")
        return data
    try:
        return read_inside(root, relative_to(root, path), limit=limits.max_bytes)
    except FileRefused as exc:
        raise UntrustedInputError(f"{shown}: {exc.problem}") from None


def relative_to(root: Path, path: Path | str) -> PurePosixPath:
    """`path` as a path below `root` (given relative, or absolute and inside it); refused otherwise."""
    candidate = Path(path)
    if not candidate.is_absolute():
        return PurePosixPath(candidate.as_posix())
    try:
        return PurePosixPath(candidate.relative_to(root).as_posix())
    except ValueError:
        raise UntrustedInputError(f"{path}: not inside {root}; refused") from None


def exists_under(root: Path, path: Path | str) -> bool:
    """Whether `path` (inside `root`) is there as anything, a link included (reading that is then refused);
    a link or a file on the way to it is refused here already."""
    try:
        return exists_inside(root, relative_to(root, path))
    except FileRefused as exc:
        raise UntrustedInputError(f"{path}: {exc.problem}") from None


def files_under(root: Path, folder: Path | str = ".") -> list[str]:
    """Every entry that is not a folder below `root/folder` (links included: reading one is refused),
    relative to `root`, without entering a folder through a link; a link on the way there is refused."""
    try:
        return files_inside(root, relative_to(root, folder) if str(folder) not in ("", ".") else ".")
    except FileRefused as exc:
        raise UntrustedInputError(f"{folder}: {exc.shown}: {exc.problem}") from None


def check_tree(root: Path, folder: Path | str, *, limits: Limits) -> None:
    """Refuse a folder someone else filled (a team's committed snapshot) that holds a link, anything but
    folders and regular files, or more than `limits.max_bytes` in all, before the watcher reads it."""
    try:
        check_tree_inside(root, relative_to(root, folder), limit=limits.max_bytes)
    except FileRefused as exc:
        raise UntrustedInputError(f"{folder}: {exc.shown}: {exc.problem}") from None


def text_of(data: bytes, name: str) -> str:
    """UTF-8 text (a byte-order mark dropped); anything else is refused with the byte's offset."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UntrustedInputError(f"{name}: not UTF-8 text (byte {exc.start:,})") from None


# --- YAML -----------------------------------------------------------------------------------------------


def yaml_document(
    text: str | bytes, name: str, *, limits: Limits, expect: type | None = dict, shape: str | None = None
) -> tuple[Any, Lines]:
    """The YAML document and the line of each key and item. An empty document is `expect()` (no entries);
    a top level of another type than `expect` is refused (`shape` says what was expected, for the message)."""
    if isinstance(text, bytes):
        if len(text) > limits.max_bytes:
            raise UntrustedInputError(f"{name}: over the limit of {limits.max_bytes:,} bytes for {limits.what}")
        text = text_of(text, name)
    elif len(text) > limits.max_bytes or len(text.encode("utf-8", "surrogatepass")) > limits.max_bytes:
        raise UntrustedInputError(f"{name}: over the limit of {limits.max_bytes:,} bytes for {limits.what}")
    try:
        data, lines = yaml_strict.parse(text, YamlLimits(limits.max_depth, limits.max_nodes, limits.yaml_aliases))
    except yaml_strict.YamlRefused as exc:
        raise UntrustedInputError(f"{name}:{_line(exc)}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise UntrustedInputError(f"{name}:{_line(exc)}: not valid YAML: {problem}") from None
    except (RecursionError, MemoryError) as exc:
        raise UntrustedInputError(f"{name}: too complex to read ({type(exc).__name__}); refused") from None
    if data is None and expect is not None:
        return expect(), lines
    _check_top(data, name, expect, shape, lines.get((), 1))
    return data, lines


def load_yaml(
    root: Path | None,
    path: Path | str,
    *,
    limits: Limits,
    name: str | None = None,
    expect: type | None = dict,
    shape: str | None = None,
) -> tuple[Any, Lines]:
    """`read_bytes` then `yaml_document`."""
    shown = name or str(path)
    return yaml_document(
        read_bytes(root, path, limits=limits, name=shown), shown, limits=limits, expect=expect, shape=shape
    )


def _line(exc: yaml.YAMLError) -> int:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    return mark.line + 1 if mark is not None else 1


# --- JSON -----------------------------------------------------------------------------------------------


def json_document(data: str | bytes, name: str, *, limits: Limits, expect: type | None = None) -> Any:
    """The JSON value, read by orjson (the standard library for what orjson refuses: NaN, Infinity, lone
    surrogates, integers past 64 bits); refused past the byte or depth cap or of the wrong top-level type."""
    size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
    if size > limits.max_bytes:
        raise UntrustedInputError(f"{name}: over the limit of {limits.max_bytes:,} bytes for {limits.what}")
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        try:
            value = json.loads(data)
        except ValueError as exc:
            raise UntrustedInputError(f"{name}: not valid JSON: {exc}") from None
        except RecursionError:
            raise UntrustedInputError(f"{name}: nested deeper than {limits.max_depth} levels; refused") from None
    if _depth_over(value, limits.max_depth):
        raise UntrustedInputError(f"{name}: nested deeper than {limits.max_depth} levels; refused")
    _check_top(value, name, expect, None, 1)
    return value


def answer_json(body: bytes, url: str, *, expect: type | None = None) -> Any:
    """A network answer's JSON (its size is the HTTP layer's to cap), named by its URL in errors."""
    return json_document(body, url, limits=ANSWER, expect=expect)


def load_json(
    root: Path | None, path: Path | str, *, limits: Limits, name: str | None = None, expect: type | None = None
) -> Any:
    """`read_bytes` then `json_document`."""
    shown = name or str(path)
    return json_document(read_bytes(root, path, limits=limits, name=shown), shown, limits=limits, expect=expect)


def _depth_over(value: Any, limit: int) -> bool:
    """Whether lists and mappings nest deeper than `limit` (walked with a stack, not recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Iterator[Any] = iter(item.values())
        elif isinstance(item, list):
            children = iter(item)
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


# --- TOML and XML ---------------------------------------------------------------------------------------


def toml_document(text: str, name: str, *, limits: Limits) -> dict[str, Any]:
    """The TOML document; refused past the caps or when tomllib refuses it (with its line and column)."""
    if len(text.encode("utf-8", "surrogatepass")) > limits.max_bytes:
        raise UntrustedInputError(f"{name}: over the limit of {limits.max_bytes:,} bytes for {limits.what}")
    try:
        value = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UntrustedInputError(f"{name}: not valid TOML: {exc}") from None
    except RecursionError:
        raise UntrustedInputError(f"{name}: nested deeper than {limits.max_depth} levels; refused") from None
    if _depth_over(value, limits.max_depth):
        raise UntrustedInputError(f"{name}: nested deeper than {limits.max_depth} levels; refused")
    return value


def load_toml(root: Path | None, path: Path | str, *, limits: Limits, name: str | None = None) -> dict[str, Any]:
    """`read_bytes`, UTF-8, then `toml_document`."""
    shown = name or str(path)
    return toml_document(text_of(read_bytes(root, path, limits=limits, name=shown), shown), shown, limits=limits)


def xml_document(data: str | bytes, name: str, *, limits: Limits) -> ET.Element:
    """The XML document's root element. A DTD (`<!DOCTYPE`), an entity declaration or an external
    reference is refused before anything is expanded or fetched."""
    size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
    if size > limits.max_bytes:
        raise UntrustedInputError(f"{name}: over the limit of {limits.max_bytes:,} bytes for {limits.what}")
    try:
        root: ET.Element = defusedxml.ElementTree.fromstring(
            data, forbid_dtd=True, forbid_entities=True, forbid_external=True
        )
    except defusedxml.DTDForbidden:
        raise UntrustedInputError(f"{name}: has a DTD (<!DOCTYPE …>); refused: XML is read without DTDs") from None
    except defusedxml.EntitiesForbidden:
        raise UntrustedInputError(f"{name}: declares an entity; refused: XML is read without entities") from None
    except defusedxml.ExternalReferenceForbidden:
        raise UntrustedInputError(f"{name}: refers to an external resource; refused") from None
    except ET.ParseError as exc:
        raise UntrustedInputError(f"{name}: not valid XML: {exc}") from None
    if _xml_depth_over(root, limits.max_depth):
        raise UntrustedInputError(f"{name}: nested deeper than {limits.max_depth} levels; refused")
    return root


def _xml_depth_over(root: ET.Element, limit: int) -> bool:
    stack = [(root, 1)]
    while stack:
        element, depth = stack.pop()
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in element)
    return False


# --- the top level --------------------------------------------------------------------------------------


def _check_top(value: Any, name: str, expect: type | None, shape: str | None, line: int) -> None:
    if expect is None or isinstance(value, expect):
        return
    wanted = shape or _SHAPES.get(expect, expect.__name__)
    raise UntrustedInputError(f"{name}:{line}: expected {wanted} at the top level, found {kind_of(value)}")


def kind_of(value: Any) -> str:
    """What a parsed value is, in words (never the value itself)."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a single text value"
    if isinstance(value, dt.date):
        return "a date"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


__all__ = [
    "ACCEPT_FILE",
    "ANSWER",
    "SNAPSHOT",
    "answer_json",
    "check_tree",
    "CENTRAL_CONFIG",
    "CHECKS",
    "EXPECTED_FAILURES",
    "KINDS",
    "Lines",
    "Limits",
    "MANIFEST",
    "REQUIREMENT_SET",
    "SUITE_MANIFEST",
    "TASK_FILE",
    "TEAM_FILE",
    "UntrustedInputError",
    "exists_under",
    "files_under",
    "json_document",
    "kind_of",
    "load_json",
    "load_toml",
    "load_yaml",
    "read_bytes",
    "relative_to",
    "text_of",
    "toml_document",
    "xml_document",
    "yaml_document",
]
