"""Class 12 (status part): a pre-release older than the newest stable is not "the newest pre-release"."""

from __future__ import annotations

import json

from tests.reliability.conftest import python_only
from watcher.cli import main


def test_status_does_not_call_an_old_rc_the_newest_prerelease(registry, write_config, capsys):
    config = write_config(python_only(registry))
    assert main(["--config", str(config), "poll"]) == 0  # the recorded page: 2.0.0rc1 … 2.3.0
    capsys.readouterr()
    assert main(["--config", str(config), "status", "--json"]) == 0
    (source,) = json.loads(capsys.readouterr().out)["sources"]
    assert source["newest_stable"] == "2.3.0"
    assert source["newest_prerelease"] is None and source["older_prerelease"] == "2.0.0rc1"
    assert main(["--config", str(config), "status"]) == 0
    assert "newest pre-release - (last one, 2.0.0rc1, is older than 2.3.0)" in capsys.readouterr().out
