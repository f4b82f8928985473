"""Class 11: a date in the spec's deprecated-features registry that does not exist (2025-11-31) is a named problem.

The page is served by the loopback fake GitHub with the impossible dates written into it. Each such row is
unresolved, its basis names the row's line, the cell and the date, and operators hear about it once; the
other rows are read as usual.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.fakes.github_server import FakeGitHub
from tests.spec.helpers import REGISTRY_PATH, fixture, poll, serve_spec, spec_config
from watcher.cli import main
from watcher.config import load_config
from watcher.core.store import Store

TODAY = "2026-11-29"


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        serve_spec(fake)
        yield fake


def impossible_dates() -> str:
    """Today's registry with three impossible dates: in "Deprecated in", "Earliest removal" and both of a row."""
    page = fixture("registry_today.mdx")
    lines = page.splitlines(keepends=True)

    def edit(feature: str, old: str, new: str) -> None:
        index = next(i for i, line in enumerate(lines) if line.startswith(f"| [{feature}]"))
        assert old in lines[index]
        lines[index] = lines[index].replace(old, new)

    edit("Roots", "`2026-07-28`", "`2025-11-31`")  # the stated earliest removal alone would resolve it
    edit("Sampling", "on or after 2027-07-28", "on or after 2027-02-30")
    edit("Logging", "`2026-07-28`", "`2026-13-01`")
    return "".join(lines)


def line_of(page: str, feature: str) -> int:
    return next(n for n, line in enumerate(page.splitlines(), 1) if line.startswith(f"| [{feature}]"))


def test_an_impossible_registry_date_is_an_unresolved_row_naming_line_and_cell(gh, write_config, capsys):
    page = impossible_dates()
    gh.put_raw(REGISTRY_PATH, page)
    path = write_config(spec_config(gh, operators_channel="#ops"))
    code = main(["--config", str(path), "deprecations", "--json", "--today", TODAY])
    out, err = capsys.readouterr()
    assert code == 1
    rows = {r["feature"]: r for r in json.loads(out)}
    roots, sampling, logging = rows["Roots"], rows["Sampling"], rows["Logging"]
    assert not roots["resolved"] and roots["earliest_removal"] is None
    assert roots["basis"] == (
        f'line {line_of(page, "Roots")}, cell "Deprecated in": 2025-11-31 is not a date (day is out of range for month)'
    )
    assert not sampling["resolved"]
    assert sampling["basis"].startswith(
        f'line {line_of(page, "Sampling")}, cell "Earliest removal": 2027-02-30 is not a date'
    )
    assert not logging["resolved"]
    assert 'cell "Deprecated in": 2026-13-01 is not a date' in logging["basis"]
    assert f'UNRESOLVED: Roots: line {line_of(page, "Roots")}, cell "Deprecated in": 2025-11-31' in err
    # the rows that follow an impossible one are unresolved too, and say why; the others still resolve
    assert "unresolved" in rows['includeContext: "thisServer" / "allServers" (Sampling)']["basis"]
    assert rows["Dynamic Client Registration"]["resolved"] and rows["HTTP+SSE transport"]["resolved"]


def test_the_poller_alerts_operators_once_per_impossible_date(gh, write_config):
    gh.put_raw(REGISTRY_PATH, impossible_dates())
    loaded = load_config(write_config(spec_config(gh, operators_channel="#ops")))
    store = Store(loaded.resolve(loaded.config.state))
    try:
        summary = poll(loaded, store, TODAY)
        assert summary["ok"] and {"Roots", "Sampling", "Logging"} <= set(summary["unresolved"])
        alerts = [n for n in store.outbox() if n["kind"] == "spec-unresolved"]
        texts = [json.dumps(n["blocks"]) for n in alerts]
        dated = [text for text in texts if "is not a date" in text and "follows" not in text]
        assert len(dated) == 3 and "2025-11-31" in dated[0] and "2027-02-30" in dated[1] and "2026-13-01" in dated[2]
        # not a shape to teach the watcher: the page has a wrong date
        assert not any("Teach watcher/spec/removal.py" in text for text in dated)
        assert all("a date that does not exist" in text for text in dated)
        poll(loaded, store, TODAY)
        assert len([n for n in store.outbox() if n["kind"] == "spec-unresolved"]) == len(alerts)
    finally:
        store.close()
