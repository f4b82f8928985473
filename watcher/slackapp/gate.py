"""Who may act on a team's server from Slack: a member of the team's channel (conversations.members), or of
the team's configured user group (usergroups.users.list). Anything Slack cannot tell us is a refusal."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from slack_sdk import WebClient
from slack_sdk.errors import SlackClientError

from watcher.core.store import Store
from watcher.notify.delivery import channel_id
from watcher.notify.settings import Team

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    why: str


class Gate:
    def __init__(self, client: WebClient, store: Store) -> None:
        self.client = client
        self.store = store

    def check(self, team: Team, user_id: str) -> Verdict:
        try:
            channel = self._channel_id(team.slack_channel)
            if channel is not None and user_id in self._members(channel):
                return Verdict(True, f"member of {team.slack_channel}")
            if team.slack_usergroup and user_id in self._group(team.slack_usergroup):
                return Verdict(True, f"member of the user group {team.slack_usergroup}")
        except (SlackClientError, OSError) as exc:
            log.warning("cannot check who may act for team %s: %s", team.name, type(exc).__name__)
            return Verdict(False, f"Slack could not tell whether you are in {team.slack_channel}")
        where = team.slack_channel + (f" or the user group {team.slack_usergroup}" if team.slack_usergroup else "")
        return Verdict(False, f"only members of {where} may act on team {team.name}'s servers")

    def _members(self, channel: str) -> set[str]:
        members: set[str] = set()
        cursor = None
        while True:
            response = self.client.conversations_members(channel=channel, limit=1000, cursor=cursor)
            page: list[str] = response.get("members", [])  # Slack's JSON
            members |= set(page)
            cursor = (response.get("response_metadata") or {}).get("next_cursor")
            if not cursor:
                return members

    def _group(self, usergroup: str) -> set[str]:
        response = self.client.usergroups_users_list(usergroup=usergroup)
        users: list[str] = response.get("users", [])  # Slack's JSON
        return set(users)

    def _channel_id(self, channel: str) -> str | None:
        return channel_id(self.client, self.store, channel)
