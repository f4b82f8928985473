"""What Slack says of the bot token before the first delivery (`run --check`).

Two kinds of call, however many teams there are: `auth.test` (is the token accepted; Slack sends the
token's scopes with every answer, in the `x-oauth-scopes` header) and one paged `users.conversations`
(the channels the bot is a member of), never one call per channel. From them: a refused token, a scope the
service uses that the token lacks, and every channel a notice goes to that the bot is not in (it cannot join
by itself: a notice there would fail with `not_in_channel`). Slack that cannot be reached is a warning, not
a failure: notices wait in the outbox until it answers.
"""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web import SlackResponse

from watcher.config import WatcherConfig
from watcher.notify.settings import SlackCredentials

NEEDED_SCOPES = {
    "chat:write": "every notice",
    "channels:read": "a #channel name to its id; who may act from Slack (public channels)",
    "groups:read": "the same for private channels",
    "channels:history": "finding a message already posted after a crash (public channels)",
    "groups:history": "the same in private channels",
    "files:write": "the digest's timeline picture",
}
"""The bot scopes delivery uses (deploy/slack-app-manifest.yaml; deploy/README.md maps each to its calls)."""
INTERACTIVE_SCOPES = {
    "usergroups:read": "who may act from Slack: a team's user group",
    "commands": "/mcp-watcher",
}
"""The scopes the buttons and the slash command add (with an app token or a signing secret)."""
UNREACHABLE = (OSError, http.client.HTTPException, SlackClientError)
"""What the client raises when Slack gives no answer: the network, a proxy, a timeout."""
PAGE_SIZE = 200
"""Channels per users.conversations page (Slack allows up to 999 and recommends no more than 200)."""
MAX_PAGES = 50
TOKEN_ERRORS = {
    "invalid_auth": "Slack does not know this token",
    "not_authed": "no token reached Slack",
    "account_inactive": "the token's user or bot was deactivated",
    "token_revoked": "the token was revoked",
    "token_expired": "the token expired (token rotation is not supported: use a long-lived bot token)",
    "not_allowed_token_type": "this is not a bot token (xoxb-…)",
}


@dataclass(frozen=True)
class Channel:
    name: str
    """As configured: `#name` or an id (C…, G…)."""
    why: tuple[str, ...]


@dataclass
class SlackFindings:
    ok: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    """The Web API methods called, in order (one auth.test, then users.conversations page by page)."""


def notice_channels(config: WatcherConfig) -> list[Channel]:
    """Every channel a notice can go to, with why: each team's, the operators', and the team channels that
    servers declared in team files (`repos`, `discover`) report to."""
    why: dict[str, list[str]] = {}
    for team in config.teams:
        why.setdefault(team.slack_channel, []).append(f"team {team.name}")
    for repo in config.repos:
        team = config.team(repo.team)
        why.setdefault(team.slack_channel, []).append(f"team file of {repo.git}")
    if config.discover.github is not None and config.discover.github.team:
        team = config.team(config.discover.github.team)
        why.setdefault(team.slack_channel, []).append(f"team files found in {config.discover.github.org}")
    if config.slack.operators_channel:
        why.setdefault(config.slack.operators_channel, []).append("operator alerts")
    return [Channel(name, tuple(reasons)) for name, reasons in why.items()]


