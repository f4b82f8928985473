"""The exception tree drawn in watcher/core/errors.py is the tree the code has."""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys

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


def _drawn_tree() -> dict[str, tuple[str, str]]:
    """Class name → (parent name, its text), read from the docstring's box drawings (four columns per level);
    a root (WatcherError, or a Python base drawn for the signals outside it) has no entry of its own."""
    parents: dict[str, tuple[str, str]] = {}
    stack: list[str] = []
    current: str | None = None
    for line in (errors.__doc__ or "").splitlines():
        match = re.match(r"^    ((?:[│ ]   )*)(?:[├└]── )?([A-Z]\w+)\b", line)
        if not match:
            if current is not None and line.startswith("    "):
                parents[current] = (parents[current][0], parents[current][1] + " " + line.strip(" │"))
            else:
                current = None
            continue
        depth = len(match.group(1)) // 4 + (1 if "──" in line else 0)
        del stack[depth:]
        current = None
        if stack:
            current = match.group(2)
            parents[current] = (stack[-1], line[match.end() :].strip())
        stack.append(match.group(2))
    return parents


def _public_exceptions() -> set[type]:
    """Every public exception class defined in watcher/ (WatcherError, the root, aside)."""
    _import_every_module()
    found = set()
    for name, module in list(sys.modules.items()):
        if name == "watcher" or name.startswith("watcher."):
            for attribute, value in vars(module).items():
                if (
                    isinstance(value, type)
                    and issubclass(value, BaseException)
                    and value.__module__ == name
                    and not attribute.startswith("_")
                ):
                    found.add(value)
    return found - {errors.WatcherError}


def test_the_drawing_is_read() -> None:
    drawn = _drawn_tree()
    # A reader that found nothing, or lost the nesting, would pass the rule below.
    assert drawn["SchemaTooNew"][0] == "StateError" and drawn["StateError"][0] == "WatcherError"
    assert drawn["TooLarge"][0] == "ActionsError" and drawn["DuplicateKeyError"][0] == "YamlRefused"
    assert "(watcher.boundary.sandbox)" in drawn["RoomRefused"][1]


def misdrawn(drawn: dict[str, tuple[str, str]], public: set[type]) -> list[str]:
    """Where the drawing and the code disagree: a class drawn that the code lacks or the reverse, a parent
    that is not the class's first base, a module named that is not where it is defined."""
    found = [f"{name}: drawn, not in the code" for name in sorted(set(drawn) - {c.__name__ for c in public})]
    found += [f"{c.__name__}: in the code, not drawn" for c in public if c.__name__ not in drawn]
    for cls in sorted(public, key=lambda c: c.__name__):
        if cls.__name__ not in drawn:
            continue
        parent, text = drawn[cls.__name__]
        if cls.__bases__[0].__name__ != parent:
            found.append(f"{cls.__name__}: drawn under {parent}, derives from {cls.__bases__[0].__name__}")
        named = re.findall(r"\((watcher\.[\w.]+)\)", text)
        where = named[-1] if named else "watcher.core.errors"
        if cls.__module__ != where:
            found.append(f"{cls.__name__}: drawn in {where}, defined in {cls.__module__}")
    return found


def test_every_public_exception_is_drawn_under_its_parent_in_the_module_named() -> None:
    public = _public_exceptions()
    assert len(public) > 30
    assert not misdrawn(_drawn_tree(), public), "\n".join(misdrawn(_drawn_tree(), public))


def test_a_class_drawn_wrong_is_named() -> None:
    drawn, public = _drawn_tree(), _public_exceptions()
    planted = {**drawn, "CheckoutError": ("SuiteError", "a source (watcher.suites.source.fetch)"), "Gone": ("X", "")}
    del planted["ToolTimeout"]
    assert misdrawn(planted, public) == [
        "Gone: drawn, not in the code",
        "ToolTimeout: in the code, not drawn",
        "CheckoutError: drawn under SuiteError, derives from Exception",
        "CheckoutError: drawn in watcher.suites.source.fetch, defined in watcher.suites.source.checkout",
    ]


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
