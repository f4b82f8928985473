"""The store owns every SQL statement: outside watcher/core/store*.py no module of watcher/ holds an SQL
statement, executes one, or reaches into a store's database (`.db`). Read from the source with `ast`, so a new
statement elsewhere fails here, naming its file and line; the run queue's one writer follows (every insert into
`runs` is in the store)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.import_graph import PACKAGE

STORE_MODULES = re.compile(r"^core/store(_\w+)?\.py$")
"""The store and its mixins (watcher/core/store.py, store_schema.py, store_clusters.py, …)."""

SQL = re.compile(
    r"^\s*(select\b[\s\S]+\bfrom\b|insert\s+(or\s+\w+\s+)?into\b|update\s+\w+\s+set\b|delete\s+from\b"
    r"|create\s+(unique\s+)?(table|index|view|trigger)\b|drop\s+(table|index|view)\b|alter\s+table\b|pragma\s+\w+)",
    re.IGNORECASE,
)
"""The start of an SQL statement (what a docstring or message rarely starts with)."""

EXECUTING = {"execute", "executemany", "executescript", "table"}
"""Calls that run SQL, or sqlite-utils' table object that writes it."""


def _text(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return None


def sql_outside_the_store(name: str, source: str) -> list[str]:
    """Each SQL statement, statement execution or store-database access in one module, as `name:line what`."""
    found = []
    tree = ast.parse(source)
    parts = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
    for node in ast.walk(tree):
        text = None if id(node) in parts else _text(node)
        if text is not None and SQL.search(text):
            found.append(f"{name}:{node.lineno} SQL {text.strip()[:60]!r}")
        elif isinstance(node, ast.Attribute) and node.attr in EXECUTING:
            found.append(f"{name}:{node.lineno} .{node.attr}(…)")
        elif isinstance(node, ast.Attribute) and node.attr == "db":
            found.append(f"{name}:{node.lineno} a store's .db")
    return found


def test_no_sql_lives_outside_the_store() -> None:
    outside = []
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 150  # a reader that found nothing would pass
    for path in modules:
        relative = path.relative_to(PACKAGE).as_posix()
        if not STORE_MODULES.match(relative):
            outside += sql_outside_the_store(relative, path.read_text(encoding="utf-8"))
    assert not outside, "SQL outside watcher/core/store*.py (give the store a typed method):\n" + "\n".join(outside)


def test_the_store_modules_do_hold_the_sql() -> None:
    # The reader recognises the statements where they belong: the rule above is not passing for want of a match.
    store = PACKAGE / "core" / "store.py"
    found = sql_outside_the_store("core/store.py", store.read_text(encoding="utf-8"))
    assert any("insert or ignore into runs" in line for line in found), found
    assert any(".execute(" in line for line in found)


def test_a_planted_statement_is_reported_with_its_place(tmp_path: Path) -> None:
    planted = (
        "def queue(store, server):\n"
        '    store.db.execute("insert into runs (server) values (?)", [server])\n'
        "def names(db):\n"
        '    return db.query(f"SELECT name FROM slack_mutes WHERE team = {1}")\n'
        'DOC = "Delete the old pictures: select them by week"\n'
    )
    assert sorted(sql_outside_the_store("decisions/records.py", planted)) == [
        "decisions/records.py:2 .execute(…)",
        "decisions/records.py:2 SQL 'insert into runs (server) values (?)'",
        "decisions/records.py:2 a store's .db",
        "decisions/records.py:4 SQL 'SELECT name FROM slack_mutes WHERE team = {}'",
    ]
