"""Where watcher/ still says "a mapping of anything": every `dict[K, Any]`, `Dict[K, Any]`, `Mapping[K, Any]`,
`MutableMapping[K, Any]` (and their `typing` / `collections.abc` spellings, quoted annotations included), read
with `ast`. A type alias counts as each of its uses, in whichever module uses it (imported aliases resolved):
`Json = dict[str, Any]` used three times is three, and its definition none. Run as a script to print the
count per module: ``.venv/bin/python tests/any_dicts.py``."""

from __future__ import annotations

import ast
import functools
import sys
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "watcher"

MAPPINGS = frozenset({"dict", "Dict", "Mapping", "MutableMapping"})
"""The last part of the container's name: `dict`, `typing.Dict`, `collections.abc.Mapping`, …"""


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def sources(root: Path = PACKAGE) -> dict[str, str]:
    """Module name → its source, for every module of the package."""
    return {module_name(path, root): path.read_text(encoding="utf-8") for path in sorted(root.rglob("*.py"))}


def _last_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_any_mapping(node: ast.Subscript) -> bool:
    if _last_name(node.value) not in MAPPINGS or not isinstance(node.slice, ast.Tuple):
        return False
    elts = node.slice.elts
    return len(elts) == 2 and _last_name(elts[1]) == "Any"


def _quoted(node: ast.Constant) -> ast.expr | None:
    """A string that reads as a type expression (a quoted annotation), else None."""
    if not isinstance(node.value, str) or "Any" not in node.value:
        return None
    try:
        return ast.parse(node.value, mode="eval").body
    except SyntaxError:
        return None


def _count(node: ast.AST, weights: Mapping[str, int], *, quoted: bool) -> int:
    """The any-mappings in one expression: literal ones, plus each alias used times its own weight."""
    total = 0
    for inner in ast.walk(node):
        if isinstance(inner, ast.Subscript) and _is_any_mapping(inner):
            total += 1
        elif isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Load):
            total += weights.get(inner.id, 0)
        elif quoted and isinstance(inner, ast.Constant) and (expr := _quoted(inner)) is not None:
            total += _count(expr, weights, quoted=False)
    return total


def _alias_definitions(tree: ast.Module) -> Iterator[tuple[str, ast.expr]]:
    """Module-level type aliases: `X = <type>`, `X: TypeAlias = <type>` (a call is no alias; Python 3.11 has no
    `type X = …` statement)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if isinstance(node.value, ast.Subscript | ast.BinOp):
                yield node.targets[0].id, node.value
        elif (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.value is not None
            and _last_name(node.annotation) == "TypeAlias"
        ):
            yield node.target.id, node.value


def _imported_names(tree: ast.Module, module: str) -> Iterator[tuple[str, str]]:
    """(local name, "module.name") for each `from … import name [as local]`, relative imports resolved."""
    package = module.split(".")
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package[: len(package) - node.level + 1], *([base] if base else [])])
            for alias in node.names:
                yield alias.asname or alias.name, f"{base}.{alias.name}"


@functools.lru_cache(maxsize=1024)
def _parse(text: str, name: str) -> ast.Module:
    """Parsed once per text: the planted-use tests count the whole package again with one module changed."""
    return ast.parse(text, name)


def count_any_mappings(modules: Mapping[str, str]) -> Counter[str]:
    """Module name → how many any-mappings it spells or uses through an alias (modules with none left out)."""
    trees = {name: _parse(text, name) for name, text in modules.items()}
    imports = {name: list(_imported_names(tree, name)) for name, tree in trees.items()}
    aliases = {name: list(_alias_definitions(tree)) for name, tree in trees.items()}
    alias_weight: dict[str, int] = {}  # "module.Alias" → its weight

    def local_weights(module: str) -> dict[str, int]:
        weights = {local: alias_weight[full] for local, full in imports[module] if alias_weight.get(full)}
        weights.update({a: w for a, _ in aliases[module] if (w := alias_weight.get(f"{module}.{a}"))})
        return weights

    for _ in range(3):  # an alias of an alias of an alias, across modules
        for name in trees:
            if aliases[name]:
                weights = local_weights(name)
                for alias, value in aliases[name]:
                    alias_weight[f"{name}.{alias}"] = _count(value, weights, quoted=True)
    counts: Counter[str] = Counter()
    for name, tree in trees.items():
        weights = local_weights(name)
        definitions = {id(value) for _, value in aliases[name]}
        total = sum(_count(node, weights, quoted=True) for node in _outside(tree, definitions))
        if total:
            counts[name] = total
    return counts


def _outside(tree: ast.Module, skipped: set[int]) -> Iterator[ast.AST]:
    """The module's top-level statements, alias definitions' values left out (an alias counts where it is used)."""
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and id(node.value) in skipped:
            continue
        yield node


if __name__ == "__main__":
    found = count_any_mappings(sources())
    for name, n in sorted(found.items()):
        print(f"{n:5d}  {name}")
    print(f"{sum(found.values()):5d}  in {len(found)} modules", file=sys.stderr)
