"""`python -m watcher.boundary.relay PID PORT`: the watcher's way to an HTTP server that has no network.

The server under test runs in a room whose network namespace has only a loopback device. This process
binds a listening socket on the host's 127.0.0.1 first (at PORT, the number the server was given, when it
is free there); the socket stays in the host's namespace. Then it joins the room's network namespace
(`setns`; when we are not root, first the user namespace that owns it) and forwards each connection to 127.0.0.1:PORT
there. It prints its host port on stdout, and ends when its stdin closes (the watcher stopped the room or
died). The server can reach nothing through it: the relay only answers connections from the host side.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import socket
import sys
import threading

CLONE_NEWNET = 0x40000000
CLONE_NEWUSER = 0x10000000
NS_GET_USERNS = 0xB701
"""ioctl on a namespace file: an open descriptor of the user namespace that owns it (Linux 4.9)."""


def netns_owner(pid: int) -> int:
    """An open descriptor of the user namespace that owns the network namespace of `pid`. Unprivileged
    bwrap nests the room's process in a second user namespace below the one that owns its other
    namespaces, so `/proc/PID/ns/user` is not the one to join: joining it grants nothing over the network."""
    net = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
    try:
        return fcntl.ioctl(net, NS_GET_USERNS)
    finally:
        os.close(net)


def _setns(fd: int, kind: int, what: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    try:
        if libc.setns(fd, kind) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns {what}: {os.strerror(err)}")
    finally:
        os.close(fd)


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for sock, how in ((dst, socket.SHUT_WR), (src, socket.SHUT_RD)):
            with contextlib.suppress(OSError):
                sock.shutdown(how)


def _serve(client: socket.socket, port: int) -> None:
    try:
        upstream = socket.create_connection(("127.0.0.1", port), timeout=10)
    except OSError:
        client.close()
        return
    upstream.settimeout(None)
    for sock in (client, upstream):  # small request/answer exchanges: no Nagle delay on either leg
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _watch_stdin() -> None:
    sys.stdin.buffer.read()
    os._exit(0)


def main(argv: list[str]) -> int:
    pid, port = int(argv[0]), int(argv[1])
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # The server's own port number where it is free on the host: servers check the Host header
    # (DNS-rebinding protection) against the port they listen on.
    try:
        listener.bind(("127.0.0.1", port))
    except OSError:
        listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    if os.geteuid() != 0:
        _setns(netns_owner(pid), CLONE_NEWUSER, f"the owner of /proc/{pid}/ns/net")
    _setns(os.open(f"/proc/{pid}/ns/net", os.O_RDONLY), CLONE_NEWNET, f"/proc/{pid}/ns/net")
    print(listener.getsockname()[1], flush=True)
    threading.Thread(target=_watch_stdin, daemon=True).start()
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_serve, args=(client, port), daemon=True).start()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
