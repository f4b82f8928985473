"""The Bolt app: what a click on one of our buttons, a modal's submission or `/mcp-watcher` does.

Every listener acknowledges first (Slack wants an answer within three seconds) and works after, in
Bolt's listener threads. Each delivery is recorded under a key taken from its payload (the same for a
delivery Slack retries), so a retry does nothing again; a second click on Rerun finds the run it
queued. The outcome is one reply in the thread the click came from, through the outbox like every
notice; a refusal or a question's answer is ephemeral, for the one who asked.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

from slack_bolt import Ack, App, Respond
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from watcher.config import LoadedConfig
from watcher.contract.accept import LIST_NAMES, AcceptEntry
from watcher.core import clock
from watcher.core.contract_doc import AcceptEntryRecord, ContractChange
from watcher.core.errors import ConfigError
from watcher.core.store import Store
from watcher.core.store_schema import Notice
from watcher.decisions import buttons, records
from watcher.decisions.records import AcceptDetail, Actor, Origin
from watcher.live import ConfigSource
from watcher.notify import keys
from watcher.notify.blocks import Mrkdwn, guard, section
from watcher.notify.settings import SlackCredentials, Team
from watcher.slackapp import summary
from watcher.slackapp.gate import Gate
from watcher.sources.versions import as_known

log = logging.getLogger(__name__)

COMMAND = "/mcp-watcher"
HELP = Mrkdwn(
    "`/mcp-watcher status [server]` — where each server stands, what was done from Slack\n"
    "`/mcp-watcher rerun SERVER VERSION` — run that server's suite on that SDK version again\n"
    "`/mcp-watcher accepted [server]` — accepted contract changes and until when\n"
    "`/mcp-watcher help` — this text"
)
Tell = Callable[[Mrkdwn], None]
"""Answers the one who clicked or typed, in our words with outside text escaped."""
DEFAULT_ACCEPT_DAYS = 30


def slack_action_reply(action_id: int) -> str:
    """The thread reply that tells what a Slack action did (one per action)."""
    return f"slack-action:{action_id}"


@dataclass
class Interactions:
    source: ConfigSource
    """The service's live configuration: a server a team file added is one the buttons and commands know."""
    store: Store
    client: WebClient
    on_change: Callable[[], None]
    """Called after something was queued (a reply, a run): the service delivers and starts work."""

    def __post_init__(self) -> None:
        self.gate = Gate(self.client, self.store)

    @property
    def loaded(self) -> LoadedConfig:
        """The configuration in force now (read for each click or command)."""
        return self.source.loaded

    # --- helpers ------------------------------------------------------------------------------------------

    def _team_of(self, server: str) -> tuple[Team, str, str]:
        """(team, sdk, package) of a configured server; ConfigError when there is none."""
        config = self.loaded.config
        item = config.server(server)
        return config.team(item.team), item.sdk, item.sdk_package or config.sdk(item.sdk).package

    def _thread_of(self, origin: Origin, fallback: str | None) -> str | None:
        """The key of the notice whose thread the click came from (the click's message or its parent)."""
        row = records.notice_at(self.store, origin.channel, origin.thread_ts or origin.message_ts)
        if row is not None:
            return str(row["thread_of"] or row["key"])
        return fallback

    def _reply(self, action_id: int, team: Team, thread_of: str | None, text: Mrkdwn) -> None:
        self.store.enqueue(
            Notice(
                key=slack_action_reply(action_id),
                team=team.name,
                channel=team.slack_channel,
                kind="slack_action",
                text=text,
                blocks=[section(text)],
                thread_of=thread_of,
            )
        )
        self.on_change()

    def _whisper(self, origin: Origin, user: str, text: Mrkdwn) -> None:
        """An ephemeral message to the one user (after a modal, where there is no response URL)."""
        if origin.channel is None:
            return
        said, blocks = guard(text, [section(text)])
        try:
            self.client.chat_postEphemeral(
                channel=origin.channel,
                user=user,
                text=said,
                blocks=blocks,
                thread_ts=origin.thread_ts or origin.message_ts,
            )
        except SlackClientError as exc:
            log.warning("could not tell %s in Slack: %s", user, type(exc).__name__)

    def _open(self, client: WebClient, body: dict[str, Any], view: dict[str, Any], tell: Tell) -> None:
        """Open a modal; Slack refusing (the click's trigger expires after three seconds) is said to the user."""
        try:
            client.views_open(trigger_id=body["trigger_id"], view=view)
        except (SlackClientError, OSError) as exc:
            reason = exc.response.get("error") if isinstance(exc, SlackApiError) else type(exc).__name__
            log.warning("could not open a modal: %s", reason)
            tell(Mrkdwn("Slack would not open the form ({}): please click again.").format(reason))

    def _allowed(self, action_id: int, team: Team, actor: Actor, tell: Tell) -> bool:
        verdict = self.gate.check(team, actor.user_id)
        if not verdict.allowed:
            records.finish(self.store, action_id, f"refused: {verdict.why}")
            tell(Mrkdwn(":no_entry: Not done: {}.").format(verdict.why))
        return verdict.allowed

    # --- Rerun ----------------------------------------------------------------------------------------------

    def rerun(
        self,
        delivery: str,
        actor: Actor,
        origin: Origin,
        server: str,
        version: str,
        tell: Tell,
    ) -> int | None:
        """Queue the server on the version again; the new run's id (None: nothing queued, the user told why)."""
        try:
            team, sdk, _package = self._team_of(server)
        except ConfigError:
            tell(Mrkdwn("No server named {} is configured.").format(repr(server)))
            return None
        action_id = records.claim(
            self.store, delivery, actor, team.name, "rerun", origin, server=server, sdk=sdk, version=version
        )
        if action_id is None:
            return None  # this delivery was handled already (Slack retried it)
        if not self._allowed(action_id, team, actor, tell):
            return None
        known = {row["version"] for row in self.store.versions_of(sdk)}
        version = as_known(self.loaded.config.sdk(sdk).registry, version, known)  # `2.2` is 2.2.0 where that exists
        if version not in known:
            records.finish(self.store, action_id, "refused: unknown version")
            tell(Mrkdwn("{} {} is not a version the watcher has seen.").format(sdk, version))
            return None
        active = records.active_run(self.store, server, version)
        if active is not None:
            records.finish(self.store, action_id, f"not queued: run {active['id']} is already {active['status']}")
            tell(
                Mrkdwn("{} on {} is already {} (run {}): nothing added.").format(
                    server, version, active["status"], active["id"]
                )
            )
            return None
        run_id = records.queue_rerun(self.store, server, sdk, version, action_id)
        if run_id is None:  # queued by another click in the meantime
            records.finish(self.store, action_id, "not queued: a run was queued meanwhile")
            tell(Mrkdwn("{} on {} was just queued by someone else: nothing added.").format(server, version))
            return None
        records.finish(self.store, action_id, f"queued run {run_id}")
        fallback = keys.release_alert(sdk, version, team.name)
        self._reply(
            action_id,
            team,
            self._thread_of(origin, fallback if self.store.outbox_row(fallback) else None),
            Mrkdwn(":repeat: {} asked for a rerun of *{}* on {} (run {}): the result follows in this thread.").format(
                actor.mention, server, version, run_id
            ),
        )
        return run_id

    def on_rerun(self, ack: Ack, body: dict[str, Any], respond: Respond) -> None:
        ack()
        fields = _button_value(body)
        self.rerun(
            _delivery(body),
            _actor(body),
            _origin(body),
            str(fields.get("server")),
            str(fields.get("version")),
            _ephemeral(respond),
        )

    # --- Accept… --------------------------------------------------------------------------------------------

    def _run_changes(self, run_id: Any) -> list[ContractChange]:
        run = self.store.run_by_id(int(run_id)) if isinstance(run_id, int) else None
        contract = (run["report"] or {}).get("contract") if run else None
        changes = contract.get("changes") if isinstance(contract, dict) else None
        return list(changes or [])[: buttons.MAX_OPTIONS]

    def on_accept(self, ack: Ack, body: dict[str, Any], respond: Respond, client: WebClient) -> None:
        ack()
        fields, actor, origin = _button_value(body), _actor(body), _origin(body)
        tell = _ephemeral(respond)
        try:
            team, _sdk, _package = self._team_of(str(fields.get("server")))
        except ConfigError:
            tell(Mrkdwn("That server is no longer configured."))
            return
        verdict = self.gate.check(team, actor.user_id)
        if not verdict.allowed:
            tell(Mrkdwn(":no_entry: Not done: {}.").format(verdict.why))
            return
        changes = self._run_changes(fields.get("run"))
        if not changes:
            tell(Mrkdwn("This run has no contract changes left to accept."))
            return
        default = (clock.today() + dt.timedelta(days=DEFAULT_ACCEPT_DAYS)).isoformat()
        meta = {**fields, "channel": origin.channel, "ts": origin.message_ts, "thread_ts": origin.thread_ts}
        self._open(client, body, buttons.accept_modal(changes, meta, default), tell)

    def on_accept_submit(self, ack: Ack, body: dict[str, Any], view: dict[str, Any]) -> None:
        meta = json.loads(view.get("private_metadata") or "{}")
        values = view["state"]["values"]
        picked = [int(o["value"]) for o in values["changes"]["picked"].get("selected_options") or []]
        reason = str(values["reason"]["text"].get("value") or "").strip()
        expires = str(values["expires"]["date"].get("selected_date") or "")
        errors = {}
        if not picked:
            errors["changes"] = "Pick at least one change."
        if len(reason) < 3:
            errors["reason"] = "Say why the change is accepted."
        if not expires or expires <= clock.today().isoformat():
            errors["expires"] = "Pick a day after today."
        if errors:
            ack(response_action="errors", errors=errors)
            return
        ack()
        actor = _actor(body)
        origin = Origin(meta.get("channel"), meta.get("ts"), meta.get("thread_ts"))
        server, version = str(meta.get("server")), str(meta.get("version"))
        team, sdk, _package = self._team_of(server)
        changes = self._run_changes(meta.get("run"))
        chosen = [changes[i] for i in picked if 0 <= i < len(changes)]
        by = f"{actor.user_name} ({actor.user_id}) in Slack, {clock.now().isoformat(timespec='seconds')}"
        entries = [_accept_entry(c, reason, expires, by) for c in chosen]
        detail: AcceptDetail = {
            "changes": [buttons.change_label(c) for c in chosen],
            "reason": reason,
            "expires": expires,
        }
        delivery = f"view:{view.get('id')}:{view.get('hash')}"
        action_id = records.claim(
            self.store, delivery, actor, team.name, "accept", origin, server=server, sdk=sdk, version=version,
            detail=detail,
        )  # fmt: skip
        if action_id is None:
            return
        if not self._allowed(action_id, team, actor, lambda text: self._whisper(origin, actor.user_id, text)):
            return
        added = records.add_accepts(self.store, server, team.name, entries, actor, action_id)
        if not added:  # the same changes accepted again (a second modal, a double click): said, not posted
            records.finish(self.store, action_id, "nothing new: accepted already")
            self._whisper(origin, actor.user_id, Mrkdwn("Those changes are accepted already, until that day or later."))
            return
        records.finish(self.store, action_id, f"accepted {len(added)} change(s) until {expires}")
        listed = Mrkdwn("\n").join(Mrkdwn("• `{}`").format(label) for label in detail["changes"])
        again = "" if len(added) == len(entries) else f" ({len(entries) - len(added)} were accepted already)"
        self._reply(
            action_id,
            team,
            self._thread_of(origin, keys.release_alert(sdk, version, team.name)),
            Mrkdwn(
                ":white_check_mark: {} accepted {} change(s) of *{}* until {}{}: {}\n{}\n"
                "They stop failing from the next run (Rerun applies them now)."
            ).format(actor.mention, len(added), server, expires, again, reason, listed),
        )

    # --- Mute this SDK line… --------------------------------------------------------------------------------

    def on_mute(self, ack: Ack, body: dict[str, Any], respond: Respond, client: WebClient) -> None:
        ack()
        fields, actor, origin = _button_value(body), _actor(body), _origin(body)
        tell = _ephemeral(respond)
        config = self.loaded.config
        team = next((t for t in config.teams if t.name == fields.get("team")), None)
        sdk = next((s for s in config.sdks if s.name == fields.get("sdk")), None)
        if team is None or sdk is None:
            tell(Mrkdwn("That team or SDK is no longer configured."))
            return
        verdict = self.gate.check(team, actor.user_id)
        if not verdict.allowed:
            tell(Mrkdwn(":no_entry: Not done: {}.").format(verdict.why))
            return
        meta = {**fields, "channel": origin.channel, "ts": origin.message_ts, "thread_ts": origin.thread_ts}
        self._open(client, body, buttons.mute_modal(sdk.package, meta), tell)

    def on_mute_submit(self, ack: Ack, body: dict[str, Any], view: dict[str, Any]) -> None:
        meta = json.loads(view.get("private_metadata") or "{}")
        raw = str(view["state"]["values"]["days"]["number"].get("value") or "")
        if not raw.isdigit() or not 1 <= int(raw) <= buttons.MAX_MUTE_DAYS:
            ack(response_action="errors", errors={"days": f"A whole number of days, 1 to {buttons.MAX_MUTE_DAYS}."})
            return
        ack()
        days, actor = int(raw), _actor(body)
        origin = Origin(meta.get("channel"), meta.get("ts"), meta.get("thread_ts"))
        config = self.loaded.config
        team, sdk = config.team(str(meta.get("team"))), config.sdk(str(meta.get("sdk")))
        until = clock.now() + dt.timedelta(days=days)
        delivery = f"view:{view.get('id')}:{view.get('hash')}"
        action_id = records.claim(
            self.store, delivery, actor, team.name, "mute", origin, sdk=sdk.name, version=meta.get("version"),
            detail={"days": days, "until": until.isoformat(timespec="seconds")},
        )  # fmt: skip
        if action_id is None:
            return

        def tell(text: Mrkdwn) -> None:
            self._whisper(origin, actor.user_id, text)

        if not self._allowed(action_id, team, actor, tell):
            return
        current = records.muted_until(self.store, team.name, sdk.name, clock.now())
        if current is not None and current.date() >= until.date():  # the same days, clicked twice
            records.finish(self.store, action_id, f"not muted again: muted until {current.date().isoformat()}")
            tell(
                Mrkdwn("{} pre-releases are muted for {} until {} already.").format(
                    sdk.package, team.name, current.date().isoformat()
                )
            )
            return
        records.add_mute(self.store, team.name, sdk.name, sdk.package, until, actor, action_id)
        records.finish(self.store, action_id, f"muted until {until.date().isoformat()}")
        self._reply(
            action_id,
            team,
            self._thread_of(origin, None),
            Mrkdwn(
                ":no_bell: {} muted {} pre-releases for team {} for {} day(s), until {}: "
                "no alerts or results for them in this channel."
            ).format(actor.mention, sdk.package, team.name, days, until.date().isoformat()),
        )

    # --- links ------------------------------------------------------------------------------------------------

    def on_link(self, ack: Ack) -> None:
        ack()  # a URL button: Slack opens the page; it still wants an answer

    # --- /mcp-watcher -------------------------------------------------------------------------------------------

    def on_command(self, ack: Ack, body: dict[str, Any], respond: Respond) -> None:
        ack()
        words = str(body.get("text") or "").split()
        sub, args = (words[0].lower(), words[1:]) if words else ("help", [])
        tell = _ephemeral(respond)
        if sub == "status":
            tell(self.status_text(args[0] if args else None))
        elif sub == "accepted":
            tell(summary.accepted_text(self.loaded, self.store, clock.today(), args[0] if args else None))
        elif sub == "rerun" and len(args) == 2:
            actor = Actor(str(body.get("user_id")), str(body.get("user_name") or body.get("user_id")))
            origin = Origin(body.get("channel_id"), None)
            run_id = self.rerun(f"command:{body.get('trigger_id')}", actor, origin, args[0], args[1], tell)
            if run_id is not None:
                tell(
                    Mrkdwn("{} on {}: queued run {}; the result goes to the version's thread.").format(
                        args[0], args[1], run_id
                    )
                )
        else:
            tell(HELP)

    def status_text(self, server: str | None) -> Mrkdwn:
        """`/mcp-watcher status [server]`: the words typed come back only escaped."""
        config = self.loaded.config
        servers = [s for s in config.servers if server is None or s.name == server]
        if not servers:
            return Mrkdwn("No server named {}.").format(repr(server))
        lines: list[Mrkdwn] = []
        for item in servers:
            done = self.store.runs(status="done", server=item.name, limit=1)
            queued = [r["sdk_version"] for r in self.store.runs(status="queued", server=item.name)]
            last = f"{done[0]['verdict']} on {done[0]['sdk_version']} ({done[0]['finished']})" if done else "no run yet"
            wait = f"; queued: {', '.join(queued)}" if queued else ""
            lines.append(Mrkdwn("*{}* ({}): {}{}").format(item.name, item.team, last, wait))
        for mute in records.mutes(self.store, clock.now()):
            lines.append(
                Mrkdwn("muted: {} pre-releases for {} until {}").format(
                    mute.package, mute.team, mute.until.date().isoformat()
                )
            )
        recent = records.actions(self.store, server=server, limit=5)
        if recent:
            lines.append(Mrkdwn("_Done from Slack:_"))
            lines += [Mrkdwn("• {}").format(a.line()) for a in recent]
        return Mrkdwn("\n").join(lines)


