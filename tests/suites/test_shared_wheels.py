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
from watcher.suites.build import resolve, wheels
from watcher.suites.build.env import EnvResult, prepare_env

SDK, SDK_VERSION = "tinysdk", "2.3.0"
BAITS = [f"bait{i:02d}" for i in range(40)]
"""What a hostile build names in its room: forty genuine packages of the index that nothing installed."""


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
    """The index's PEP 691 page of `name` listing each file (with the given extra fields) under /files/; a
    wheel's METADATA is served beside it (PEP 658), as the real index does, for resolvers to read."""
    entries = []
    for path, extra in listed:
        (root / "files").mkdir(parents=True, exist_ok=True)
        (root / "files" / path.name).write_bytes(path.read_bytes())
        entry: dict[str, object] = {
            "filename": path.name,
            "url": "{{BASE}}/files/" + path.name,
            "hashes": {"sha256": _sha256(path)},
        }
        if path.suffix == ".whl":
            with zipfile.ZipFile(path) as archive:
                metadata = next(archive.read(n) for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
            (root / "files" / f"{path.name}.metadata").write_bytes(metadata)
            entry["core-metadata"] = {"sha256": hashlib.sha256(metadata).hexdigest()}
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
    for bait in BAITS:  # genuine files of the index that no build of ours installs
        publish(root, bait, [(make_wheel(made, bait, "1.0"), {})])
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


def test_only_names_resolved_outside_the_room_are_harvested(tmp_path: Path, index: tuple[FakeRegistry, Path]):
    registry, _ = index
    shared = wheels.SharedWheels(tmp_path / "envs" / wheels.FOLDER, registry.url("simple"))
    project = team_project(tmp_path / "team", shared.folder)
    baits = [(bait, "1.0") for bait in BAITS]
    # The bait is real: handed to the harvest as they are, these names fetch and keep forty genuine files.
    control = wheels.SharedWheels(tmp_path / "control" / wheels.FOLDER, registry.url("simple"))
    assert len(wheels.harvest(control, baits).added) == len(BAITS)

    installed = [("tinydep", "1.0"), (SDK, SDK_VERSION), *baits]  # what the room's dist-info names say
    got = wheels.harvest_build(shared, project, SDK, SDK_VERSION, installed)
    assert sorted(got.added) == ["tinydep-1.0-py3-none-any.whl", f"{SDK}-{SDK_VERSION}-py3-none-any.whl"]
    assert got.unresolved == [f"{bait}==1.0" for bait in BAITS]
    assert sorted(p.name for p in shared.folder.iterdir()) == sorted(got.added)


def test_a_requirement_set_not_resolvable_from_wheels_gives_nothing(tmp_path: Path, index: tuple[FakeRegistry, Path]):
    registry, _ = index
    shared = wheels.SharedWheels(tmp_path / "envs" / wheels.FOLDER, registry.url("simple"))
    project = tmp_path / "team"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "t"\nversion = "1"\ndependencies = ["tinydep==1.0", "sdistonly==1.0"]\n'
    )
    got = wheels.harvest_build(shared, project, SDK, SDK_VERSION, [("tinydep", "1.0"), ("sdistonly", "1.0")])
    # sdistonly has no wheel: resolving it would need its build backend, which never runs on the host.
    assert got.added == [] and got.unresolved == ["sdistonly==1.0", "tinydep==1.0"]


def test_dynamic_or_direct_requirements_are_not_resolved(tmp_path: Path, index: tuple[FakeRegistry, Path]):
    registry, _ = index
    project = tmp_path / "team"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "t"\nversion = "1"\ndynamic = ["dependencies"]\ndependencies = ["tinydep==1.0"]\n'
        '[build-system]\nrequires = ["evil @ https://evil.example/evil.whl", 7]\n'
    )
    assert resolve.static_requirements(project) == ([], [])
    got = wheels.harvest_build(
        wheels.SharedWheels(tmp_path / "envs" / wheels.FOLDER, registry.url("simple")),
        project,
        SDK,
        SDK_VERSION,
        [("tinydep", "1.0"), (SDK, SDK_VERSION)],
    )
    assert got.added == [f"{SDK}-{SDK_VERSION}-py3-none-any.whl"] and got.unresolved == ["tinydep==1.0"]


