"""The matrix rows' cells as HTML, built in Python: one call per row instead of a template macro per cell,
which was most of the page's cost at 100 servers × 20 versions. Every value is escaped here."""

from __future__ import annotations

import functools

from markupsafe import Markup, escape

from watcher.web.overview import Cell, ServerRow

ROUTINE_TRIGGERS = frozenset({"release", "baseline"})
"""The service's own triggers; any other (cli for a `check`, manual, …) is named in the cell."""


@functools.lru_cache(maxsize=8192)
def _text(value: str) -> str:
    """Escaped once per distinct text: a matrix repeats its versions, ages, moments and triggers."""
    return str(escape(value))


@functools.lru_cache(maxsize=64)
def _badge(state: str) -> str:
    return f'<span class="v v-{_text(state)}">{_text(state.replace("-", " "))}</span>'


AGE_WORDS = {"queued": "queued ", "running": "started "}
"""The moment a cell's age counts from, said before it ("3 min ago" alone: since the run finished)."""


def _cell(cell: Cell) -> str:
    version = _text(cell.version)
    if cell.run_id is None:
        return f'<td data-version="{version}" data-state="{cell.state}">{_badge(cell.state)}</td>'
    trigger = _text(cell.trigger)
    note = f" · {trigger}" if cell.trigger not in ROUTINE_TRIGGERS else ""
    return (
        f'<td data-version="{version}" data-state="{cell.state}" data-trigger="{trigger}">'
        f'<a href="/runs/{cell.run_id}" title="{cell.state} · {_text(cell.at or "")} · {trigger}">'
        f"{_badge(cell.state)}<small>{AGE_WORDS.get(cell.state, '')}{_text(cell.age)} ago{note}</small></a></td>"
    )


def row_cells(row: ServerRow) -> Markup:
    """The ``<td>`` of every cell of one server's row."""
    return Markup("".join(_cell(cell) for cell in row.cells))
