"""Text labels on a picture that never cover each other, and the boxes they were drawn in, read back.

The pictures (the digest's timeline, the backtest's) put labels near the things they name: revision dates
along the top, a date at the end of each bar, "today" at its line, version numbers over their markers. Where
those crowd, a label tries its other places and, if none is free, is left out (what it names stays drawn).
The boxes come from matplotlib's own text layout after the figure's layout is done, so a test reads them
instead of pixels.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

from matplotlib.backend_bases import RendererBase
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Annotation, Text

Align = Literal["left", "center", "right"]
Place = tuple[float, float, Align]
"""An offset in points from the label's anchor, and the horizontal alignment there."""


@dataclass(frozen=True)
class LabelBox:
    """A drawn label's text and its box in pixels of the saved picture (y from the bottom)."""

    text: str
    x0: float
    y0: float
    x1: float
    y1: float

    def overlaps(self, other: LabelBox) -> bool:
        return self.x0 < other.x1 and other.x0 < self.x1 and self.y0 < other.y1 and other.y0 < self.y1


def freeze_layout(figure: Figure) -> RendererBase:
    """Lays the figure out once (its constrained layout) and keeps that layout, so boxes measured now are
    where the labels are saved; returns the renderer to measure with."""
    canvas = FigureCanvasAgg(figure)
    figure.draw_without_rendering()
    figure.set_layout_engine("none")
    renderer: RendererBase = canvas.get_renderer()  # type: ignore[no-untyped-call]  # matplotlib's Agg has no hints here
    return renderer


def box_of(text: Text, renderer: RendererBase) -> LabelBox:
    extent = text.get_window_extent(renderer)
    return LabelBox(" ".join(text.get_text().split()), extent.x0, extent.y0, extent.x1, extent.y1)


def place_apart(
    labels: Iterable[tuple[Annotation, Sequence[Place]]], taken: list[LabelBox], renderer: RendererBase
) -> list[str]:
    """Each label, in the order given, keeps its own place or the first of its other places where it covers
    nothing in ``taken`` (which it joins); a label with no free place is hidden. Returns the hidden texts."""
    hidden = []
    for label, places in labels:
        x, y = label.xyann
        own = label.get_horizontalalignment()
        for dx, dy, align in [(0.0, 0.0, own), *places]:
            label.xyann = (x + dx, y + dy)
            label.set_horizontalalignment(align)
            box = box_of(label, renderer)
            if not any(box.overlaps(other) for other in taken):
                taken.append(box)
                break
        else:
            label.xyann = (x, y)
            label.set_horizontalalignment(own)
            label.set_visible(False)
            hidden.append(box_of(label, renderer).text)
    return hidden


def drawn_labels(figure: Figure, renderer: RendererBase) -> list[LabelBox]:
    """Every visible text of the figure: the axes' labels, tick labels and titles, and the legends'."""
    texts: list[Text] = []
    for axes in figure.axes:
        texts += [*axes.texts, *axes.get_xticklabels(), *axes.get_yticklabels(), axes.title]
        texts += [legend_text for legend in [axes.get_legend()] if legend for legend_text in legend.get_texts()]
    texts += [text for legend in figure.legends for text in legend.get_texts()]
    return [box_of(text, renderer) for text in texts if text.get_visible() and text.get_text().strip()]


def overlapping(boxes: Sequence[LabelBox]) -> list[tuple[str, str]]:
    """The pairs of labels that cover each other (none, in a picture drawn with `place_apart`)."""
    return [(a.text, b.text) for a, b in combinations(boxes, 2) if a.overlaps(b)]
