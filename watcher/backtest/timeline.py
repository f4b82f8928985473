"""The backtest's picture: one row per release line, each version a marker on a time axis (colour = verdict,
hollow = pre-release, filled = final), and an arrow per warned problem from the first pre-release that
showed it to the final that shipped it, labelled with the lead time. `render` returns the PNG with what was
drawn, read back from the figure's artists, so tests check the figure's data rather than pixels."""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from datetime import date, timedelta

import matplotlib.dates as mdates
from matplotlib.backend_bases import RendererBase
from matplotlib.figure import Figure  # a bare Figure draws off-screen (Agg) without pyplot's global state
from matplotlib.lines import Line2D
from matplotlib.text import Annotation

from watcher.backtest.analysis import WARNED
from watcher.backtest.answer import BacktestAnswer
from watcher.backtest.render import grouped
from watcher.digest.labels import LabelBox, Place, box_of, drawn_labels, freeze_layout, place_apart

WIDTH_PX = 1200
DPI = 100
ROW_PX = 110
BASE_PX = 230
COLORS = {"pass": "#2f9e44", "fail": "#e03131", "error": "#868e96", "not run": "#dee2e6"}
ARROW_COLOR = "#1c7ed6"


@dataclass(frozen=True)
class Marker:
    version: str
    day: date
    line: str
    verdict: str
    prerelease: bool


@dataclass(frozen=True)
class LeadArrow:
    line: str
    start: date
    end: date
    label: str


@dataclass(frozen=True)
class Picture:
    png: bytes
    markers: list[Marker]
    arrows: list[LeadArrow]
    lines: list[str]
    labels: list[LabelBox] = field(default_factory=list)
    """Every text drawn, with its box in pixels (none covers another)."""
    hidden_labels: list[str] = field(default_factory=list)
    """Version numbers left out for want of room (their markers are drawn; the table lists every version)."""


VERSION_PLACES: tuple[Place, ...] = tuple((0.0, 16.0 * level, "center") for level in range(1, 4)) + tuple(
    (dx, 16.0 * level, align) for level in range(0, 4) for dx, align in ((-8.0, "right"), (8.0, "left"))
)
"""Where a version number goes when the place over its marker is taken: higher up, then beside it."""
ARROW_PLACES: tuple[Place, ...] = ((0.0, -16.0, "center"), (0.0, -32.0, "center"))
"""Where a lead time's text goes when the place under its arrow is taken: lower down."""


def _num(day: date) -> float:
    number: float = mdates.date2num(day)  # type: ignore[no-untyped-call]
    return number


def _day(text: str) -> date:
    return date.fromisoformat(text[:10])


def render(answer: BacktestAnswer) -> Picture:
    versions = answer["versions"]
    lines = list(dict.fromkeys(v["line"] for v in versions))
    row = {line: i for i, line in enumerate(lines)}
    figure = Figure(
        figsize=(WIDTH_PX / DPI, (BASE_PX + ROW_PX * max(len(lines), 1)) / DPI), dpi=DPI, layout="constrained"
    )
    axes = figure.add_subplot()
    markers: list[Marker] = []
    days = [_day(v["published"]) for v in versions] or [date.fromisoformat(answer["since"])]
    version_labels: list[tuple[Annotation, tuple[Place, ...]]] = []
    for v in versions:
        marker = Marker(v["version"], _day(v["published"]), v["line"], v["verdict"], v["prerelease"])
        markers.append(marker)
        color = COLORS.get(marker.verdict, COLORS["error"])
        x = _num(marker.day)
        axes.scatter(
            [x],
            [row[marker.line]],
            s=170,
            marker="D" if marker.prerelease else "o",
            facecolors="white" if marker.prerelease else color,
            edgecolors=color,
            linewidths=2.5,
            zorder=3,
            gid=f"version {marker.version}",
        )
        label = axes.annotate(
            marker.version, (x, row[marker.line]), xytext=(0, 12), textcoords="offset points", ha="center", fontsize=11
        )
        version_labels.append((label, VERSION_PLACES))
    arrows: list[LeadArrow] = []
    arrow_labels: list[tuple[Annotation, tuple[Place, ...]]] = []
    warned = [f for f in grouped(answer["findings"]) if f["status"] == WARNED]
    for i, finding in enumerate(warned):
        shipped = finding["final_published"]
        assert shipped is not None, "a warned finding names the final that shipped it"
        arrow = LeadArrow(
            finding["line"],
            _day(finding["first_published"]),
            _day(shipped),
            f"{finding['lead_days']} d",
        )
        arrows.append(arrow)
        y = row.get(arrow.line, 0) + 0.3 + 0.2 * i  # below the line's markers (y runs downwards)
        start, end = _num(arrow.start), _num(arrow.end)
        axes.annotate(
            "",
            (end, y),
            xytext=(start, y),
            arrowprops={"arrowstyle": "->", "color": ARROW_COLOR, "linewidth": 2},
            gid=f"lead {finding['key']}",
        )
        label = axes.annotate(
            f"{arrow.label}: {finding['text']}",
            ((start + end) / 2, y),
            xytext=(0, -14),
            textcoords="offset points",
            ha="center",
            fontsize=11,
            color=ARROW_COLOR,
        )
        arrow_labels.append((label, ARROW_PLACES))
    axes.set_xlim(_num(min(days) - timedelta(days=10)), _num(max(days) + timedelta(days=10)))
    axes.xaxis.set_major_locator(mdates.MonthLocator())  # type: ignore[no-untyped-call]
    axes.xaxis.set_major_formatter(mdates.DateFormatter("%b %Y"))  # type: ignore[no-untyped-call]
    axes.set_yticks(range(len(lines)), lines, fontsize=14)
    axes.set_ylim(len(lines) - 0.2 + 0.2 * len(warned), -0.7)
    axes.grid(axis="x", color="#eeeeee")
    axes.set_axisbelow(True)
    for side in ("top", "right"):
        axes.spines[side].set_visible(False)
    key = [
        Line2D(
            [],
            [],
            linestyle="none",
            marker="D",
            markerfacecolor="white",
            markeredgecolor="#495057",
            label="pre-release",
        ),
        Line2D([], [], linestyle="none", marker="o", color="#495057", label="final"),
        *(Line2D([], [], linestyle="none", marker="s", color=COLORS[v], label=v) for v in ("pass", "fail", "error")),
    ]
    axes.legend(handles=key, loc="upper right", ncols=5, fontsize=11, frameon=False)
    axes.set_title(
        f"{answer['server']} against {answer['package']} {answer['since']} … {answer['until']}",
        fontsize=15,
        loc="left",
    )
    renderer = freeze_layout(figure)
    placed = {id(label) for label, _ in [*version_labels, *arrow_labels]}
    taken = [box for text, box in _boxes(figure, renderer) if id(text) not in placed]
    hidden = place_apart(arrow_labels, taken, renderer) + place_apart(version_labels, taken, renderer)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return Picture(buffer.getvalue(), markers, arrows, lines, drawn_labels(figure, renderer), hidden)


def _boxes(figure: Figure, renderer: RendererBase) -> list[tuple[object, LabelBox]]:
    """The figure's fixed texts (ticks, title, legend) with their boxes, before the labels are placed."""
    texts = [t for axes in figure.axes for t in (*axes.get_xticklabels(), *axes.get_yticklabels(), axes.title)]
    texts += [t for axes in figure.axes for legend in [axes.get_legend()] if legend for t in legend.get_texts()]
    texts += [t for axes in figure.axes for t in axes.texts]
    return [(t, box_of(t, renderer)) for t in texts if t.get_visible() and t.get_text().strip()]
