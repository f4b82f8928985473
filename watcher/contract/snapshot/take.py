"""`take_snapshot`: every era under every client profile, written to one folder with its manifest."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from watcher.contract.handshake import DEFAULT_CLIENT_PROFILES, ClientProfile, client_profile
from watcher.contract.normalize import ERA_CHOICES, ERAS, LISTS, MANIFEST_FILE, PROFILES_DIR, write_json
from watcher.contract.snapshot.outcome import EraResult
from watcher.contract.snapshot.schedule import take_sessions
from watcher.contract.snapshot.target import SnapshotTarget
from watcher.contract.snapshot.writing import masked, remove_stale_layout, remove_stale_profiles, write_era

if TYPE_CHECKING:
    from watcher.core.contract_doc import EraRecord, SnapshotSummary

FORMAT_VERSION = 1
_SHARED_VERSION_FIELDS = ("supportedVersions", "supportedVersionsSource", "versionProbes")


async def take_snapshot(
    target: SnapshotTarget,
    out_dir: Path,
    era: str = "both",
    timeout: float = 60.0,
    profile: str | None = None,
    client_profile_name: str | Sequence[str] = DEFAULT_CLIENT_PROFILES,
    probe_versions: bool = True,
) -> SnapshotSummary:
    """Write the snapshot of `target` to `out_dir` (`out_dir/legacy` and `out_dir/modern` for "both").

    Returns a summary: {"outDir", "layout", "eras": {era: {"status", "counts", "protocolVersion"}},
    "profiles": {profile: {era: …}}} ("eras" is the first profile's).
    `profile` only names the credentials profile in snapshot.json; its headers and variables come in
    `target.headers` and `target.env` and are recorded by name only. `client_profile_name` names the
    client-capability profiles to take the contract under (`watcher.contract.handshake.CLIENT_PROFILES`,
    or comma lists of capabilities), one name or several: the first is written where a one-profile
    snapshot goes, each other one under `out_dir/profiles/<name>/` in the same layout. Every era under
    every profile is read at the same time: each legacy session on its own connection, the modern era's
    sessions of a stdio server on one process (`take_sessions`); the legacy version probes, which do
    not depend on the client's capabilities, are made once, by the first profile, and shared.
    `probe_versions` False skips the legacy version probes (server.json then records one handshake).
    """
    target.validate()
    names = [client_profile_name] if isinstance(client_profile_name, str) else list(client_profile_name)
    clients = distinct_profiles(names)
    if era not in ERA_CHOICES:
        raise ValueError(f"era must be one of {', '.join(ERA_CHOICES)}, not {era!r}")
    out_dir = Path(out_dir)
    eras = ERAS if era == "both" else (era,)
    summary: SnapshotSummary = {"outDir": str(out_dir), "layout": era, "eras": {}, "profiles": {}}
    manifest: dict[str, Any] = {
        "formatVersion": FORMAT_VERSION,
        "layout": era,
        "eras": {},
        "lists": {},
        "headerNames": sorted(target.headers or {}),
        "envNames": sorted(target.private_env),
        "profile": profile,
        "clientProfile": clients[0].record(),
        "clientProfiles": [client.record() for client in clients],
    }
    secrets = target.private_values()
    taken = await take_sessions(target, eras, timeout, clients, probe_versions)
    per_era = [
        _share_version_probes([taken[name, i] for i in range(len(clients))], clients, probe_versions) for name in eras
    ]
    for name, results in zip(eras, per_era, strict=True):
        for index, (client, raw) in enumerate(zip(clients, results, strict=True)):
            result = masked(raw, secrets)
            root = out_dir if index == 0 else out_dir / PROFILES_DIR / client.name
            era_dir = root / name if era == "both" else root
            write_era(era_dir, result)
            counts = {spec.name: len(result.lists.get(spec.name, [])) for spec in LISTS} if result.lists else {}
            version = result.server.get("protocolVersion")
            record: EraRecord = {"status": result.status, "counts": counts, "protocolVersion": version}
            summary["profiles"].setdefault(client.name, {})[name] = record
            if index == 0:
                summary["eras"][name] = record
                manifest["eras"][name] = result.status
                manifest["lists"][name] = result.stats
    remove_stale_layout(out_dir, era)
    for index, client in enumerate(clients):
        if index:
            remove_stale_layout(out_dir / PROFILES_DIR / client.name, era)
    remove_stale_profiles(out_dir, {client.name for client in clients[1:]})
    write_json(out_dir / MANIFEST_FILE, manifest)
    return summary


def distinct_profiles(names: Sequence[str]) -> list[ClientProfile]:
    if not names:
        raise ValueError("at least one client profile is needed")
    clients: list[ClientProfile] = []
    for name in names:
        client = client_profile(name)
        if any(c.name == client.name for c in clients):
            raise ValueError(f"client profile {client.name!r} is given twice")
        clients.append(client)
    return clients


def _share_version_probes(results: list[EraResult], clients: list[ClientProfile], probe: bool) -> list[EraResult]:
    """One era's results, every profile's; the first profile's legacy version probes are shared."""
    first = results[0]
    if first.era == "legacy" and probe and first.status == "ok":
        shared = {k: first.server[k] for k in _SHARED_VERSION_FIELDS if k in first.server}
        for result in results[1:]:
            if result.status == "ok" and result.server.get("protocolVersion") == first.server.get("protocolVersion"):
                result.server.update(shared, versionProbesFrom=clients[0].name)
    return results


def take_snapshot_sync(
    target: SnapshotTarget,
    out_dir: Path,
    era: str = "both",
    timeout: float = 60.0,
    profile: str | None = None,
    client_profile_name: str | Sequence[str] = DEFAULT_CLIENT_PROFILES,
    probe_versions: bool = True,
) -> SnapshotSummary:
    return asyncio.run(take_snapshot(target, out_dir, era, timeout, profile, client_profile_name, probe_versions))
