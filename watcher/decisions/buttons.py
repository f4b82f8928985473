"""The buttons the watcher puts on its own messages, and the modals they open. Posted only when Slack can
answer them: a bot token plus Socket Mode's app token or the HTTP signing secret (`interactive`)."""

from __future__ import annotations

import json
from typing import Any

from watcher.config import WatcherConfig
from watcher.core.contract_doc import ContractChange
from watcher.core.run_report import RunReport
from watcher.notify.blocks import MAX_BLOCKS, clip
from watcher.notify.settings import slack_credentials

RERUN = "mcpw_rerun"
ACCEPT = "mcpw_accept"
MUTE = "mcpw_mute"
OPEN_RUN = "mcpw_open_run"
OPEN_DEPRECATIONS = "mcpw_open_deprecations"
ACCEPT_VIEW = "mcpw_accept_submit"
MUTE_VIEW = "mcpw_mute_submit"
ACTIONS_BLOCK = "mcpw_actions"

MAX_RERUN_BUTTONS = 3
MAX_OPTIONS = 100
"""Options in one select menu (Slack's limit)."""
MAX_OPTION_TEXT = 75
MAX_MUTE_DAYS = 365


def interactive(config: WatcherConfig) -> bool:
    """Slack can deliver clicks to us: without this no button is posted."""
    return slack_credentials(config.slack).interactive


def page_url(config: WatcherConfig, path: str) -> str | None:
    base = config.http.public_url
    return f"{base.rstrip('/')}{path}" if base else None


def value(**fields: Any) -> str:
    """A button's value: the facts its handler needs, as compact JSON (Slack allows 2000 characters)."""
    return json.dumps({k: v for k, v in fields.items() if v is not None}, separators=(",", ":"))


def button(text: str, action_id: str, val: str | None = None, url: str | None = None) -> dict[str, Any]:
    element: dict[str, Any] = {
        "type": "button",
        "text": {"type": "plain_text", "text": clip(text, MAX_OPTION_TEXT)},
        "action_id": action_id,
    }
    if val is not None:
        element["value"] = val
    if url is not None:
        element["url"] = url
    return element


def _actions(elements: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "actions", "block_id": ACTIONS_BLOCK, "elements": elements[:25]}


def with_actions(blocks: list[dict[str, Any]], elements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The blocks with one actions block at the end (when there is room in the message)."""
    if not elements or len(blocks) >= MAX_BLOCKS:
        return blocks
    return [*blocks, _actions(elements)]


def alert_buttons(
    config: WatcherConfig, team: str, sdk: str, version: str, prerelease: bool, servers: list[str]
) -> list[dict[str, Any]]:
    """On a new version's alert: Rerun for each of the team's servers queued on it, Mute this SDK line…"""
    if not interactive(config):
        return []
    elements = [
        button(f"Rerun {name}" if len(servers) > 1 else "Rerun", RERUN, value(server=name, version=version))
        for name in servers[:MAX_RERUN_BUTTONS]
    ]
    if prerelease:
        elements.append(button("Mute this SDK line…", MUTE, value(team=team, sdk=sdk, version=version)))
    return elements


def result_buttons(config: WatcherConfig, report: RunReport, run_id: int | None) -> list[dict[str, Any]]:
    """On a suite result: Rerun, Accept… (when the contract changed), Mute this SDK line…, Open run. The last
    two need the run's stored id (``run_id``: the row Accept… reads the changes from, the page's number)."""
    if not interactive(config):
        return []
    server, version = report.get("server"), report.get("sdk_version")
    elements = [button("Rerun", RERUN, value(server=server, version=version))]
    contract = report.get("contract") or {}
    if isinstance(contract, dict) and contract.get("changes") and run_id is not None:
        elements.append(button("Accept…", ACCEPT, value(server=server, version=version, run=run_id)))
    team = next((s.team for s in config.servers if s.name == server), None)
    if team is not None:
        elements.append(button("Mute this SDK line…", MUTE, value(team=team, sdk=report.get("sdk"), version=version)))
    url = page_url(config, f"/runs/{run_id}") if run_id is not None else None
    if url:
        elements.append(button("Open run", OPEN_RUN, value(run=run_id), url=url))
    return elements


def digest_buttons(config: WatcherConfig) -> list[dict[str, Any]]:
    """On the weekly digest: Open deprecations (a link to the page)."""
    url = page_url(config, "/deprecations")
    if not interactive(config) or url is None:
        return []
    return [button("Open deprecations", OPEN_DEPRECATIONS, url=url)]


# --- modals -----------------------------------------------------------------------------------------------


def _option(text: str, val: str) -> dict[str, Any]:
    return {"text": {"type": "plain_text", "text": clip(text, MAX_OPTION_TEXT)}, "value": val[:150]}


def change_label(change: ContractChange) -> str:
    path = f" {change['path']}" if change.get("path") else ""
    return f"{change.get('list')}/{change.get('name')}{path}: {change.get('rule')}"


def accept_modal(changes: list[ContractChange], metadata: dict[str, Any], default_expiry: str) -> dict[str, Any]:
    """Which changes, why, until when: the fields an accept-file entry has."""
    options = [_option(change_label(c), str(i)) for i, c in enumerate(changes[:MAX_OPTIONS])]
    return {
        "type": "modal",
        "callback_id": ACCEPT_VIEW,
        "private_metadata": json.dumps(metadata, separators=(",", ":")),
        "title": {"type": "plain_text", "text": "Accept changes"},
        "submit": {"type": "plain_text", "text": "Accept"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [
            {
                "type": "input",
                "block_id": "changes",
                "label": {"type": "plain_text", "text": f"Changes of {metadata['server']} on {metadata['version']}"},
                "element": {"type": "multi_static_select", "action_id": "picked", "options": options},
            },
            {
                "type": "input",
                "block_id": "reason",
                "label": {"type": "plain_text", "text": "Why is this accepted?"},
                "element": {"type": "plain_text_input", "action_id": "text", "multiline": True, "min_length": 3},
            },
            {
                "type": "input",
                "block_id": "expires",
                "label": {"type": "plain_text", "text": "Accepted until"},
                "element": {"type": "datepicker", "action_id": "date", "initial_date": default_expiry},
            },
        ],
    }


def mute_modal(package: str, metadata: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "modal",
        "callback_id": MUTE_VIEW,
        "private_metadata": json.dumps(metadata, separators=(",", ":")),
        "title": {"type": "plain_text", "text": "Mute an SDK line"},
        "submit": {"type": "plain_text", "text": "Mute"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [
            {
                "type": "input",
                "block_id": "days",
                "label": {"type": "plain_text", "text": clip(f"No alerts for {package} pre-releases for", 150)},
                "element": {
                    "type": "number_input",
                    "action_id": "number",
                    "is_decimal_allowed": False,
                    "min_value": "1",
                    "max_value": str(MAX_MUTE_DAYS),
                    "initial_value": "14",
                },
                "hint": {"type": "plain_text", "text": "days, for this team only"},
            }
        ],
    }