# --- payload reading ------------------------------------------------------------------------------------------


def _button_value(body: dict[str, Any]) -> dict[str, Any]:
    action = (body.get("actions") or [{}])[0]
    try:
        fields = json.loads(action.get("value") or "{}")
    except ValueError:
        return {}
    return fields if isinstance(fields, dict) else {}


def _actor(body: dict[str, Any]) -> Actor:
    user = body.get("user") or {}
    return Actor(str(user.get("id")), str(user.get("username") or user.get("name") or user.get("id")))


def _origin(body: dict[str, Any]) -> Origin:
    container = body.get("container") or {}
    message = body.get("message") or {}
    channel = (body.get("channel") or {}).get("id") or container.get("channel_id")
    return Origin(channel, message.get("ts") or container.get("message_ts"), message.get("thread_ts"))


def _delivery(body: dict[str, Any]) -> str:
    """One click's key: the same in a delivery Slack retries, different for a second click."""
    action = (body.get("actions") or [{}])[0]
    user = (body.get("user") or {}).get("id")
    return f"{body.get('type')}:{user}:{action.get('action_id')}:{action.get('action_ts')}"


def _ephemeral(respond: Respond) -> Tell:
    """An answer only the one who asked sees: through the same layer and guard as every notice (a section
    sent verbatim, so nothing in it becomes a link or a mention Slack makes itself)."""

    def tell(text: Mrkdwn) -> None:
        said, blocks = guard(text, [section(text)])
        try:
            respond(text=said, blocks=blocks, response_type="ephemeral", replace_original=False)
        except (SlackClientError, OSError) as exc:
            log.warning("could not answer in Slack: %s", type(exc).__name__)

    return tell


