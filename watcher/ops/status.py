"""What `mcp-watcher status` shows: sources and their last polls, newest versions, runs, the outbox."""

from __future__ import annotations

from typing import Any

from typing_extensions import TypedDict

from watcher.config import LoadedConfig, WatcherConfig
from watcher.core import clock
from watcher.core.run_report import RunReport, egress_refusals, egress_target
from watcher.core.store import Store
from watcher.core.text import shown
from watcher.core.timefmt import parse_iso
from watcher.ops.figures import SourceFigures, status_figures
from watcher.polling.cadence import current_cadence, plan_budget


class SourceJson(TypedDict):
    """One source's figures in `status --json` (`SourceFigures`, without its kind)."""

    sdk: str
    registry: str
    package: str
    last_poll: str | None
    ok: bool | None
    error: str | None
    newest_stable: str | None
    newest_prerelease: str | None
    older_prerelease: str | None
    versions_seen: int


def source_json(source: SourceFigures) -> SourceJson:
    """One source's figures as `status --json` and `/api/status` print them."""
    return {
        "sdk": source.name,
        "registry": source.registry,
        "package": source.package,
        "last_poll": source.last_poll,
        "ok": source.ok,
        "error": source.error,
        "newest_stable": source.newest_stable,
        "newest_prerelease": source.newest_prerelease,
        "older_prerelease": source.older_prerelease,
        "versions_seen": source.versions_seen,
    }


def collect_status(loaded: LoadedConfig, store: Store) -> dict[str, Any]:
    from watcher.repos.show import discovery_json, repos_json
    from watcher.repos.sync import effective_config

    loaded = effective_config(loaded, store)  # the team repositories' servers in use, too
    config = loaded.config
    figures = status_figures(config, store)
    failed = store.outbox(statuses=("failed",))
    oldest = parse_iso(figures.outbox.oldest_pending)
    last_runs: dict[str, dict[str, Any] | None] = {}
    runs = {
        "queued_count": figures.runs.queued,
        "running_count": figures.runs.running,
        "queued": [f"{r['server']} @ {r['sdk_version']}" for r in store.runs(status="queued")],
        "running": [f"{r['server']} @ {r['sdk_version']}" for r in store.runs(status="running")],
        "last": last_runs,
    }
    for server in config.servers:
        done = store.runs(status="done", server=server.name, limit=1)
        last_runs[server.name] = (
            {
                "sdk_version": done[0]["sdk_version"],
                "verdict": done[0]["verdict"],
                "finished": done[0]["finished"],
                "egress_refused": egress_refused(done[0]["report"]),
            }
            if done
            else None
        )
    from watcher.notify.destination import describe_destination
    from watcher.notify.settings import slack_credentials

    destination = describe_destination(config.slack, slack_credentials(config.slack))
    budget = plan_budget(config)
    from watcher.slackapp.summary import slack_status

    return {
        "slack": slack_status(store, clock.now()),
        "state": str(store.path),
        "polling": {**budget.as_json(), "now": current_cadence(loaded, store, budget, clock.now()).as_json()},
        "protection": protection_status(loaded),
        "delivery": {**destination.to_json(), "console_notices": figures.outbox.console},
        "sources": [source_json(s) for s in figures.sources],
        "spec": {
            "last_poll": figures.spec.last_poll,
            "ok": figures.spec.ok,
            "error": figures.spec.error,
            "registry_url": figures.spec.package,
        },
        "runs": runs,
        "repos": repos_json(config, store),
        "discovery": discovery_json(config, store),
        "server_set": server_set_json(config, store),
        "outbox": {
            "pending": figures.outbox.pending,
            "failed": figures.outbox.failed,
            "oldest_pending": figures.outbox.oldest_pending,
            "oldest_pending_seconds": int((clock.now() - oldest).total_seconds()) if oldest else None,
            "failed_keys": [{"key": r["key"], "error": r["last_error"]} for r in failed],
        },
    }


def server_set_json(config: WatcherConfig, store: Store) -> dict[str, Any]:
    """The server set's latest changes, its retired servers, repositories without a team file or an owner."""
    from watcher.repos.show import proposals_json
    from watcher.serverset.changes import recent_changes
    from watcher.serverset.record import origin_name, retired_servers

    with_repos = bool(config.repos or config.discover.github)
    unowned: list[dict[str, str]] = []
    if config.discover.github:
        from watcher.repos.discover import unowned as unowned_repos

        unowned = [{"repository": u.repository, "why": u.why} for u in unowned_repos(store)]
    return {
        "changes": recent_changes(store, 10),
        "retired": [
            {"server": e.name, "team": e.team, "origin": origin_name(e.origin), "retired": e.retired}
            for e in retired_servers(store)
        ],
        "proposals": proposals_json(config, store) if with_repos else [],
        "unowned": unowned,
    }


def server_set_lines(section: dict[str, Any]) -> list[str]:
    if not any(section.values()):
        return []
    lines = ["", "SERVER SET"]
    lines += [f"  {c['at']} {c['line']}" for c in section["changes"]]
    lines += [
        f"  retired: {r['server']} ({r['team']}, from {r['origin']}) since {r['retired']}" for r in section["retired"]
    ]
    for proposal in section["proposals"]:
        lines.append(f"  no team file: {proposal['repository']} ({proposal['team']}): {proposal['found']}")
    lines += [f"  unowned: {u['repository']}: {u['why']}" for u in section["unowned"]]
    return lines