def check_slack(config: WatcherConfig, credentials: SlackCredentials) -> SlackFindings:
    """Ask Slack about the bot token (nothing when there is none; a webhook cannot be checked without posting)."""
    found = SlackFindings()
    if not credentials.token:
        if credentials.webhook_url:
            found.ok.append("Slack webhook: not checked (only a post would show it works)")
        return found
    settings = config.slack
    kwargs: dict[str, Any] = {"token": credentials.token, "timeout": max(1, int(min(settings.timeout_seconds, 15)))}
    if settings.api_url:
        kwargs["base_url"] = settings.api_url if settings.api_url.endswith("/") else settings.api_url + "/"
    client = WebClient(**kwargs)
    client.retry_handlers.clear()  # one look, no waiting: unreachable is a finding, said at once
    try:
        found.calls.append("auth.test")
        who = client.auth_test()
    except SlackApiError as exc:
        _refused(found, exc, "auth.test")
        return found
    except UNREACHABLE as exc:  # not a failure of the start: notices wait for Slack in the outbox
        _unreachable(found, exc)
        return found
    found.ok.append(
        f"Slack: the token works: bot {who.get('user')!r} in the workspace {who.get('team')!r} ({who.get('url')})"
    )
    needed = {**NEEDED_SCOPES, **(INTERACTIVE_SCOPES if credentials.interactive else {})}
    _scopes(found, _header(who, "x-oauth-scopes"), needed)
    channels = notice_channels(config)
    if not channels:
        return found
    try:
        member_of = _member_channels(client, found)
    except SlackApiError as exc:
        _refused(found, exc, "users.conversations")
        return found
    except UNREACHABLE as exc:
        _unreachable(found, exc)
        return found
    missing = [c for c in channels if c.name.lstrip("#") not in member_of]
    for channel in missing:
        found.failures.append(
            f"Slack: the bot is not in {channel.name} ({', '.join(channel.why)}), or there is no such channel: "
            f"invite it there (`/invite @{who.get('user')}`); a notice to it would fail with not_in_channel"
        )
    if not missing:
        found.ok.append(f"Slack: the bot is in every channel notices go to ({', '.join(c.name for c in channels)})")
    return found


def _member_channels(client: WebClient, found: SlackFindings) -> set[str]:
    """Names and ids of the channels (public and private) the bot is a member of: one paged listing."""
    names: set[str] = set()
    for page in _pages(client, found):
        for channel in page.get("channels") or []:
            names.update(str(channel[k]) for k in ("id", "name") if channel.get(k))
    return names


def _pages(client: WebClient, found: SlackFindings) -> Iterator[SlackResponse]:
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        found.calls.append("users.conversations")
        page = client.users_conversations(
            types="public_channel,private_channel", exclude_archived=True, limit=PAGE_SIZE, cursor=cursor
        )
        yield page
        cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
        if not cursor:
            return


def _header(response: SlackResponse, name: str) -> str | None:
    for key, value in (response.headers or {}).items():
        if key.lower() == name:
            return str(value[0] if isinstance(value, list) else value)
    return None


def _scopes(found: SlackFindings, granted_header: str | None, needed: dict[str, str]) -> None:
    if granted_header is None:
        found.warnings.append("Slack: the token's scopes were not reported (no x-oauth-scopes header): not checked")
        return
    granted = {s.strip() for s in granted_header.split(",") if s.strip()}
    lacking = [scope for scope in needed if scope not in granted]
    for scope in lacking:
        found.failures.append(
            f"Slack: the token lacks the scope {scope} ({needed[scope]}): add it under the app's OAuth & "
            "Permissions (deploy/slack-app-manifest.yaml lists them all) and reinstall the app"
        )
    if not lacking:
        found.ok.append(f"Slack: the token has the {len(needed)} scopes the service uses")


def _refused(found: SlackFindings, exc: SlackApiError, method: str) -> None:
    response = exc.response
    status = response.status_code
    error = str(response.get("error") or "") if isinstance(response.data, dict) else ""
    if status == 429 or status >= 500:
        _unreachable(found, exc)
    elif error == "missing_scope":
        found.failures.append(
            f"Slack: {method} needs the scope {response.get('needed')} the token lacks (it has: "
            f"{response.get('provided')}): add it under the app's OAuth & Permissions and reinstall the app"
        )
    elif error in TOKEN_ERRORS:
        found.failures.append(f"Slack: the bot token is refused: {error} ({TOKEN_ERRORS[error]})")
    else:
        found.failures.append(f"Slack: {method} was refused: {error or f'HTTP {status}'}")


def _unreachable(found: SlackFindings, exc: Exception) -> None:
    reason = f"{type(exc).__name__}: {exc}" if not isinstance(exc, SlackApiError) else _api_reason(exc)
    found.warnings.append(
        f"Slack could not be asked ({reason}): the token, its scopes and the channels are not checked; "
        "notices wait in the outbox until Slack answers"
    )


def _api_reason(exc: SlackApiError) -> str:
    status = exc.response.status_code
    return "rate limited (HTTP 429)" if status == 429 else f"HTTP {status}"
