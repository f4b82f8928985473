"""The digest's timeline picture: one bar per deprecated feature, from deprecation to earliest removal.

A vertical line marks today, dashed lines mark spec revision dates (solid when released), and the features
the team's servers use are drawn in a strong colour with a bold label. The picture is 1200 px wide with
large type so that it stays readable at the size Slack shows inline; it grows in height with the number of
features. ``render_timeline`` returns the PNG together with what was drawn, read back from the figure's
artists (bars, lines), so tests can check the figure's data rather than pixels.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import cast

import matplotlib.dates as mdates
from matplotlib.axes import Axes
from matplotlib.colors import to_hex
from matplotlib.figure import Figure  # a bare Figure draws off-screen (Agg) without pyplot's global state
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from matplotlib.text import Annotation, Text
from matplotlib.ticker import Formatter, Locator

from watcher.digest.labels import LabelBox, Place, drawn_labels, freeze_layout, place_apart
from watcher.digest.model import UNKNOWN_REGISTRY, Digest, Feature

WIDTH_PX = 1200
DPI = 100
BASE_HEIGHT_PX = 250
BAR_HEIGHT_PX = 80
LABEL_WIDTH = 22
"""Characters per label line; labels wrap onto two lines, never cut shorter than that."""
AFFECTED_COLOR = "#d9480f"
OTHER_COLOR = "#8ba3c7"
UNRESOLVED_COLOR = "#bbbbbb"
TODAY_COLOR = "#c92a2a"
REVISION_COLOR = "#495057"


@dataclass(frozen=True)
class Bar:
    feature: str
    start: date
    end: date | None
    """None: the earliest removal is unresolved; the bar runs to the edge of the picture, hatched."""
    affected: bool


@dataclass(frozen=True)
class DrawnBar:
    label: str
    start: date
    end: date
    color: str
    hatched: bool


@dataclass(frozen=True)
class TimelinePicture:
    png: bytes
    width_px: int
    height_px: int
    bars: list[DrawnBar]
    """Read back from the axes, top to bottom."""
    today: date | None
    revision_lines: list[date]
    title: str
    notice: str | None = None
    """A state written across the chart instead of data (the registry could not be read), read back."""
    labels: list[LabelBox] = field(default_factory=list)
    """Every text drawn, with its box in pixels (none covers another)."""
    hidden_labels: list[str] = field(default_factory=list)
    """Labels left out for want of room (their line or bar is drawn): crowded revision dates."""


def height_px(bar_count: int) -> int:
    return BASE_HEIGHT_PX + BAR_HEIGHT_PX * max(bar_count, 1)


def bars_of(features: Sequence[Feature], today: date) -> list[Bar]:
    bars = []
    for feature in features:
        if feature.state != "deprecated":
            continue
        start_text = feature.window_starts or (feature.deprecated_in if _is_date(feature.deprecated_in) else None)
        start = date.fromisoformat(start_text) if start_text else today
        end = date.fromisoformat(feature.earliest_removal) if feature.earliest_removal else None
        bars.append(Bar(feature.feature, start, end, bool(feature.affected_servers)))
    return bars


def _is_date(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _label(text: str) -> str:
    lines = textwrap.wrap(text, LABEL_WIDTH, break_long_words=True) or [text]
    if len(lines) > 2:
        lines = [lines[0], textwrap.shorten(" ".join(lines[1:]), LABEL_WIDTH, placeholder="…")]
    return "\n".join(lines)


def render_timeline(
    bars: Sequence[Bar],
    today: date,
    revision_dates: Sequence[date],
    released: Sequence[date] = (),
    title: str = "Deprecated MCP features",
    team: str | None = None,
    unknown: str | None = None,
) -> TimelinePicture:
    """The picture; ``unknown``: why nothing is known, written across the empty chart (never a blank one)."""
    height = height_px(len(bars))
    figure = Figure(figsize=(WIDTH_PX / DPI, height / DPI), dpi=DPI, layout="constrained")
    axes = figure.add_subplot()
    ends = [b.end for b in bars if b.end is not None]
    left = min([today - timedelta(days=60), *(b.start for b in bars)]) - timedelta(days=30)
    right = max([today + timedelta(days=240), *(e + timedelta(days=75) for e in ends)])
    shown_revisions = sorted(d for d in set(revision_dates) if left <= d <= right)
    right = max([right, *(d + timedelta(days=30) for d in shown_revisions)])

    # Top to bottom in the given order: y runs downwards.
    end_labels: list[Annotation] = []
    for row, bar in enumerate(bars):
        end = bar.end or right
        color = UNRESOLVED_COLOR if bar.end is None else (AFFECTED_COLOR if bar.affected else OTHER_COLOR)
        axes.barh(
            row,
            _day_number(end) - _day_number(bar.start),
            left=_day_number(bar.start),
            height=0.56,
            color=color,
            edgecolor="#333333" if bar.affected else "none",
            linewidth=1.5,
            hatch="//" if bar.end is None else None,
            label=bar.feature,
            gid=bar.feature,
        )
        text = bar.end.isoformat() if bar.end else "unresolved"
        ends_at = axes.annotate(
            text,
            (_day_number(end), row),
            xytext=(6, 0),
            textcoords="offset points",
            va="center",
            fontsize=15,
            fontweight="bold" if bar.affected else "normal",
            annotation_clip=False,
        )
        end_labels.append(ends_at)
    axes.set_yticks(range(len(bars)), [_label(b.feature) for b in bars], fontsize=17)
    for tick, bar in zip(axes.get_yticklabels(), bars, strict=True):
        if bar.affected:
            tick.set_fontweight("bold")
            tick.set_color(AFFECTED_COLOR)
    axes.set_ylim(len(bars) - 0.4, -0.9)

    released_set = set(released)
    revision_labels: list[Annotation] = []
    for day in shown_revisions:
        axes.axvline(
            _day_number(day),
            color=REVISION_COLOR,
            linestyle="-" if day in released_set else "--",
            linewidth=1.2,
            alpha=0.8,
            gid=f"revision {day.isoformat()}",
        )
        label = axes.annotate(
            day.strftime("%b %Y") + ("" if day in released_set else "*"),
            (_day_number(day), -0.75),
            xytext=(0, 0),
            textcoords="offset points",
            ha="center",
            va="center",
            fontsize=14,
            color=REVISION_COLOR,
            bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85},
        )
        revision_labels.append(label)
    axes.axvline(_day_number(today), color=TODAY_COLOR, linewidth=2.5, gid="today")
    today_label = axes.annotate(
        f"today {today.isoformat()}",
        (_day_number(today), len(bars) - 0.45),
        xytext=(4, 0),
        textcoords="offset points",
        ha="left",
        va="bottom",
        fontsize=15,
        color=TODAY_COLOR,
        fontweight="bold",
    )

    if unknown is not None:
        axes.text(
            0.5,
            0.5,
            unknown,
            transform=axes.transAxes,
            ha="center",
            va="center",
            fontsize=22,
            fontweight="bold",
            color=TODAY_COLOR,
            bbox={"boxstyle": "round,pad=0.6", "fc": "#fff4e6", "ec": TODAY_COLOR},
            gid="unknown",
        )
    axes.set_xlim(_day_number(left), _day_number(right))
    axes.xaxis.set_major_locator(_quarter_starts())
    axes.xaxis.set_major_formatter(_month_year_labels())
    axes.tick_params(axis="x", labelsize=14)
    axes.grid(axis="x", color="#eeeeee")
    axes.set_axisbelow(True)
    for side in ("top", "right"):
        axes.spines[side].set_visible(False)
    heading = title if team is None else f"{title} · team {team}"
    axes.set_title(heading, fontsize=20, loc="left", pad=14)
    legend = [
        Patch(facecolor=AFFECTED_COLOR, edgecolor="#333333", label=f"in use by team {team}" if team else "in use"),
        Patch(facecolor=OTHER_COLOR, label="not seen in use"),
        Line2D([], [], color=REVISION_COLOR, linestyle="--", label="spec revision (* projected)"),
    ]
    if any(b.end is None for b in bars):
        legend.insert(2, Patch(facecolor=UNRESOLVED_COLOR, hatch="//", label="removal date unresolved"))
    figure.legend(handles=legend, loc="outside lower center", ncol=len(legend), fontsize=14, frameon=False)

    renderer = freeze_layout(figure)
    taken = [box for box in drawn_labels(figure, renderer) if box.text not in _texts(axes.texts)]
    hidden = place_apart([(label, ()) for label in end_labels], taken, renderer)
    hidden += place_apart([(today_label, TODAY_PLACES)], taken, renderer)
    # A revision date that would cover another label: its line is drawn, the label left out.
    hidden += place_apart([(label, ()) for label in revision_labels], taken, renderer)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI)
    drawn = _drawn_bars(axes)
    return TimelinePicture(
        png=buffer.getvalue(),
        width_px=WIDTH_PX,
        height_px=height,
        bars=drawn,
        today=_line_date(axes, "today"),
        revision_lines=sorted(d for line in axes.get_lines() if (d := _revision_date(line.get_gid())) is not None),
        title=heading,
        notice=next((str(text.get_text()) for text in axes.texts if text.get_gid() == "unknown"), None),
        labels=drawn_labels(figure, renderer),
        hidden_labels=hidden,
    )


TODAY_PLACES: tuple[Place, ...] = ((-8.0, 0.0, "right"), (4.0, 26.0, "left"), (-8.0, 26.0, "right"))
"""Where "today" goes when the right of its line is taken (by a bar's end date): its left, then a little
higher on either side."""


def _texts(artists: Iterable[Text]) -> set[str]:
    return {" ".join(text.get_text().split()) for text in artists}


def _drawn_bars(axes: Axes) -> list[DrawnBar]:
    bars = []
    for patch in axes.patches:
        if not isinstance(patch, Rectangle) or not patch.get_gid():
            continue
        x0, width = patch.get_x(), patch.get_width()
        bars.append(
            (
                patch.get_y(),
                DrawnBar(
                    label=str(patch.get_gid()),
                    start=_day_of(x0),
                    end=_day_of(x0 + width),
                    color=to_hex(patch.get_facecolor()),
                    hatched=bool(patch.get_hatch()),
                ),
            )
        )
    return [bar for _, bar in sorted(bars, key=lambda item: item[0])]


def _line_date(axes: Axes, gid: str) -> date | None:
    for line in axes.get_lines():
        if line.get_gid() == gid:
            # An axvline's x data is the list of its two (equal) day numbers; Line2D types it as any array.
            return _day_of(cast("Sequence[float]", line.get_xdata())[0])
    return None


# matplotlib.dates has no type hints (matplotlib ships .pyi stubs for its other modules, not this one):
# these four typed wrappers are the module's only calls into it, each with its one ignore.


def _day_number(day: date) -> float:
    number: float = mdates.date2num(day)  # type: ignore[no-untyped-call]
    return number


def _day_of(number: float) -> date:
    moment: datetime = mdates.num2date(number)  # type: ignore[no-untyped-call]
    return moment.date()


def _quarter_starts() -> Locator:
    """Ticks on the first day of January, April, July and October."""
    locator: Locator = mdates.MonthLocator(bymonth=(1, 4, 7, 10))  # type: ignore[no-untyped-call]
    return locator


def _month_year_labels() -> Formatter:
    formatter: Formatter = mdates.DateFormatter("%b\n%Y")  # type: ignore[no-untyped-call]
    return formatter


def _revision_date(gid: str | None) -> date | None:
    if gid and gid.startswith("revision "):
        return date.fromisoformat(gid.removeprefix("revision "))
    return None


def digest_timeline(digest: Digest) -> TimelinePicture:
    today = date.fromisoformat(digest.today)
    return render_timeline(
        bars_of(digest.features, today),
        today,
        [date.fromisoformat(d) for d in digest.revision_dates],
        [date.fromisoformat(d) for d in digest.released_dates],
        title="MCP deprecations: deprecated → earliest removal",
        team=digest.team,
        unknown=UNKNOWN_REGISTRY if digest.registry_unknown else None,
    )


def write_timeline(picture: TimelinePicture, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(picture.png)
    return path
