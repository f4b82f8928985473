"""Writing a snapshot's files: one era's folder, secrets masked, and the files of an earlier snapshot
that this one replaces removed.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from watcher.contract.normalize import ERAS, ERRORS_FILE, LISTS, PROFILES_DIR, SERVER_FILE, SNAPSHOT_FILES, write_json
from watcher.contract.snapshot.outcome import EraResult
from watcher.core.secret_policy import mask_data


def masked(result: EraResult, secrets: tuple[str, ...]) -> EraResult:
    """The era's result with the target's credentials and anything shaped like a credential masked."""
    return EraResult(
        result.era,
        mask_data(result.status, secrets),
        mask_data(result.lists, secrets),
        mask_data(result.server, secrets),
        mask_data(result.errors, secrets),
        result.stats,
    )


def write_era(era_dir: Path, result: EraResult) -> None:
    era_dir.mkdir(parents=True, exist_ok=True)
    for stale in SNAPSHOT_FILES:
        (era_dir / stale).unlink(missing_ok=True)
    server = {"era": result.era, "status": result.status, **result.server}
    write_json(era_dir / SERVER_FILE, server)
    if result.status != "ok":
        return
    for spec in LISTS:
        write_json(era_dir / spec.file, result.lists[spec.name])
    write_json(era_dir / ERRORS_FILE, result.errors)


def remove_stale_layout(out_dir: Path, era: str) -> None:
    """Files of an earlier snapshot in the other layout would make the folder ambiguous to `diff`."""
    if era == "both":
        for stale in SNAPSHOT_FILES:
            (out_dir / stale).unlink(missing_ok=True)
        return
    for name in ERAS:
        era_dir = out_dir / name
        if era_dir.is_dir():
            for stale in SNAPSHOT_FILES:
                (era_dir / stale).unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                era_dir.rmdir()


def remove_stale_profiles(out_dir: Path, keep: set[str]) -> None:
    """Profile folders of an earlier snapshot that this one did not take: diff would read them as current."""
    folder = out_dir / PROFILES_DIR
    if not folder.is_dir():
        return
    for child in folder.iterdir():
        if child.is_dir() and child.name not in keep:
            for era_name in ERAS:
                remove_stale_layout(child, era_name)
            for stale in SNAPSHOT_FILES:
                (child / stale).unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                child.rmdir()
    with contextlib.suppress(OSError):
        folder.rmdir()
