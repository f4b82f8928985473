"""The long-running service as a real child process: scheduler, endpoints, notices, SIGTERM."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.mcp_history import McpHistory
from tests.helpers import start_service, wait_until
from tests.spec.helpers import spec_config


def service_config(world: dict, write_config, poll_minutes: float = 0.02) -> Path:
    registry, slack = world["registry"], world["slack"]
    spec = spec_config(world["gh"], teams=[{"name": "books", "slack_channel": "#books-mcp", "sdks": ["python"]}])
    return write_config(
        {
            **spec,
            "sdks": [{"name": "python", "registry": "pypi", "package": "mcp", "url": registry.url("pypi/simple")}],
            "slack": {"api_url": slack.api_url, "retries": 1},
            "schedule": {"poll_minutes": poll_minutes, "spec_poll_minutes": 60, "deliver_seconds": 0.5},
            "http_client": {"timeout_seconds": 1, "retries": 0, "backoff_seconds": 0},
        }
    )


def test_service_polls_notifies_serves_endpoints_and_stops_on_sigterm(world, write_config, tmp_path):
    history = McpHistory(world["page"])
    history.before("2.0.0rc1")
    config = service_config(world, write_config)
    service = start_service(config, {"SLACK_BOT_TOKEN": world["slack"].token}, tmp_path / "service.log")
    try:
        service.wait_http()
        assert service.get("/healthz").json() == {"alive": True}
        service.wait_for_log("baseline taken for python")
        assert service.get("/readyz").status_code == 200
        assert world["slack"].messages == [], "the baseline is not news"

        history.before("2.0.0")  # 2.0.0rc1 appears
        wait_until(lambda: len(world["slack"].messages) >= 1, message="the rc1 notice in Slack")
        wait_until(lambda: "poll: 0 new" in service.log().split("1 new version")[-1], message="a later quiet poll")
        keys = [m["metadata"]["event_payload"]["key"] for m in world["slack"].messages]
        assert keys == ["release:python:2.0.0rc1:books"]

        metrics = service.get("/metrics").text
        assert 'mcp_watcher_polls_total{result="ok",source="python"}' in metrics
        assert 'mcp_watcher_new_versions_total{sdk="python"} 1.0' in metrics
        assert "mcp_watcher_outbox_depth 0.0" in metrics
        assert world["slack"].token not in service.log()
    finally:
        code = service.terminate()
    assert code == 0
    assert "stopped cleanly" in service.log()


def test_readyz_turns_unready_when_polls_fail_and_ready_again_after(world, write_config, tmp_path):
    config = service_config(world, write_config, poll_minutes=0.01)  # 0.6 s: unready after 1.8 s of failures
    service = start_service(config, {}, tmp_path / "service.log")
    try:
        service.wait_http()
        wait_until(lambda: service.get("/readyz").status_code == 200, message="ready")
        world["registry"].fail("/pypi/simple/mcp/", status=503)
        wait_until(lambda: service.get("/readyz").status_code == 503, timeout=20, message="unready")
        body = service.get("/readyz").json()
        assert body["ready"] is False and "no successful poll since" in body["problems"][0]
        assert 'mcp_watcher_polls_total{result="failed",source="python"}' in service.get("/metrics").text
        world["registry"].clear_faults()
        wait_until(lambda: service.get("/readyz").status_code == 200, timeout=20, message="ready again")
    finally:
        assert service.terminate() == 0


def test_a_digest_missed_while_down_goes_out_once_from_the_running_service(world, write_config, tmp_path):
    import yaml

    # The service's clock starts on Wednesday 2026-12-02 12:00 UTC; this week's digest time was 10
    # minutes earlier, while the service was "down".
    clock_start = "2026-12-02T12:00:00Z"
    config = service_config(world, write_config)
    data = yaml.safe_load(config.read_text())
    data["digest"] = {"day_of_week": "wed", "hour": 11, "minute": 50}
    config.write_text(yaml.safe_dump(data))
    env = {"SLACK_BOT_TOKEN": world["slack"].token}
    week = "2026-W49"

    def digests() -> list[dict]:
        return [m for m in world["slack"].messages if m["metadata"]["event_payload"]["key"].startswith("digest:")]

    for attempt in ("first", "second"):
        service = start_service(config, env, tmp_path / f"{attempt}.log", clock_start=clock_start)
        try:
            service.wait_http()
            service.wait_for_log("digest check:")
            if attempt == "first":
                wait_until(lambda: digests() and world["slack"].files, message="the digest with its picture")
            else:
                assert "digest check: nothing due" in service.log()
        finally:
            assert service.terminate() == 0
    first = digests()[0]
    assert first["metadata"]["event_payload"]["key"] == f"digest:books:{week}"
    assert [m for m in digests() if m["thread_ts"] is None] == [first], "one digest for the week, not two"
    assert "Roots" in str(first["blocks"]) + "".join(str(m["blocks"]) for m in digests())
    picture = world["slack"].files[0]
    assert picture["content"].startswith(b"\x89PNG") and picture["thread_ts"] == first["ts"]
