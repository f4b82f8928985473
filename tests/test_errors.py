"""The exception tree drawn in watcher/core/errors.py is the tree the code has."""

from __future__ import annotations

import importlib
import pkgutil
import re

import watcher
from watcher.core import errors


def _import_every_module() -> None:
    for module in pkgutil.walk_packages(watcher.__path__, "watcher."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)


def _subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub} | _subclasses(sub)
    return found


def _drawn_tree() -> dict[str, str]:
    """Class name → parent name, read from the docstring's box drawing (four columns per level)."""
    parents: dict[str, str] = {}
    stack: list[str] = []
    for line in (errors.__doc__ or "").splitlines():
        match = re.match(r"^    ((?:[│ ]   )*)(?:[├└]── )?([A-Z]\w+)\b", line)
        if not match:
            continue
        depth = len(match.group(1)) // 4 + (1 if "──" in line else 0)
        del stack[depth:]
        if stack:
            parents[match.group(2)] = stack[-1]
        stack.append(match.group(2))
    return parents


def test_every_public_error_derives_from_watcher_error_and_is_drawn_under_its_parent() -> None:
    _import_every_module()
    drawn = _drawn_tree()
    public = {cls for cls in _subclasses(errors.WatcherError) if not cls.__name__.startswith("_")}
    assert {cls.__name__ for cls in public} == set(drawn)
    for cls in public:
        assert cls.__bases__[0].__name__ == drawn[cls.__name__], cls


def test_errors_stay_importable_from_the_modules_that_raise_them() -> None:
    from watcher.boundary.toolchain import ToolMissing
    from watcher.core.errors import ConfigError, SchemaTooNew
    from watcher.sources.base import SourceError
    from watcher.spec.registry import RegistryFormatError
    from watcher.spec.seps import SepLookupError
    from watcher.suites.judge.conformance import ConformanceError

    assert ConfigError is errors.ConfigError and SchemaTooNew is errors.SchemaTooNew
    assert SourceError is errors.SourceError and RegistryFormatError is errors.RegistryFormatError
    assert SepLookupError is errors.SepLookupError and ConformanceError is errors.ConformanceError
    assert ToolMissing is errors.ToolMissing