def protection_status(loaded: LoadedConfig) -> dict[str, Any]:
    """What keeps the watcher's secrets from the code under test: this process's seal and the suite sandbox."""
    from watcher.core import vault
    from watcher.suites.build import indexes

    sealed = vault.current()
    suite_sandbox = indexes.boundary(loaded.config)
    return {
        "process": sealed.to_json() if sealed else None,
        "process_text": sealed.describe() if sealed else "not sealed (status was not started by the CLI)",
        "suite_sandbox": suite_sandbox.to_json(),
        "suite_sandbox_text": suite_sandbox.describe(),
    }


def egress_refused(report: RunReport | None) -> list[dict[str, object]]:
    """A run's egress audit: what its install rooms' proxy refused (or let through under `audit`), the conformance
    suite's install's included."""
    return egress_refusals(report)


def _egress_line(refused: list[dict[str, object]]) -> str:
    shown = sorted({f"{egress_target(r)} ({r.get('rule')})" for r in refused})
    audit = any(r.get("let_through") for r in refused)
    more = f", +{len(shown) - 5} more" if len(shown) > 5 else ""
    return f"      egress {'recorded (audit)' if audit else 'REFUSED'} {len(refused)}x: {', '.join(shown[:5])}{more}"


def _pre(source: dict[str, Any]) -> str:
    if source["newest_prerelease"]:
        return str(source["newest_prerelease"])
    if source.get("older_prerelease"):
        return f"- (last one, {source['older_prerelease']}, is older than {source['newest_stable']})"
    return "-"


def _health(source: dict[str, Any]) -> str:
    if source["last_poll"] is None:
        return "never polled"
    if source["ok"]:
        return f"ok at {source['last_poll']}"
    return f"FAILED at {source['last_poll']}: {source['error']}"


def render_status(status: dict[str, Any]) -> str:
    lines = [f"state: {status['state']}"]
    delivery = status.get("delivery")
    if delivery:
        flag = "DEGRADED: " if delivery["degraded"] else ""
        lines.append(f"delivery: {flag}{delivery['reason']}")
        if delivery["console_notices"] and delivery["sink"] != "console":
            lines.append(
                f"  {delivery['console_notices']} notice(s) were only printed to the console: "
                "`mcp-watcher outbox --resend-console` posts them"
            )
    lines += ["", "POLLING", *_polling_lines(status["polling"])]
    protection = status.get("protection")
    if protection:
        lines.append(f"protection: {protection['process_text']}")
        lines.append(f"suite sandbox: {protection['suite_sandbox_text']}")
    lines += ["", "SOURCES"]
    for s in status["sources"]:
        health = _health(s)
        lines.append(f"  {s['sdk']:22} {s['registry']:9} {s['package']}")
        lines.append(
            f"      {health}; newest stable {s['newest_stable'] or '-'}, "
            f"newest pre-release {_pre(s)} ({s['versions_seen']} version{'' if s['versions_seen'] == 1 else 's'} seen)"
        )
    spec = status.get("spec")
    if spec:
        lines.append(f"  {'spec':22} {'spec':9} {spec['registry_url']}")
        lines.append(f"      {_health(spec)}")
    runs = status["runs"]
    lines += ["", "SUITE RUNS", f"  queued: {', '.join(runs['queued']) or 'none'}"]
    if runs["running"]:
        lines.append(f"  running: {', '.join(runs['running'])}")
    for server, last in runs["last"].items():
        verdict = f"{last['verdict']} against {last['sdk_version']} ({last['finished']})" if last else "no run yet"
        lines.append(f"  {server:22} {verdict}")
        if last and last.get("egress_refused"):
            lines.append(_egress_line(last["egress_refused"]))
    from watcher.repos.show import repos_lines

    lines += repos_lines(status.get("repos") or [], status.get("discovery"))
    lines += server_set_lines(status.get("server_set") or {})
    box = status["outbox"]
    age = f", oldest {box['oldest_pending_seconds']} s old" if box["oldest_pending_seconds"] is not None else ""
    lines += ["", "OUTBOX", f"  pending: {box['pending']}{age}; failed: {box['failed']}"]
    for item in box["failed_keys"]:
        lines.append(f"  failed {item['key']}: {item['error']}")
    if status.get("slack"):
        from watcher.slackapp.summary import status_lines

        lines += status_lines(status["slack"])
    # The terminal's escaping layer: nearly every line carries outside text (a team file's values, a
    # registry's versions, error messages), so every line is shown with its control characters visible.
    return "\n".join(shown(line) for line in lines)


def _polling_lines(polling: dict[str, Any]) -> list[str]:
    now = polling["now"]
    lines = [f"  now: {now['reason']}"]
    if polling["enabled"]:
        lines.append(
            f"  budget: {polling['budget_per_day']:g} requests/day ({polling['sources']} sources); "
            f"planned {polling['average_per_day']:g}/day averaged over a year"
            + (" (window cadence stretched to fit)" if polling["stretched"] else "")
        )
    if now["next_change"]:
        lines.append(f"  re-plans at {now['next_change']}")
    return lines
