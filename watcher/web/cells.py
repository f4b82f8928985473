"""The matrix rows' cells as HTML, built in Python: one call per row instead of a template macro per cell,
which was most of the page's cost at 100 servers × 20 versions. Every value is escaped here."""

from __future__ import annotations

from markupsafe import Markup, escape

from watcher.web.overview import Cell, ServerRow

# Triggers that are the service's own routine; any other (cli for `check`, manual, …) is named in the cell.
ROUTINE_TRIGGERS = frozenset({"release", "baseline"})


def _cell(cell: Cell) -> str:
    version = escape(cell.version)
    label = cell.state.replace("-", " ")
    badge = f'<span class="v v-{cell.state}">{label}</span>'
    if cell.run_id is None:
        return f'<td data-version="{version}" data-state="{cell.state}">{badge}</td>'
    trigger = escape(cell.trigger)
    note = f" · {trigger}" if cell.trigger not in ROUTINE_TRIGGERS else ""
    return (
        f'<td data-version="{version}" data-state="{cell.state}" data-trigger="{trigger}">'
        f'<a href="/runs/{cell.run_id}" title="{cell.state} · {escape(cell.at or "")} · {trigger}">'
        f"{badge}<small>{escape(cell.age)}{note}</small></a></td>"
    )


def row_cells(row: ServerRow) -> Markup:
    """The ``<td>`` of every cell of one server's row."""
    return Markup("".join(_cell(cell) for cell in row.cells))
