"""The shared wheel cache: only registry files whose hash is the registry's, read-only to every room.

A loopback index (PEP 691 JSON pages and files, `bench/fakes/registry_server.py`) lists small wheels
made here; one is listed with a hash that is not its own. The builds install with uv offline, so the
only places a room can take a wheel from are a local find-links folder (a mirror on the machine, as
the first build has) and the shared cache (which is all the second build has).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.fakes.registry_server import FakeRegistry, serve_registry
from tests.helpers import skip_unless_ci
from watcher.boundary import sandbox
from watcher.suites.build import wheels
from watcher.suites.build.env import EnvResult, prepare_env

SDK, SDK_VERSION = "tinysdk", "2.3.0"


def make_wheel(folder: Path, name: str, version: str, tag: str = "py3-none-any") -> Path:
    """A real, installable pure-Python wheel (RECORD with hashes, as installers check)."""
    folder.mkdir(parents=True, exist_ok=True)
    info = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": f"VERSION = {version!r}\n".encode(),
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: {tag}\n".encode(),
    }
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    files[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    wheel = folder / f"{name}-{version}-{tag}.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return wheel


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def publish(root: Path, name: str, listed: list[tuple[Path, dict[str, object]]]) -> None:
    """The index's PEP 691 page of `name` listing each file (with the given extra fields) under /files/."""
    entries = []
    for path, extra in listed:
        (root / "files").mkdir(parents=True, exist_ok=True)
        (root / "files" / path.name).write_bytes(path.read_bytes())
        entry: dict[str, object] = {
            "filename": path.name,
            "url": "{{BASE}}/files/" + path.name,
            "hashes": {"sha256": _sha256(path)},
        }
        entries.append({**entry, **extra})
    page = {"meta": {"api-version": "1.1"}, "name": name, "files": entries}
    (root / "simple" / name).mkdir(parents=True, exist_ok=True)
    (root / "simple" / name / "index.json").write_text(json.dumps(page), encoding="utf-8")


@pytest.fixture
def index(tmp_path: Path) -> Iterator[tuple[FakeRegistry, Path]]:
    """The loopback index and the folder of the wheels it lists (as a local mirror would hold them)."""
    root, made = tmp_path / "index", tmp_path / "made"
    tinydep = make_wheel(made, "tinydep", "1.0")
    other_platform = make_wheel(made, "tinydep", "1.0", tag="cp399-cp399-manylinux_2_17_x86_64")
    publish(root, "tinydep", [(tinydep, {}), (other_platform, {})])
    publish(root, SDK, [(make_wheel(made, SDK, SDK_VERSION), {})])
    tampered = make_wheel(made, "tampered", "1.0")
    publish(root, "tampered", [(tampered, {"hashes": {"sha256": "0" * 64}})])
    sdist = made / "sdistonly-1.0.tar.gz"
    sdist.write_bytes(b"not a wheel")
    publish(root, "sdistonly", [(sdist, {})])
    publish(root, "yanked", [(make_wheel(made, "yanked", "1.0"), {"yanked": "broken"})])
    other_platform.unlink()  # the mirror holds what this machine installs
    with serve_registry(root) as registry:
        yield registry, made


def test_only_files_with_the_registrys_hash_are_cached(tmp_path: Path, index: tuple[FakeRegistry, Path]):
    registry, made = index
    shared = wheels.SharedWheels(tmp_path / "envs" / wheels.FOLDER, registry.url("simple"))
    wanted = [("tinydep", "1.0"), ("tampered", "1.0"), ("sdistonly", "1.0"), ("yanked", "1.0"), ("unlisted", "1.0")]
    got = wheels.harvest(shared, wanted)
    # One wheel of tinydep: the one this interpreter installs, not the other platform's.
    assert got.added == ["tinydep-1.0-py3-none-any.whl"]
    assert sorted(p.name for p in shared.folder.iterdir()) == ["tinydep-1.0-py3-none-any.whl"]
    cached = shared.folder / "tinydep-1.0-py3-none-any.whl"
    assert cached.read_bytes() == (made / cached.name).read_bytes()
    assert stat.S_IMODE(cached.stat().st_mode) == 0o444
    assert [e.split(":")[0] for e in got.errors] == ["tampered==1.0"] and "not the registry's" in got.errors[0]
    assert sorted(got.without_wheel) == ["sdistonly==1.0", "unlisted==1.0", "yanked==1.0"]

    registry.reset_stats()
    again = wheels.harvest(shared, [("tinydep", "1.0")])
    assert again.cached == 1 and again.added == [] and registry.stats.requests == 0


def test_a_link_in_place_of_the_cache_folder_is_refused(tmp_path: Path, index: tuple[FakeRegistry, Path]):
    registry, _ = index
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "envs").mkdir()
    (tmp_path / "envs" / wheels.FOLDER).symlink_to(elsewhere)
    shared = wheels.SharedWheels(tmp_path / "envs" / wheels.FOLDER, registry.url("simple"))
    got = wheels.harvest(shared, [("tinydep", "1.0")])
    assert got.added == [] and "is a link" in got.errors[0]
    assert list(elsewhere.iterdir()) == []


