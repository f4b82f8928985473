"""The timeline picture: a valid PNG of the expected size, one bar per deprecated feature (figure data)."""

from __future__ import annotations

import io
from datetime import date
from pathlib import Path

from PIL import Image

from tests.digest.helpers import DIGEST_NOW, REGISTRY, TODAY, build_state, seed_spec, write_config
from watcher.core.store import Store
from watcher.digest.build import build_digest
from watcher.digest.timeline import AFFECTED_COLOR, OTHER_COLOR, UNRESOLVED_COLOR, digest_timeline, height_px


def test_png_is_valid_with_the_expected_size_and_one_bar_per_deprecated_feature(tmp_path: Path):
    state = build_state(tmp_path)
    digest = build_digest(state.loaded, state.store, "books", TODAY, until=DIGEST_NOW)
    picture = digest_timeline(digest)

    image = Image.open(io.BytesIO(picture.png))
    image.verify()
    assert image.format == "PNG"
    assert image.size == (picture.width_px, picture.height_px) == (1200, 650)  # 5 bars: 250 + 5 × 80 px
    assert height_px(12) > height_px(5), "more features, a taller picture (type size stays readable)"

    # The bars as drawn on the axes, top to bottom: the registry's deprecated rows, soonest removal first.
    drawn = [(bar.label, bar.start, bar.end) for bar in picture.bars]
    assert drawn == [
        (f.feature, date.fromisoformat(f.window_starts), date.fromisoformat(f.earliest_removal))
        for f in digest.deprecated
    ]
    assert drawn[0] == ("HTTP+SSE transport", date(2025, 3, 26), date(2027, 3, 30))
    assert "JSON-RPC batching" not in [bar.label for bar in picture.bars], "removed features get no bar"
    colors = {bar.label: bar.color for bar in picture.bars}
    assert colors["HTTP+SSE transport"] == colors["Logging"] == colors["Sampling"] == AFFECTED_COLOR
    assert colors["Roots"] == OTHER_COLOR
    assert picture.today == TODAY
    assert {date(2027, 3, 30), date(2027, 9, 28), date(2026, 7, 28)} <= set(picture.revision_lines)
    assert picture.title.endswith("team books")


def test_an_unresolved_feature_gets_a_hatched_bar_to_the_edge(tmp_path: Path):
    loaded = write_config(tmp_path)
    store = Store(loaded.resolve(loaded.config.state))
    odd = REGISTRY.replace(
        "First revision released on or after 2027-07-28 |\n| [Sampling]", "When the moon is full |\n| [Sampling]"
    )
    seed_spec(store, loaded, odd)
    digest = build_digest(loaded, store, "books", TODAY, until=DIGEST_NOW)
    picture = digest_timeline(digest)
    bars = {bar.label: bar for bar in picture.bars}
    assert len(bars) == 5
    roots = bars["Roots"]
    assert roots.hatched and roots.color == UNRESOLVED_COLOR
    assert roots.end >= max(bar.end for bar in bars.values()), "an open end runs to the picture's edge"
    assert not bars["Logging"].hatched


def test_no_label_covers_another_on_a_crowded_timeline():
    """Issue 37: revision dates a few weeks apart drew their labels over each other (a fixed gap in days
    guessed at the width of a label). The labels' boxes are read back from the figure: none overlaps, every
    revision line is drawn, and a date left out for want of room is said to be."""
    from datetime import timedelta

    from watcher.digest.labels import overlapping
    from watcher.digest.timeline import Bar, render_timeline

    today = date(2026, 12, 3)
    revisions = [date(2026, 11, 18), date(2027, 2, 12), date(2027, 4, 14), date(2027, 5, 2)]
    bars = [
        Bar("a deprecated feature with a long name", date(2026, 1, 16), date(2027, 3, 24), True),
        Bar("one ending the day after today", date(2026, 6, 1), today + timedelta(days=1), False),
        Bar("unresolved", date(2026, 9, 1), None, False),
    ]
    picture = render_timeline(bars, today, revisions, [date(2026, 11, 18)])
    assert overlapping(picture.labels) == []
    assert picture.revision_lines == revisions
    shown = {box.text for box in picture.labels}
    assert {"Nov 2026", "2027-03-24", "unresolved", f"today {today.isoformat()}"} <= shown
    for day in revisions[1:]:
        label = day.strftime("%b %Y") + "*"
        assert (label in shown) != (label in picture.hidden_labels), label
    assert picture.hidden_labels, "April and May 2027, 18 days apart, cannot both be labelled"
