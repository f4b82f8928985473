"""With `mcp-watcher run` running, a server committed to a team's file is a first-class server everywhere within
one sync interval, without a restart: on `/`, `/api/status`, in `status` and in Slack's `/mcp-watcher status`;
it gets its first run and its onboarding message, can be rerun (slash command) and accepted (button and modal)
from Slack, and shows in the digest. A second repository claiming a name another owns is refused for that one
server while everything else goes on. Real git repositories, the real Bolt app against the loopback Slack
(signed HTTP and Socket Mode), the service's clock pinned (tests/helpers.py)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_cli, start_service, wait_until
from tests.repos.helpers import change
from tests.serverset.helpers import (
    add_server,
    baseline_snapshot,
    server_entry,
    signed_post,
    team_file,
    team_repo,
    world,
)
from tests.slackapp.helpers import MEMBER, SECRET, click_payload, command_payload, form, submission_payload

pytestmark = pytest.mark.timeout(400)


def matrix_servers(status: dict[str, Any]) -> set[str]:
    return {row["server"] for m in status["matrices"] for team in m["teams"] for row in team["servers"]}


def command(config: Path, *args: str) -> str:
    """A command run by hand beside the running service (it reads the same state)."""
    done = run_cli(config, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_server_committed_while_the_service_runs_is_everywhere_without_a_restart(tmp_path: Path):
    with world(tmp_path) as w:
        slack = w.slack
        slack.members = {"#books-mcp": [MEMBER]}
        snapshot = baseline_snapshot(tmp_path / "baseline")
        repo = team_repo(tmp_path / "books-repo", snapshot, ("shelf", "find_book"))
        config = w.config([{"git": str(repo), "team": "books"}])
        env = {"SLACK_BOT_TOKEN": slack.token, "SLACK_APP_TOKEN": slack.app_token, "SLACK_SIGNING_SECRET": SECRET}
        service = start_service(config, env, tmp_path / "service.log")
        started = time.time()
        try:
            service.wait_http()
            assert slack.socket.wait_connected()

            # The repository's first look: its server runs once, passes (its contract is its baseline's), and
            # the team gets one onboarding message with that verdict.
            def texts() -> list[str]:
                return [str(m["text"]) for m in slack.messages]

            wait_until(lambda: any("mcp-watcher now watches" in t for t in texts()), 120, 0.2, "the onboarding")
            [onboarding] = [t for t in texts() if "mcp-watcher now watches" in t]
            assert "• shelf: other, SDK python 2.3.0 (as written in the file)" in onboarding
            assert "first run: pass" in onboarding
            assert "shelf" in matrix_servers(service.get("/api/status").json())

            # A second server committed while the service runs.
            add_server(repo, "stacks", snapshot)
            entries = team_file(server_entry("shelf", "find_book"), server_entry("stacks", "find_title"))
            change(repo, {".mcp-watcher.yaml": entries}, "a second server")
            committed = time.monotonic()
            wait_until(lambda: "stacks" in matrix_servers(service.get("/api/status").json()), 30, 0.2, "/api/status")
            seen_after = time.monotonic() - committed
            assert seen_after < 3 * 2 + 5  # within one sync interval (3 s) and the pass it takes, never a restart
            assert 'data-server="stacks"' in service.get("/").text
            assert "stacks" in command(config, "status")
            answered = slack.socket.send("slash_commands", command_payload(slack, "status stacks", MEMBER, "live1"))
            assert answered is not None
            wait_until(lambda: any("*stacks* (books)" in r.get("text", "") for r in slack.responses), 20, 0.1, "status")

            # Its first run and its own onboarding message (its start command offers another tool than its
            # baseline: the contract changed, so the verdict is a fail with changes to accept).
            wait_until(lambda: any("now watches stacks too" in t for t in texts()), 120, 0.2, "its onboarding message")
            [welcome] = [t for t in texts() if "now watches stacks too" in t]
            assert "from " in welcome and ".mcp-watcher.yaml line " in welcome
            assert "first run: fail" in welcome

            # Rerun from Slack: the slash command, with the version typed short (2.3 is 2.3.0 on PyPI).
            slack.socket.send("slash_commands", command_payload(slack, "rerun stacks 2.3", MEMBER, "live2"))
            wait_until(lambda: any("stacks on 2.3: queued run" in r.get("text", "") for r in slack.responses), 20)

            def result() -> dict[str, Any] | None:
                for message in slack.messages:
                    actions = [e for b in message["blocks"] or [] if b.get("type") == "actions" for e in b["elements"]]
                    if "stacks" in str(message["text"]) and any(e["action_id"] == "mcpw_accept" for e in actions):
                        return message
                return None

            wait_until(lambda: result() is not None, 120, 0.2, "the rerun's result with an Accept button")
            rerun = result()
            assert rerun is not None and "2.3.0" in str(rerun["text"])

            # Accept from Slack: the click over signed HTTP, the modal submitted over Socket Mode.
            click = signed_post(service.base, form(click_payload(slack, rerun, "mcpw_accept", MEMBER, "9.1")), started)
            assert click.status_code == 200, click.text
            wait_until(lambda: slack.views, 20, 0.1, "the Accept modal")
            view = slack.views[-1]
            options = view["blocks"][0]["element"]["options"]
            values = {
                "changes": {
                    "picked": {
                        "type": "multi_static_select",
                        "selected_options": [{"value": o["value"]} for o in options],
                    }
                },
                "reason": {"text": {"type": "plain_text_input", "value": "find_title replaces find_book"}},
                "expires": {"date": {"type": "datepicker", "selected_date": "2027-01-15"}},
            }
            slack.socket.send("interactive", submission_payload(view, MEMBER, values))
            wait_until(lambda: any(f"accepted {len(options)} change(s) of *stacks*" in t for t in texts()), 20)
            assert "stacks" in command(config, "status") and "accepted in Slack: stacks: " in command(config, "status")

            # The digest knows it too (a command reading the state the service keeps).
            digest = command(config, "digest", "--preview", "--team", "books", "--format", "markdown")
            assert "stacks" in digest and "shelf" in digest

            log = service.log()
            assert log.count("server stacks (team books) appeared") == 1
            assert "Traceback" not in log and "job sync_repos failed" not in log
            assert "ConfigError" not in log
        finally:
            code = service.terminate(timeout=120)  # a run under way finishes first (a loaded machine: slower)
        assert code == 0, service.log()


def test_a_name_claimed_by_a_second_repository_is_refused_for_that_server_while_the_service_serves(tmp_path: Path):
    with world(tmp_path) as w:
        snapshot = baseline_snapshot(tmp_path / "baseline")
        books = team_repo(tmp_path / "books-repo", snapshot, ("shelf", "find_book"))
        search = team_repo(tmp_path / "search-repo", snapshot, ("catalog", "find_book"))
        # search is listed first: listing order must not hand it books's name
        config = w.config([{"git": str(search), "team": "infra"}, {"git": str(books), "team": "books"}])
        service = start_service(config, {"SLACK_BOT_TOKEN": w.slack.token}, tmp_path / "service.log")
        try:
            service.wait_http()
            wait_until(lambda: {"shelf", "catalog"} <= matrix_servers(service.get("/api/status").json()), 60, 0.2)
            add_server(search, "shelf", snapshot)
            add_server(search, "index", snapshot)
            claim = team_file(
                server_entry("catalog", "find_book"), server_entry("shelf", "find_book"), server_entry("index", "x")
            )
            change(search, {".mcp-watcher.yaml": claim}, "claims shelf")
            wait_until(
                lambda: "index" in matrix_servers(service.get("/api/status").json()), 30, 0.2, "search's new one"
            )
            status = service.get("/api/status").json()
            rows = {row["server"]: row["team"] for m in status["matrices"] for t in m["teams"] for row in t["servers"]}
            assert rows == {"shelf": "books", "catalog": "infra", "index": "infra"}  # books's shelf untouched
            page = service.get("/").text
            assert "Team infra: " in page and "server &#39;shelf&#39; belongs to " in page
            wait_until(lambda: any("'shelf'" in str(m["text"]) for m in w.slack.messages), 30, 0.2, "the notice")
            [told] = [m for m in w.slack.messages if "'shelf'" in str(m["text"])]
            assert told["channel"] == w.slack.channel_id("#infra-mcp")
            assert str(search) in told["text"] and str(books) in told["text"]
            out = command(config, "status")  # every command still starts on this state
            assert "REFUSED shelf (the file's other servers are used): " in out
            assert service.get("/healthz").status_code == 200
            assert "Traceback" not in service.log() and "duplicate name" not in service.log()
        finally:
            code = service.terminate(timeout=120)  # a run under way finishes first (a loaded machine: slower)
        assert code == 0
        once = run_cli(config, "run", "--once", timeout=300)
        assert "duplicate name" not in once.stdout + once.stderr and "Traceback" not in once.stdout + once.stderr