BACKEND = '''
"""An in-tree PEP 517 backend: the server's own build code, which runs inside the install room."""
import base64, hashlib, json, os, zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = {cache!r}
TARGET = os.path.join(CACHE, "tinydep-1.0-py3-none-any.whl")


def _attack():
    tries = {{
        "new_file": lambda: open(os.path.join(CACHE, "planted-1.0-py3-none-any.whl"), "wb").write(b"x"),
        "append": lambda: open(TARGET, "ab").write(b"planted"),
        "chmod": lambda: os.chmod(TARGET, 0o666),
        "rename": lambda: os.rename(TARGET, TARGET + ".moved"),
        "unlink": lambda: os.unlink(TARGET),
    }}
    report = {{}}
    for key, attempt in tries.items():
        try:
            attempt()
            report[key] = "DONE"
        except OSError as exc:
            report[key] = "STOPPED: " + str(exc)
    # Whatever the room's user may write, the cache must be mounted read-only in the room.
    try:
        read_only = os.statvfs(CACHE).f_flag & os.ST_RDONLY
        report["mount"] = "STOPPED: read-only" if read_only else "DONE: writable mount"
    except OSError as exc:
        report["mount"] = "STOPPED: " + str(exc)
    (HERE / "attack.json").write_text(json.dumps(report))


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _attack()
    info = "teamproj-1.0.dist-info"
    files = {{
        "teamproj/__init__.py": b"",
        info + "/METADATA": b"Metadata-Version: 2.1\\nName: teamproj\\nVersion: 1.0\\nRequires-Dist: tinydep==1.0\\n"
        + b"Requires-Dist: {sdk}\\n",
        info + "/WHEEL": b"Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
    }}
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(path + ",sha256=" + digest + "," + str(len(data)))
    files[info + "/RECORD"] = ("\\n".join(record + [info + "/RECORD,,"]) + "\\n").encode()
    name = "teamproj-1.0-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return name
'''


def team_project(folder: Path, cache: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n', encoding="utf-8"
    )
    (folder / "backend.py").write_text(BACKEND.format(cache=str(cache), sdk=SDK), encoding="utf-8")
    return folder


def build(
    tmp_path: Path, name: str, project: Path, boundary: sandbox.Sandbox, shared: wheels.SharedWheels | None
) -> EnvResult:
    return prepare_env(
        server_name=name,
        language="python",
        project=project,
        sdk_package=SDK,
        sdk_version=SDK_VERSION,
        envs_dir=tmp_path / "envs",
        timeout=120,
        secret_names=set(),
        boundary=boundary,
        shared_wheels=shared,
    )


@pytest.mark.slow
def test_a_later_build_installs_from_the_cache_and_its_room_cannot_write_into_it(
    tmp_path: Path, index: tuple[FakeRegistry, Path], monkeypatch: pytest.MonkeyPatch
):
    boundary = sandbox.choose("bubblewrap")
    if not boundary.active:
        skip_unless_ci(f"the run boundary cannot be had here: {boundary.reason}")
    registry, mirror = index
    shared = wheels.SharedWheels(tmp_path / "envs" / wheels.FOLDER, registry.url("simple"))
    monkeypatch.setenv("UV_OFFLINE", "1")  # no registry in reach: every wheel comes from a folder
    monkeypatch.setenv("UV_FIND_LINKS", str(mirror))

    # The first team's build takes its wheels from the machine's mirror; the watcher then caches them.
    first = build(tmp_path, "first", team_project(tmp_path / "first", shared.folder), boundary, shared)
    assert first.ok, (first.error, first.evidence)
    names = sorted(p.name for p in shared.folder.iterdir())
    assert names == sorted([f"{SDK}-{SDK_VERSION}-py3-none-any.whl", "tinydep-1.0-py3-none-any.whl"])
    cached = {name: _sha256(shared.folder / name) for name in names}

    # Without the mirror, only the shared cache has the wheels: with it off, the build cannot install.
    monkeypatch.delenv("UV_FIND_LINKS")
    without = build(tmp_path, "without", team_project(tmp_path / "without", shared.folder), boundary, None)
    assert not without.ok and "network was disabled" in without.evidence, (without.error, without.evidence)

    second = build(tmp_path, "second", team_project(tmp_path / "second", shared.folder), boundary, shared)
    assert second.ok, (second.error, second.evidence)
    site = wheels.venv_site_packages(Path(second.path) / "venv")
    assert ("tinydep", "1.0") in wheels.installed(site)

    # Both builds' own code ran in their rooms and tried to change the cache: every attempt was stopped.
    for env in (first, second):
        attack = json.loads((Path(env.project_dir) / "attack.json").read_text(encoding="utf-8"))
        assert set(attack) == {"new_file", "append", "chmod", "rename", "unlink", "mount"}
        assert all(outcome.startswith("STOPPED") for outcome in attack.values()), attack
    assert {name: _sha256(shared.folder / name) for name in sorted(p.name for p in shared.folder.iterdir())} == cached
    for name in cached:
        info = (shared.folder / name).stat()
        assert stat.S_IMODE(info.st_mode) == 0o444 and info.st_uid == os.geteuid()
