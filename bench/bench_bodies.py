"""Benchmark: what an anonymous oversized request body costs the running service (issue 32, bounded bodies).

    .venv/bin/python bench/bench_bodies.py [--huge-mib 200] [--small 20] [--quick]

Starts the real service (`mcp-watcher run`, uvicorn on loopback, a loopback Slack) and reads its peak
resident set (VmHWM in /proc/<pid>/status) at three moments: when it serves; after the baseline, `--small`
unsigned `POST /slack/events` bodies of 64 KiB each, chunked with no Content-Length (under the 1 MiB cap:
read whole, then refused 401 for the missing signature); and after the attack, one body of `--huge-mib` MiB,
chunked, no Content-Length, no signature, on `/slack/events` and then on `/login`. Prints each figure, the
bytes the client got to send before the 413, the time to that answer beside the baseline's median request,
and the ratio of the peak after the attack to the peak after the baseline (a body read whole would add its
size: 200 MiB on a peak of about 100). --quick (the smoke test's mode): 3 small bodies, the same attack
(the service refuses it after about its cap, so it costs no more time).
"""

from __future__ import annotations

import argparse
import contextlib
import select
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.fakes.slack_server import FakeSlack  # noqa: E402
from bench.measure import ratio  # noqa: E402
from bench.service import Service  # noqa: E402
from watcher.ops.bodies import SLACK_EVENTS_LIMIT  # noqa: E402

PIECE = 64 * 1024
SIGNING_SECRET = "signing-secret-for-the-body-bench"
CLOCK_START = "2026-12-03T12:00:00Z"


def peak_rss(pid: int) -> int:
    """The process's peak resident set size in bytes (VmHWM in /proc/<pid>/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmHWM for {pid}")


def send_chunked(port: int, path: str, total: int) -> tuple[int | None, int]:
    """POST `total` bytes to `path` as chunks with no Content-Length; returns (status the server answered,
    bytes sent before it answered or closed). Stops sending as soon as an answer arrives."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    sent = 0
    answer = b""
    try:
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
            "Content-Type: application/x-www-form-urlencoded\r\n\r\n"
        )
        sock.sendall(head.encode())
        piece = f"{PIECE:x}\r\n".encode() + b"a" * PIECE + b"\r\n"
        while sent < total:
            if select.select([sock], [], [], 0)[0]:
                break  # an answer (or the close) came before the body was done
            try:
                sock.sendall(piece)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += PIECE
        else:
            sock.sendall(b"0\r\n\r\n")
        with contextlib.suppress(ConnectionResetError, TimeoutError):
            while b"\r\n" not in answer:
                more = sock.recv(65536)
                if not more:
                    break
                answer += more
    finally:
        sock.close()
    status = int(answer.split()[1]) if answer.startswith(b"HTTP/1.1 ") else None
    return status, sent


def _config(folder: Path, slack: FakeSlack) -> Path:
    nowhere = f"{slack.base}/no-such-page"  # loopback only: the spec watch reads nothing
    data = {
        "state": str(folder / "watcher.db"),
        "slack": {"api_url": slack.api_url, "retries": 0},
        "schedule": {"poll_minutes": 60},
        "spec": {"registry_url": nowhere, "github_api_url": nowhere},
    }
    path = folder / "watcher.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _timed(port: int, path: str, total: int) -> tuple[int | None, int, float]:
    began = time.perf_counter()
    status, sent = send_chunked(port, path, total)
    return status, sent, time.perf_counter() - began


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--huge-mib", type=int, default=200, help="the attack's body, MiB")
    parser.add_argument("--small", type=int, default=20, help="baseline requests of 64 KiB")
    parser.add_argument("--quick", action="store_true", help="3 baseline requests (the smoke test)")
    args = parser.parse_args(argv)
    small_count = 3 if args.quick else args.small
    huge = args.huge_mib * 1024 * 1024
    mib = 2**20
    with tempfile.TemporaryDirectory() as tmp, FakeSlack(token="xoxb-bench-bodies") as slack:
        folder = Path(tmp)
        env = {"SLACK_BOT_TOKEN": slack.token, "SLACK_SIGNING_SECRET": SIGNING_SECRET}
        service = Service(_config(folder, slack), env, folder / "service.log", clock_start=CLOCK_START)
        try:
            service.wait_http(60)
            service.wait_for_log("HTTP at POST /slack/events", timeout=60)
            pid = service.process.pid
            serving = peak_rss(pid)
            small = [_timed(service.port, "/slack/events", PIECE) for _ in range(small_count)]
            assert all(status == 401 for status, _, _ in small), small  # read whole, refused unsigned
            after_small = peak_rss(pid)
            status, sent, refused_in = _timed(service.port, "/slack/events", huge)
            assert status == 413, status
            login_status, login_sent, _ = _timed(service.port, "/login", huge)
            after_huge = peak_rss(pid)
        finally:
            service.stop()
    small_median = statistics.median(seconds for _, _, seconds in small)
    print(f"service peak RSS (VmHWM): serving {serving / mib:.1f} MiB")
    print(
        f"  after {small_count} small bodies (64 KiB each, 401): {after_small / mib:.1f} MiB "
        f"(+{(after_small - serving) / mib:.1f} MiB), median request {small_median * 1000:.1f} ms"
    )
    print(
        f"  after {args.huge_mib} MiB chunked on /slack/events ({status}) and /login ({login_status}): "
        f"{after_huge / mib:.1f} MiB (+{(after_huge - after_small) / mib:.1f} MiB)"
    )
    print(
        f"  /slack/events: refused after {sent / mib:.2f} MiB sent of {args.huge_mib} MiB "
        f"(cap {SLACK_EVENTS_LIMIT / mib:.0f} MiB), answered in {refused_in * 1000:.1f} ms = "
        f"{ratio(refused_in, small_median)} the small request; /login: {login_sent / mib:.2f} MiB sent"
    )
    print(
        f"  peak after the attack / peak after the baseline: {ratio(after_huge, after_small)} "
        f"(a body read whole would be about {ratio(after_small + huge, after_small)})"
    )
    return 0 if status == 413 and after_huge - after_small < huge // 4 else 1


if __name__ == "__main__":
    sys.exit(main())
