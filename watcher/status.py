"""What `mcp-watcher status` shows: sources and their last polls, newest versions, runs, the outbox."""

from __future__ import annotations

from typing import Any

from watcher import clock
from watcher.cadence import current_cadence, plan_budget
from watcher.config import LoadedConfig
from watcher.poller import last_polls
from watcher.store import Store, parse_iso, utcnow
from watcher.versions import sort_key


def newest(store: Store, sdk: str, registry: str, prerelease: bool) -> str | None:
    rows = [r for r in store.versions_of(sdk) if bool(r["prerelease"]) == prerelease and not r["yanked"]]
    if not rows:
        return None
    return max(rows, key=lambda r: sort_key(registry, r["version"]))["version"]


def collect_status(loaded: LoadedConfig, store: Store) -> dict[str, Any]:
    config = loaded.config
    polls = {p["source"]: p for p in last_polls(store)}
    sources = []
    for sdk in config.sdks:
        poll = polls.get(sdk.name)
        sources.append(
            {
                "sdk": sdk.name,
                "registry": sdk.registry,
                "package": sdk.package,
                "last_poll": poll["finished"] if poll else None,
                "ok": bool(poll["ok"]) if poll else None,
                "error": poll["error"] if poll else None,
                "newest_stable": newest(store, sdk.name, sdk.registry, False),
                "newest_prerelease": newest(store, sdk.name, sdk.registry, True),
                "versions_seen": len(store.versions_of(sdk.name)),
            }
        )
    pending = store.outbox(statuses=("queued", "sending", "posted"))
    failed = store.outbox(statuses=("failed",))
    oldest = min((parse_iso(r["created"]) for r in pending), default=None)
    runs = {
        "queued": [f"{r['server']} @ {r['sdk_version']}" for r in store.runs(status="queued")],
        "running": [f"{r['server']} @ {r['sdk_version']}" for r in store.runs(status="running")],
        "last": {},
    }
    for server in config.servers:
        done = store.runs(status="done", server=server.name, limit=1)
        runs["last"][server.name] = (
            {"sdk_version": done[0]["sdk_version"], "verdict": done[0]["verdict"], "finished": done[0]["finished"]}
            if done
            else None
        )
    budget = plan_budget(config)
    return {
        "state": str(store.path),
        "polling": {**budget.as_json(), "now": current_cadence(loaded, store, budget, clock.now()).as_json()},
        "sources": sources,
        "runs": runs,
        "outbox": {
            "pending": len(pending),
            "failed": len(failed),
            "oldest_pending_seconds": int((utcnow() - oldest).total_seconds()) if oldest else None,
            "failed_keys": [{"key": r["key"], "error": r["last_error"]} for r in failed],
        },
    }


def render_status(status: dict[str, Any]) -> str:
    lines = [f"state: {status['state']}", "", "POLLING", *_polling_lines(status["polling"]), "", "SOURCES"]
    for s in status["sources"]:
        if s["last_poll"] is None:
            health = "never polled"
        elif s["ok"]:
            health = f"ok at {s['last_poll']}"
        else:
            health = f"FAILED at {s['last_poll']}: {s['error']}"
        lines.append(f"  {s['sdk']:22} {s['registry']:9} {s['package']}")
        lines.append(
            f"      {health}; newest stable {s['newest_stable'] or '-'}, "
            f"newest pre-release {s['newest_prerelease'] or '-'} ({s['versions_seen']} versions seen)"
        )
    runs = status["runs"]
    lines += ["", "SUITE RUNS", f"  queued: {', '.join(runs['queued']) or 'none'}"]
    if runs["running"]:
        lines.append(f"  running: {', '.join(runs['running'])}")
    for server, last in runs["last"].items():
        verdict = f"{last['verdict']} against {last['sdk_version']} ({last['finished']})" if last else "no run yet"
        lines.append(f"  {server:22} {verdict}")
    box = status["outbox"]
    age = f", oldest {box['oldest_pending_seconds']} s old" if box["oldest_pending_seconds"] is not None else ""
    lines += ["", "OUTBOX", f"  pending: {box['pending']}{age}; failed: {box['failed']}"]
    for item in box["failed_keys"]:
        lines.append(f"  failed {item['key']}: {item['error']}")
    return "\n".join(lines)


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
