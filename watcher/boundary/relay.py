"""`python -m watcher.boundary.relay --listen WHERE --connect WHERE --port P [--to-port Q]`: one TCP port
forwarded between network namespaces (the host's, or a room's, named by a process in it).

A socket keeps the network namespace it was made in, whatever its process joins later. So the relay makes its
listening socket where connections come from and its connecting sockets where they go:

- `--listen host`: bind 127.0.0.1:P on the host (P itself where it is free there: servers check the Host header
  against the port they listen on), else any free port. `--listen PID`: a forked child joins that process's
  network namespace (the user namespace owning it first, when that is not ours: bwrap makes one when we are
  not root), binds
  127.0.0.1:P there and hands the socket back over a Unix socket pair; the child exits.
- `--connect host`: each connection goes to the host's 127.0.0.1:Q. `--connect PID`: the relay joins that
  namespace (as above) before making any connecting socket, and each goes to 127.0.0.1:Q there.

It prints the port it listens on when both sides are ready, and ends when its stdin closes (the watcher
stopped the room or died). It only answers connections on its listening side: what listens cannot reach
anything but Q. Uses: the watcher to a server in its room (listen host, connect the server's room), the
conformance suite's room to the server under test (listen the suite's room, connect the server's), an install
room to a registry on the host's loopback (listen the install's room, connect host).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import errno
import fcntl
import os
import socket
import sys
import threading
import time

CLONE_NEWNET = 0x40000000
CLONE_NEWUSER = 0x10000000
NS_GET_USERNS = 0xB701
"""ioctl on a namespace fd: the user namespace that owns it (linux/nsfs.h, _IO(0xb7, 0x1))."""
BIND_SECONDS = 5.0
"""How long a bind inside a fresh namespace is retried while bwrap is still bringing its loopback up."""


def _setns(fd: int, kind: int, what: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, kind) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"setns {what}: {os.strerror(err)}")


def owner_userns(netns_fd: int) -> int:
    """The user namespace that owns a network namespace (a new fd). Unprivileged, bwrap makes the network
    namespace in a first user namespace and runs the room in a second one nested in it, so the room's own
    /proc/PID/ns/user is not the one whose capabilities a join needs."""
    return fcntl.ioctl(netns_fd, NS_GET_USERNS)


def enter(pid: int) -> None:
    """Join the network namespace of `pid` (the user namespace that owns it first, when that is not ours).
    The caller must be single-threaded: the kernel refuses to move a threaded process into a user namespace."""
    net = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
    try:
        owner = owner_userns(net)
        try:
            if os.fstat(owner).st_ino != os.stat("/proc/self/ns/user").st_ino:
                _setns(owner, CLONE_NEWUSER, f"the user namespace owning {pid}'s network")
        finally:
            os.close(owner)
        _setns(net, CLONE_NEWNET, f"/proc/{pid}/ns/net")
    finally:
        os.close(net)


def _bind(port: int, *, exact: bool) -> socket.socket:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    deadline = time.monotonic() + BIND_SECONDS
    while True:
        try:
            listener.bind(("127.0.0.1", port))
            break
        except OSError as exc:
            if not exact:
                listener.bind(("127.0.0.1", 0))
                break
            if exc.errno != errno.EADDRNOTAVAIL or time.monotonic() > deadline:
                raise
            time.sleep(0.01)  # the namespace's loopback is not up yet
    listener.listen(64)
    return listener


def listen_in(pid: int, port: int) -> socket.socket:
    """A socket listening on 127.0.0.1:`port` in the network namespace of `pid`, made by a child of ours."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    child = os.fork()
    if child == 0:
        code = 1
        try:
            ours.close()
            enter(pid)
            made = _bind(port, exact=True)
            socket.send_fds(theirs, [b"1"], [made.fileno()])
            code = 0
        except BaseException as exc:  # the child must never return into the parent's code
            with contextlib.suppress(OSError):
                sys.stderr.write(f"relay: cannot listen in {pid}: {exc}\n")
        os._exit(code)
    theirs.close()
    try:
        _, fds, _, _ = socket.recv_fds(ours, 16, 1)
    finally:
        ours.close()
        os.waitpid(child, 0)
    if not fds:
        raise OSError(f"could not listen on port {port} in the namespace of process {pid}")
    return socket.socket(fileno=fds[0])


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


def _where(value: str) -> int | None:
    if value == "host":
        return None
    if not value.isdigit():
        raise argparse.ArgumentTypeError(f"expected 'host' or a process id, not {value!r}")
    return int(value)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m watcher.boundary.relay")
    parser.add_argument("--listen", type=_where, required=True)
    parser.add_argument("--connect", type=_where, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--to-port", type=int)
    args = parser.parse_args(argv)
    to_port = args.to_port or args.port
    # Both namespaces are joined before any thread starts (a threaded process cannot join a user namespace).
    listener = _bind(args.port, exact=False) if args.listen is None else listen_in(args.listen, args.port)
    if args.connect is not None:
        enter(args.connect)
    print(listener.getsockname()[1], flush=True)
    threading.Thread(target=_watch_stdin, daemon=True).start()
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_serve, args=(client, to_port), daemon=True).start()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
