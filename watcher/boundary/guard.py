"""The install room's recorder of the ways out that bypass the proxy: a direct connection and a raw socket.

An install room has no route out, and no `CAP_NET_RAW`: the kernel already refuses a `connect()` to the metadata
address (`Network is unreachable`) and a raw socket (`Operation not permitted`). Those attempts never reach the
proxy, so the proxy cannot record them. This helper does, with a seccomp filter in user-notification mode
(libseccomp, through its ctypes binding `pyseccomp`):

- the watcher starts it in place of bwrap (`command`); it loads a filter on itself that notifies it of
  `socket()` for a raw (AF_INET/AF_INET6 SOCK_RAW) or packet (AF_PACKET) socket, of every `connect()` and of
  every `sendto()` that names an address, then starts bwrap, which and whose room inherit the filter (a filter
  can never be removed, by anything in the room);
- the listener stays with the helper, on the host, outside the room's namespaces (the kernel makes it
  close-on-exec: nothing in the room holds it). For each notification it reads the address from the calling
  process's memory, and answers: a raw or packet socket is refused `EPERM`; a connection or a datagram to an
  address off the room's own loopback (`egress.direct_connect`) is refused `ENETUNREACH`, before the kernel
  is asked, so nothing is ever sent; anything else (the room's loopback: the proxy's port, a local service of
  the build; a Unix socket) goes on to the kernel unchanged;
- each refusal is written as one JSON line to the watcher (`--report FD`), which records it with the room's
  server and step (`sandbox.Room`), beside the proxy's.

What it does not see: an address the caller changes between the helper's read and the kernel's (only a
connection that goes on is affected, and the kernel still has no route for it); `sendmsg()` with an address
(it would have to stop every write of the room); `io_uring` (denied in the room: `ENOSYS`, as on a kernel
without it). A 32-bit or x32 system call ends the calling process (the filter is for the native ABI).

Run as `python -I guard.py --path DIRS --report FD -- bwrap ...` (`-I`: the room's environment, which the helper
passes on to bwrap, cannot reach its interpreter); it exits with bwrap's status. When no filter can be loaded
(`problem()`: no libseccomp, no user notification in this kernel) the room runs without the recorder, as before,
and the sandbox says so.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import ipaddress
import json
import os
import signal
import socket
import struct
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).resolve()
PROBE_SECONDS = 15.0
REPORT_CAP = 256
"""At most this many attempts are reported per room (the rest are refused all the same, and counted)."""


# --- the watcher's side ------------------------------------------------------------------------------


@functools.cache
def problem() -> str | None:
    """Why rooms get no recorder here (None: they do): the helper, asked to load its filter and end, says
    whether it could (no libseccomp, a kernel or a container that refuses user notification)."""
    from watcher.boundary.launch import HostReason, ToolTimeout, run_tool

    try:
        done = run_tool([*_interpreter(), "--probe"], why=HostReason.HELPER, env={}, timeout=PROBE_SECONDS)
    except (OSError, ToolTimeout) as exc:
        return f"the recorder could not be started: {exc}"
    if done.returncode == 0:
        return None
    said = (done.stderr or done.stdout).strip().splitlines()
    return said[-1] if said else f"the recorder's probe ended with code {done.returncode}"


def _interpreter() -> list[str]:
    paths = os.pathsep.join(p for p in sys.path if p and os.path.isabs(p) and os.path.isdir(p))
    return [sys.executable, "-I", str(SCRIPT), "--path", paths]


def command(argv: Sequence[str], report_fd: int) -> list[str]:
    """`argv` (bwrap's) started by the helper, which reports each refused attempt on `report_fd`."""
    return [*_interpreter(), "--report", str(report_fd), "--", *argv]


def read_reports(fd: int, record: Callable[[dict[str, object]], None]) -> threading.Thread:
    """A thread reading the helper's JSON lines from `fd` (closed at its end), handing each to `record`."""

    def read() -> None:
        with os.fdopen(fd, "rb") as stream:
            for line in stream:
                with contextlib.suppress(ValueError):
                    item = json.loads(line)
                    if isinstance(item, dict):
                        record(item)

    thread = threading.Thread(target=read, name="room-recorder", daemon=True)
    thread.start()
    return thread


# --- the helper ----------------------------------------------------------------------------------------

SOCK_TYPE_MASK = 0xF
USER_NOTIF_FLAG_CONTINUE = 1
"""SECCOMP_USER_NOTIF_FLAG_CONTINUE (linux/seccomp.h): let the system call go on to the kernel."""
WATCHED = ("socket", "connect", "sendto")


def _filter() -> Any:
    """The filter (a `pyseccomp.SyscallFilter`), loaded on the calling process and so on every process it
    starts from then on."""
    import pyseccomp as sc

    rules = sc.SyscallFilter(sc.ALLOW)
    for family in (socket.AF_INET, socket.AF_INET6):
        raw = sc.Arg(1, sc.MASKED_EQ, SOCK_TYPE_MASK, socket.SOCK_RAW)
        rules.add_rule(sc.NOTIFY, "socket", sc.Arg(0, sc.EQ, family), raw)
    rules.add_rule(sc.NOTIFY, "socket", sc.Arg(0, sc.EQ, socket.AF_PACKET))
    rules.add_rule(sc.NOTIFY, "connect")
    rules.add_rule(sc.NOTIFY, "sendto", sc.Arg(4, sc.NE, 0))
    for name in ("io_uring_setup", "io_uring_enter", "io_uring_register"):
        rules.add_rule(sc.ERRNO(errno.ENOSYS), name)
    rules.load()
    return rules


def sockaddr(raw: bytes) -> tuple[str, int] | None:
    """The (address, port) of an AF_INET or AF_INET6 `struct sockaddr`; None for another family (a Unix socket)."""
    if len(raw) < 2:
        return None
    family = struct.unpack_from("=H", raw)[0]
    if family == socket.AF_INET and len(raw) >= 8:
        return str(ipaddress.IPv4Address(raw[4:8])), struct.unpack_from("!H", raw, 2)[0]
    if family == socket.AF_INET6 and len(raw) >= 24:
        return str(ipaddress.IPv6Address(raw[8:24])), struct.unpack_from("!H", raw, 2)[0]
    return None


def _read(pid: int, pointer: int, length: int) -> bytes:
    """`length` bytes (at most 128: a sockaddr) at `pointer` in the memory of process `pid` (blocked in its call)."""
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as memory:
        memory.seek(pointer)
        return memory.read(max(0, min(length, 128)))


def _family_name(family: int) -> str:
    with contextlib.suppress(ValueError):
        return socket.AddressFamily(family).name
    return str(family)


Attempt = tuple[int, "dict[str, object] | None"]
"""The errno a notified call is answered with (0: it goes on to the kernel), and what is reported of it."""


def judge(call: str, args: Sequence[int], read: Callable[[int, int], bytes], egress: Any) -> Attempt:
    """(the errno to answer, 0 to let the call go on; the attempt to report, or None) for one notified call:
    `args` its arguments, `read(pointer, length)` reads its memory, `egress` the module with the rules."""
    if call == "socket":
        family, kind, protocol = args[0], args[1] & SOCK_TYPE_MASK, args[2]
        if not egress.raw_socket(family, kind):
            return 0, None
        shown = f"{_family_name(family)} {'SOCK_RAW' if kind == socket.SOCK_RAW else f'type {kind}'}"
        where = f"{shown}, protocol {protocol}"
        return errno.EPERM, {"kind": "raw", "rule": "raw_socket", "host": "raw socket", "port": 0, "address": where}
    if call in ("connect", "sendto"):
        pointer, length = (args[1], args[2]) if call == "connect" else (args[4], args[5])
        target = sockaddr(read(pointer, length))
        if target is None or not egress.direct_connect(target[0]):
            return 0, None
        address, port = target
        attempt: dict[str, object] = {"kind": "direct", "rule": "direct_connect", "host": address, "port": port}
        return errno.ENETUNREACH, {**attempt, "address": address}
    return 0, None


def _serve(rules: Any, report: int, room: int, egress: Any) -> None:
    """Answer every notification; report each refusal. An answer that cannot be given ends the room (a call
    left unanswered would hang it): never a way out."""
    import pyseccomp as sc

    names = {sc.resolve_syscall(sc.system_arch(), name): name for name in WATCHED}
    reported = dropped = 0
    with os.fdopen(report, "w", buffering=1, encoding="utf-8") as out:
        while True:
            try:
                notice = rules.receive_notify()
            except OSError:
                continue  # the caller died before it was read (ENOENT), or a signal: nothing to answer
            try:
                read = functools.partial(_read, notice.pid)
                error, attempt = judge(names.get(notice.syscall, ""), notice.syscall_args, read, egress)
            except OSError:  # its memory could not be read (it died): the kernel answers, as without us
                error, attempt = 0, None
            flags = 0 if error else USER_NOTIF_FLAG_CONTINUE
            try:
                rules.respond_notify(sc.NotificationResponse(-error, flags, notice.id, 0))
            except OSError as exc:
                if exc.errno != errno.ENOENT:  # (ENOENT: the caller is gone)
                    with contextlib.suppress(OSError):
                        os.kill(room, signal.SIGKILL)
                    return
            if attempt is None:
                continue
            if reported < REPORT_CAP:
                reported += 1
                out.write(json.dumps(attempt) + "\n")
            else:
                dropped += 1
                if dropped % 100 == 1:
                    out.write(json.dumps({"dropped": dropped}) + "\n")


def main(argv: list[str]) -> int:
    """The helper: load the filter, start bwrap under it, answer its notifications until bwrap ends (`--probe`:
    only load the filter, and say why when it cannot be)."""
    own = argv[: argv.index("--")] if "--" in argv else argv  # (the room's argv, after "--", is not read)
    sys.path[:0] = [p for p in own[own.index("--path") + 1].split(os.pathsep) if p]
    if "--probe" in own:
        try:
            _filter()
        except Exception as exc:
            print(f"no seccomp user notification here: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1
        return 0
    from watcher.boundary import egress  # before the filter: nothing is loaded from files once it answers

    report = int(own[own.index("--report") + 1])
    room_argv = argv[argv.index("--") + 1 :]
    os.set_inheritable(report, False)  # never into the room
    try:
        rules = _filter()
    except Exception as exc:  # no recorder: the room as before (the sandbox said so when it chose)
        with contextlib.suppress(OSError), os.fdopen(report, "w", encoding="utf-8") as out:
            out.write(json.dumps({"unrecorded": f"{type(exc).__name__}: {exc}"}) + "\n")
        os.execvp(room_argv[0], room_argv)
    room = os.fork()
    if room == 0:
        try:
            os.execvp(room_argv[0], room_argv)
        finally:
            os._exit(127)
    threading.Thread(target=_serve, args=(rules, report, room, egress), daemon=True).start()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda number, _frame: os.kill(room, number))
    _, status = os.waitpid(room, 0)
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
