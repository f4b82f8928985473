"""The install room's recorder (watcher/boundary/guard.py): how it judges each call it is told of, and a room that
has it. The room's code first writes a mark (read back), then connects straight to the metadata address and opens
a raw socket: both refused before the kernel is asked (no packet can leave: the room has no route either) and
recorded with the room's server and step; a connection to the room's own loopback goes on to the kernel; and the
room holds neither the recorder's listener nor its report pipe. tests/boundary/test_install_egress.py has the
same through real pip, as root and as uid 65534."""

from __future__ import annotations

import errno
import ipaddress
import socket
import struct
from pathlib import Path

import pytest

from watcher.boundary import egress, guard, sandbox


def v4(address: str, port: int) -> bytes:
    head = struct.pack("=H", socket.AF_INET) + struct.pack("!H", port)
    return head + ipaddress.IPv4Address(address).packed + bytes(8)


def v6(address: str, port: int) -> bytes:
    head = struct.pack("=H", socket.AF_INET6) + struct.pack("!H", port) + bytes(4)
    return head + ipaddress.IPv6Address(address).packed + bytes(4)


def reader(raw: bytes):  # type: ignore[no-untyped-def]
    return lambda pointer, length: raw[:length]


def test_a_sockaddr_is_read_as_the_kernel_lays_it_out() -> None:
    assert guard.sockaddr(v4("169.254.169.254", 80)) == ("169.254.169.254", 80)
    assert guard.sockaddr(v6("fd00::1", 443)) == ("fd00::1", 443)
    assert guard.sockaddr(struct.pack("=H", socket.AF_UNIX) + b"/run/x\0") is None
    assert guard.sockaddr(b"\x02") is None


def test_a_direct_connection_off_the_rooms_loopback_is_refused_and_one_to_it_goes_on() -> None:
    args = [3, 0x1000, 16, 0, 0, 0]
    error, attempt = guard.judge("connect", args, reader(v4("169.254.169.254", 80)), egress)
    assert error == errno.ENETUNREACH and attempt is not None
    assert (attempt["kind"], attempt["rule"], attempt["host"], attempt["port"]) == (
        "direct",
        "direct_connect",
        "169.254.169.254",
        80,
    )
    assert guard.judge("connect", args, reader(v4("127.0.0.1", 3128)), egress) == (0, None)  # the proxy's port
    assert guard.judge("connect", args, reader(struct.pack("=H", socket.AF_UNIX) + b"/x\0"), egress) == (0, None)
    sendto = [3, 0x2000, 1, 0, 0x1000, 28]  # a datagram that names its address (the fifth argument)
    error, attempt = guard.judge("sendto", sendto, reader(v6("fd00::53", 53)), egress)
    assert error == errno.ENETUNREACH and attempt is not None and attempt["host"] == "fd00::53"


def test_a_raw_or_packet_socket_is_refused_as_without_cap_net_raw() -> None:
    nothing = reader(b"")
    raw = [socket.AF_INET, socket.SOCK_RAW | socket.SOCK_CLOEXEC, socket.IPPROTO_ICMP, 0, 0, 0]
    error, attempt = guard.judge("socket", raw, nothing, egress)
    assert error == errno.EPERM and attempt is not None
    assert (attempt["kind"], attempt["rule"]) == ("raw", "raw_socket")
    assert attempt["address"] == "AF_INET SOCK_RAW, protocol 1"
    error, attempt = guard.judge("socket", [socket.AF_PACKET, socket.SOCK_DGRAM, 0, 0, 0, 0], nothing, egress)
    assert error == errno.EPERM and attempt is not None and attempt["address"].startswith("AF_PACKET")
    assert guard.judge("socket", [socket.AF_INET, socket.SOCK_STREAM, 0, 0, 0, 0], nothing, egress) == (0, None)


ATTEMPTS = """
import json, os, socket
open("mark.txt", "w").write("the room's code ran")
fds = []
for fd in os.listdir("/proc/self/fd"):
    try:
        fds.append(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        pass  # (the listing's own)
seen = {"fds": sorted(fds)}
for name, attempt in (
    ("direct", lambda: socket.create_connection(("169.254.169.254", 80), timeout=3)),
    ("raw", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)),
    ("loopback", lambda: socket.create_connection(("127.0.0.1", 9), timeout=3)),
):
    try:
        attempt()
        seen[name] = "DONE"
    except OSError as exc:
        seen[name] = f"STOPPED: {exc.strerror}"
open("seen.json", "w").write(json.dumps(seen))
"""


def test_an_install_room_records_its_direct_connection_and_raw_socket_and_holds_no_listener(tmp_path: Path) -> None:
    box = sandbox.choose("bubblewrap")
    if not box.active:
        pytest.skip(f"the run boundary cannot be had here: {box.reason}")
    if not box.recorder():
        pytest.skip(f"no recorder here: {guard.problem()}")
    import json

    box.hand_over(tmp_path)
    room = box.room(readable=[], writable=[tmp_path], network="registry", audit_as=("hostile", "prepare step 1"))
    proc = room.start(["/usr/bin/python3", "-c", ATTEMPTS], cwd=str(tmp_path), env={"PATH": "/usr/bin:/bin"})
    assert proc.wait(timeout=60) == 0
    room.close()
    assert (tmp_path / "mark.txt").read_text() == "the room's code ran"  # the hostile code ran, in the room
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert seen["direct"] == "STOPPED: Network is unreachable" and seen["raw"] == "STOPPED: Operation not permitted"
    assert seen["loopback"] == "STOPPED: Connection refused"  # the room's own loopback: on to the kernel
    assert not [fd for fd in seen["fds"] if "seccomp" in fd or fd.startswith("pipe:")], seen["fds"]
    recorded = [(r.kind, r.rule, r.host, r.port, r.server, r.step, r.let_through) for r in room.refusals()]
    assert recorded == [
        ("direct", "direct_connect", "169.254.169.254", 80, "hostile", "prepare step 1", False),
        ("raw", "raw_socket", "raw socket", 0, "hostile", "prepare step 1", False),
    ], recorded
