"""`pytest.mark.xdist_group` that holds on this pytest: the tests of one group run on one xdist worker.

Under `--dist loadgroup`, pytest-xdist puts a test in its group by appending `@<group>` to its node id on the
worker; the controller then hands every test whose id ends in the same `@<group>` to one worker. pytest 9.2
reads a node's id from a structured field xdist 3.8 does not write, so the suffix never appeared: every group
fell apart, and a module-scoped fixture (SDK environments, built snapshots, a wheel) was built once per
worker. The hook below writes the suffix where xdist could not, and does nothing where xdist's own took.
"""

from __future__ import annotations

import pytest


def _group_names(item: pytest.Item) -> list[str]:
    names = {
        str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
        for mark in item.iter_markers("xdist_group")
    }
    return sorted(names)


def _has_group_suffix(nodeid: str) -> bool:
    return nodeid.rfind("@") > nodeid.rfind("]")  # the test the controller applies (a parameter may hold '@')


@pytest.hookimpl(trylast=True)  # after xdist's own hook, so its suffix is seen when it did take
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not getattr(config.option, "loadgroup", False):  # set on xdist workers run with --dist loadgroup
        return
    for item in items:
        names = _group_names(item)
        if not names or _has_group_suffix(item.nodeid):
            continue
        from _pytest.nodeid import NodeId  # the structured id: only a pytest without xdist's suffix gets here

        item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(names)}")
