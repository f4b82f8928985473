"""What a snapshot declares and asks in the handshake: the client-capability profile it connects with,
and the legacy protocol revisions it probes one `initialize` each.

A server may answer differently to a client that declares roots, sampling or elicitation (list more
tools, for one), so every snapshot records the profile it was taken with. A legacy server's
`initialize` answer names one revision — the one it prefers for the client's offer — which says
nothing about the older revisions it still accepts; the probes ask for each known one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import TypeAdapter

LEGACY_PROBE_VERSIONS: tuple[str, ...] = tuple(HANDSHAKE_PROTOCOL_VERSIONS)
"""Every legacy (initialize-handshake) revision the installed SDK knows, oldest first: 2024-11-05,
2025-03-26, 2025-06-18, 2025-11-25 and any later one. The one place the probe set is defined."""

CLIENT_CAPABILITIES = ("roots", "sampling", "elicitation")
CLIENT_PROFILES: dict[str, tuple[str, ...]] = {
    "typical": CLIENT_CAPABILITIES,
    "roots": ("roots",),
    "none": (),
}
"""Named client-capability profiles. `typical` is what a desktop or IDE host declares."""
DEFAULT_CLIENT_PROFILE = "typical"
DEFAULT_CLIENT_PROFILES: tuple[str, ...] = ("typical", "none")
"""What a snapshot is taken under by default: a desktop or IDE host, and a bare client (a script, a host
without sampling or elicitation), so that a tool offered only to some clients is seen to be missing for
the others. The first is the snapshot's main profile."""
_RAW = TypeAdapter(dict[str, Any])


@dataclass(frozen=True, slots=True)
class ClientProfile:
    """The client capabilities a snapshot declares; the callbacks answer a server that uses them with
    nothing (no roots) or a refusal, so a snapshot never acts on the server's behalf."""

    name: str
    capabilities: tuple[str, ...]

    def client_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        if "roots" in self.capabilities:
            kwargs["list_roots_callback"] = _no_roots
        if "sampling" in self.capabilities:
            kwargs["sampling_callback"] = _decline_sampling
        if "elicitation" in self.capabilities:
            kwargs["elicitation_callback"] = _decline_elicitation
        return kwargs

    def record(self) -> dict[str, Any]:
        """How server.json records it."""
        return {"name": self.name, "capabilities": list(self.capabilities)}


def client_profile(name: str) -> ClientProfile:
    """A named profile, or a comma-separated list of capabilities (e.g. "roots,sampling")."""
    if name in CLIENT_PROFILES:
        return ClientProfile(name, CLIENT_PROFILES[name])
    parts = tuple(sorted({part.strip() for part in name.split(",") if part.strip()}))
    unknown = [part for part in parts if part not in CLIENT_CAPABILITIES]
    if not parts or unknown:
        raise ValueError(
            f"client profile {name!r}: expected one of {', '.join(CLIENT_PROFILES)} or a comma-separated list of "
            f"{', '.join(CLIENT_CAPABILITIES)}"
        )
    return ClientProfile(",".join(parts), parts)


async def _no_roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[])


async def _decline_sampling(context: Any, params: Any) -> types.ErrorData:
    return types.ErrorData(code=types.INVALID_REQUEST, message="mcp-watcher snapshot: sampling is declined")


async def _decline_elicitation(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="decline")


# -- legacy version probes -------------------------------------------------------------------------

Initialize = Callable[[str], Awaitable[dict[str, Any]]]
"""Send one `initialize` offering a revision; the raw result (raises MCPError on a refusal)."""


def initialize_request(version: str, profile: ClientProfile) -> types.InitializeRequest:
    capabilities: dict[str, Any] = {}
    if "roots" in profile.capabilities:
        capabilities["roots"] = {"listChanged": True}
    if "sampling" in profile.capabilities:
        capabilities["sampling"] = {}
    if "elicitation" in profile.capabilities:
        capabilities["elicitation"] = {"form": {}, "url": {}}
    return types.InitializeRequest(
        params=types.InitializeRequestParams.model_validate(
            {
                "protocolVersion": version,
                "capabilities": capabilities,
                "clientInfo": {"name": "mcp-watcher", "version": "probe"},
            }
        )
    )


async def reinitialize(session: Any, version: str, profile: ClientProfile) -> dict[str, Any]:
    """One more `initialize` on an open session (stdio servers accept it; it is the cheapest probe)."""
    raw: dict[str, Any] = await session.send_request(initialize_request(version, profile), _RAW)
    await session.send_notification(types.InitializedNotification())
    return raw


async def accepted_versions(
    preferred: str, same_session: Initialize | None, fresh_session: Initialize
) -> tuple[list[str], dict[str, str]]:
    """(the revisions the server accepts as offered, {revision: what it answered}).

    A server accepts a revision when it answers `initialize` with that same revision; it answers
    another (its counter-offer) for one it does not speak. `same_session` re-initializes the open
    connection; where it is refused (or absent, as on HTTP, where each initialize opens a session),
    `fresh_session` opens a new session for the probe.
    """
    answers: dict[str, str] = {preferred: preferred}
    for version in LEGACY_PROBE_VERSIONS:
        if version == preferred:
            continue
        answer: str | None = None
        if same_session is not None:
            try:
                answer = str((await same_session(version)).get("protocolVersion"))
            except MCPError:
                answer = None
        if answer is None:
            try:
                answer = str((await fresh_session(version)).get("protocolVersion"))
            except MCPError as exc:
                answer = f"error {exc.code}: {exc.message}"
        answers[version] = answer
    accepted = sorted(version for version, answer in answers.items() if answer == version)
    return accepted, dict(sorted(answers.items()))