def _cached(folder: Path, name: str, size: int, added: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-1.0-py3-none-any.whl"
    path.write_bytes(b"w" * size)
    os.utime(path, (added, added))  # when it was added: set, not read off the wall clock
    return path


def test_the_cache_keeps_within_its_total_size_oldest_first(tmp_path: Path):
    folder = tmp_path / "envs" / wheels.FOLDER
    for number, name in enumerate(["old", "older", "oldest", "newest", "middle"]):
        added = {"oldest": 1_000, "older": 2_000, "old": 3_000, "middle": 4_000, "newest": 5_000}[name]
        _cached(folder, name, 1000 + number, added)
    shared = wheels.SharedWheels(folder, "http://127.0.0.1:9/simple", max_bytes=3 * 1010)
    assert shared.size() == 5010
    assert shared.evict() == ["oldest-1.0-py3-none-any.whl", "older-1.0-py3-none-any.whl"]
    assert sorted(p.name.split("-")[0] for p in folder.iterdir()) == ["middle", "newest", "old"]
    assert shared.size() <= shared.max_bytes
    assert shared.evict() == []  # within its size: nothing more goes


def test_a_harvest_past_the_cap_evicts_the_oldest_and_keeps_what_it_added(
    tmp_path: Path, index: tuple[FakeRegistry, Path]
):
    registry, made = index
    folder = tmp_path / "envs" / wheels.FOLDER
    fresh = (made / "tinydep-1.0-py3-none-any.whl").stat().st_size
    _cached(folder, "stale", 600, 1_000)
    _cached(folder, "recent", 600, 2_000)
    shared = wheels.SharedWheels(folder, registry.url("simple"), max_bytes=600 + fresh)
    got = wheels.harvest(shared, [("tinydep", "1.0")])
    assert got.added == ["tinydep-1.0-py3-none-any.whl"]
    assert got.evicted == ["stale-1.0-py3-none-any.whl"]
    assert sorted(p.name for p in folder.iterdir()) == ["recent-1.0-py3-none-any.whl", "tinydep-1.0-py3-none-any.whl"]
    tiny = wheels.SharedWheels(tmp_path / "tiny" / wheels.FOLDER, registry.url("simple"), max_bytes=10)
    too_big = wheels.harvest(tiny, [("tinydep", "1.0")])
    assert too_big.added == [] and "larger than 10 bytes" in too_big.errors[0]
    assert list(tiny.folder.iterdir()) == []  # not even a partial download is left


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
PLANT = {plant!r}


def _plant():
    """Leave made-up `*.dist-info` folders in the environment's site-packages: names the build never
    installed, which an unguarded harvest would fetch from the index and keep."""
    planted = []
    for site in sorted((HERE.parent / "venv" / "lib").glob("python*/site-packages")):
        for name in PLANT:
            info = site / (name + "-1.0.dist-info")
            info.mkdir()
            (info / "METADATA").write_text("Metadata-Version: 2.1\\nName: " + name + "\\nVersion: 1.0\\n")
            planted.append(str(info))
    (HERE / "planted.json").write_text(json.dumps(planted))


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
    if PLANT:
        _plant()
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


def team_project(folder: Path, cache: Path, plant: list[str] | None = None) -> Path:
    """The team's project: its build backend (run in the room) tries the cache and may plant names; its
    dependencies are written in pyproject.toml, where the watcher resolves them outside the room."""
    folder.mkdir(parents=True)
    (folder / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n\n'
        f'[project]\nname = "teamproj"\nversion = "1.0"\ndependencies = ["tinydep==1.0", "{SDK}"]\n',
        encoding="utf-8",
    )
    backend = BACKEND.format(cache=str(cache), sdk=SDK, plant=plant or [])
    (folder / "backend.py").write_text(backend, encoding="utf-8")
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


def offline_rooms(
    tmp_path: Path, index: tuple[FakeRegistry, Path], monkeypatch: pytest.MonkeyPatch
) -> tuple[sandbox.Sandbox, wheels.SharedWheels]:
    """The run boundary (or a skip saying why not) and the shared cache; builds install with uv offline,
    their wheels from the machine's mirror (`UV_FIND_LINKS`) or the cache."""
    boundary = sandbox.choose("bubblewrap")
    if not boundary.active:
        skip_unless_ci(f"the run boundary cannot be had here: {boundary.reason}")
    registry, mirror = index
    monkeypatch.setenv("UV_OFFLINE", "1")  # no registry in reach: every wheel comes from a folder
    monkeypatch.setenv("UV_FIND_LINKS", str(mirror))
    return boundary, wheels.SharedWheels(tmp_path / "envs" / wheels.FOLDER, registry.url("simple"))


@pytest.mark.slow
def test_a_later_build_installs_from_the_cache_and_its_room_cannot_write_into_it(
    tmp_path: Path, index: tuple[FakeRegistry, Path], monkeypatch: pytest.MonkeyPatch
):
    boundary, shared = offline_rooms(tmp_path, index, monkeypatch)

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


@pytest.mark.slow
def test_a_build_that_leaves_made_up_dist_info_names_gets_nothing_harvested_for_them(
    tmp_path: Path, index: tuple[FakeRegistry, Path], monkeypatch: pytest.MonkeyPatch
):
    boundary, shared = offline_rooms(tmp_path, index, monkeypatch)
    registry, _ = index
    project = team_project(tmp_path / "planter", shared.folder, plant=BAITS)
    env = build(tmp_path, "planter", project, boundary, shared)
    assert env.ok, (env.error, env.evidence)

    # The mark: the team's backend ran in its room and left the forty names where the harvest reads.
    planted = json.loads((Path(env.project_dir) / "planted.json").read_text(encoding="utf-8"))
    assert len(planted) == len(BAITS)
    found = wheels.installed(wheels.venv_site_packages(Path(env.path) / "venv"))
    assert {(bait, "1.0") for bait in BAITS} <= set(found)
    # What was harvested: only what the watcher's own resolution named and the build installed.
    assert sorted(p.name for p in shared.folder.iterdir()) == sorted(
        [f"{SDK}-{SDK_VERSION}-py3-none-any.whl", "tinydep-1.0-py3-none-any.whl"]
    )
    # Nothing of the index's bait was even asked for (the build itself installs offline, from the mirror).
    assert not [path for path in registry.stats.by_path if "bait" in path]