def _accept_entry(change: ContractChange, reason: str, expires: str, by: str) -> AcceptEntryRecord:
    """An accept-file entry for one change, validated like the file's."""
    reverse = {v: k for k, v in LIST_NAMES.items()}
    entry: AcceptEntryRecord = {
        "rule": str(change.get("rule")),
        "list": reverse.get(str(change.get("list")), str(change.get("list"))),
        "name": str(change.get("name")),
    }
    if change.get("path"):
        entry["path"] = change["path"]
    entry.update({"reason": reason, "expires": expires, "by": by})
    AcceptEntry.model_validate(entry)
    return entry


# --- the app ----------------------------------------------------------------------------------------------------


def web_client(credentials: SlackCredentials, loaded: LoadedConfig) -> WebClient:
    settings = loaded.config.slack
    kwargs: dict[str, Any] = {"token": credentials.token, "timeout": max(1, int(settings.timeout_seconds))}
    if settings.api_url:
        kwargs["base_url"] = settings.api_url if settings.api_url.endswith("/") else settings.api_url + "/"
    return WebClient(**kwargs)


def build_app(
    source: ConfigSource,
    store: Store,
    credentials: SlackCredentials,
    on_change: Callable[[], None],
    executor: Executor | None = None,
) -> App:
    """The Bolt app with every listener, run after the ack on ``executor`` (the caller's, so that it can wait
    for them at stop). Requests over HTTP are verified before they reach it (watcher.slackapp.connect, on the
    service's clock); Socket Mode needs no signature."""
    client = web_client(credentials, source.loaded)  # the Web API's address and timeout are fixed at start
    app = App(
        listener_executor=executor,
        client=client,  # carries the bot token
        signing_secret="",
        request_verification_enabled=False,
        token_verification_enabled=False,
        logger=logging.getLogger("watcher.slackapp.bolt"),
    )
    work = Interactions(source, store, client, on_change)
    app.action(buttons.RERUN)(work.on_rerun)
    app.action(buttons.ACCEPT)(work.on_accept)
    app.action(buttons.MUTE)(work.on_mute)
    app.action(buttons.OPEN_RUN)(work.on_link)
    app.action(buttons.OPEN_DEPRECATIONS)(work.on_link)
    app.view(buttons.ACCEPT_VIEW)(work.on_accept_submit)
    app.view(buttons.MUTE_VIEW)(work.on_mute_submit)
    app.command(COMMAND)(work.on_command)
    return app
