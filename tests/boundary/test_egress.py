"""The install rooms' egress proxy on the host (`watcher/boundary/proxy.py`, `egress.py`): its rules one by one,
then the proxy itself between a client and loopback services. Every name that must resolve to a refused address
goes through the proxy's resolver seam; nothing here opens a connection to an address that is not loopback."""

from __future__ import annotations

import asyncio
import http.server
import ipaddress
import socket
import ssl
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.boundary.fixtures.fake_index import FakeIndex, Listener
from watcher.boundary import egress, proxy
from watcher.boundary.egress import Policy, Target


def ip(text: str) -> egress.Address:
    return ipaddress.ip_address(text)


def test_rule_not_an_index() -> None:
    allowed = {Target("index.test", 443): False}
    assert egress.not_an_index(Target("exfil.test", 443), allowed)
    assert egress.not_an_index(Target("index.test", 80), allowed)  # the exact port only
    assert not egress.not_an_index(Target("index.test", 443), allowed)


def test_rule_loopback_not_an_index() -> None:
    assert egress.loopback_not_an_index(ip("127.0.0.1"), loopback_ok=False)
    assert egress.loopback_not_an_index(ip("::1"), loopback_ok=False)
    assert not egress.loopback_not_an_index(ip("127.0.0.1"), loopback_ok=True)
    assert not egress.loopback_not_an_index(ip("93.184.216.34"), loopback_ok=False)


def test_rule_link_local() -> None:
    assert egress.link_local(ip("169.254.169.254")) and egress.link_local(ip("fe80::1"))
    assert not egress.link_local(ip("10.0.0.1"))


def test_rule_multicast() -> None:
    assert egress.multicast(ip("224.0.0.251")) and egress.multicast(ip("ff02::1"))
    assert not egress.multicast(ip("93.184.216.34"))


def test_rule_direct_connect() -> None:
    for text in ("169.254.169.254", "10.0.0.5", "93.184.216.34", "fd00::1", "::ffff:169.254.169.254"):
        assert egress.direct_connect(text), text
    for text in ("127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1", "0.0.0.0", "::"):  # the room's own loopback
        assert not egress.direct_connect(text), text


def test_rule_raw_socket() -> None:
    assert egress.raw_socket(socket.AF_INET, socket.SOCK_RAW) and egress.raw_socket(socket.AF_INET6, socket.SOCK_RAW)
    assert egress.raw_socket(socket.AF_PACKET, socket.SOCK_DGRAM)  # a packet socket of any type
    assert not egress.raw_socket(socket.AF_INET, socket.SOCK_STREAM)
    assert not egress.raw_socket(socket.AF_NETLINK, socket.SOCK_RAW)  # (bwrap's own, to bring its loopback up)


def test_rule_private_network() -> None:
    for text in ("10.1.2.3", "172.16.0.1", "192.168.1.1", "100.64.0.1", "fd00::1", "0.0.0.0", "240.0.0.1", "::"):
        assert egress.private_network(ip(text)), text
    assert not egress.private_network(ip("127.0.0.1"))  # loopback has its own rule
    assert not egress.private_network(ip("93.184.216.34"))
    # Documentation ranges route nowhere on the Internet: a gateway answering there for the registries is the
    # operator's (this workplace's registries resolve into 203.0.113.0/24).
    assert not egress.private_network(ip("203.0.113.80")) and not egress.private_network(ip("2001:db8::1"))


def test_the_rules_apply_after_resolving_and_an_ipv4_mapped_address_is_judged_as_ipv4() -> None:
    policy = Policy(frozenset({Target("index.test", 443), Target("127.0.0.1", 9000), Target("10.9.9.9", 80)}))
    assert policy.judge_target(Target("index.test", 443)) is None
    assert policy.judge_address(Target("index.test", 443), ip("169.254.169.254")) == "link_local"
    assert policy.judge_address(Target("index.test", 443), ip("::ffff:10.0.0.5")) == "private_network"
    assert policy.judge_address(Target("index.test", 443), ip("127.0.0.1")) == "loopback_not_an_index"
    assert policy.judge_address(Target("index.test", 443), ip("93.184.216.34")) is None
    # An index the operator wrote as an address is theirs to name: a loopback fake, a mirror on the LAN.
    assert policy.judge_address(Target("127.0.0.1", 9000), ip("127.0.0.1")) is None
    assert policy.judge_address(Target("10.9.9.9", 80), ip("10.9.9.9")) is None


def test_file_hosts_are_learned_from_an_indexs_answers_only() -> None:
    index = Target("127.0.0.1", 9000)
    policy = Policy(frozenset({index, Target("index.test", 443)}))
    policy.learn(index, b'<a href="http://127.0.0.1:9001/files/a.tar.gz#sha256=00">a</a>')
    policy.learn(Target("index.test", 443), b'{"url": "https://files.test/packages/x.whl"}')
    policy.learn(Target("127.0.0.1", 9001), b'<a href="https://sneaky.test/">a file host teaches nothing</a>')
    assert policy.allowed()[Target("127.0.0.1", 9001)] is True  # loopback, from a loopback index
    assert policy.allowed()[Target("files.test", 443)] is False
    assert Target("sneaky.test", 443) not in policy.allowed()


def test_the_indexes_come_from_the_installers_configuration(tmp_path: Path) -> None:
    conf = tmp_path / "pip.conf"
    conf.write_text("[global]\nindex-url = https://mirror.test/simple\nextra-index-url = http://127.0.0.1:8080/x\n")
    env = {
        "PIP_CONFIG_FILE": str(conf),
        "UV_INDEX": "internal=https://uv.test:8443/simple",
        "npm_config_registry": "https://npm.test/",
        "PIP_EXTRA_INDEX_URL": "file:///srv/wheels",
        "HOME": str(tmp_path),
    }
    found = egress.configured_indexes(env, defaults=["https://default.test/simple/"], extra=["https://sdk.test/"])
    assert found >= {
        Target("mirror.test", 443),
        Target("127.0.0.1", 8080),
        Target("uv.test", 8443),
        Target("npm.test", 443),
        Target("default.test", 443),
        Target("sdk.test", 443),
    }
    assert all(t.host != "/srv/wheels" for t in found)


NAMES = {"metadata.test": "169.254.169.254", "private.test": "10.0.0.5", "index.test": "10.0.0.6"}


@pytest.fixture
def scene(tmp_path: Path) -> Iterator[tuple[FakeIndex, Listener, list[str]]]:
    (tmp_path / "evil_helper-0.1.tar.gz").write_bytes(b"an sdist")
    index, other = FakeIndex(tmp_path), Listener()
    yield index, other, []
    index.close()
    other.close()


def start(policy: Policy, monkeypatch: pytest.MonkeyPatch, connected: list[str]) -> proxy.EgressProxy:
    async def resolve(host: str, port: int) -> list[str]:
        if host in NAMES:
            return [NAMES[host]]
        if ipaddress.ip_address(host).is_loopback:
            return [host]
        raise OSError(f"a test resolves only loopback and its own names, not {host}")

    real = asyncio.open_connection

    async def spy(host: str, port: int, **options: object) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        connected.append(f"{host}:{port}")
        assert ipaddress.ip_address(host).is_loopback, "the proxy connected to an address that is not loopback"
        return await real(host, port, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(asyncio, "open_connection", spy)
    box = proxy.EgressProxy(policy, resolver=resolve)
    box.start()
    return box


def get(box: proxy.EgressProxy, url: str) -> tuple[int, bytes]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": f"http://127.0.0.1:{box.port}"}))
    try:
        with opener.open(url, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def connect(box: proxy.EgressProxy, target: str) -> bytes:
    with socket.create_connection(("127.0.0.1", box.port), timeout=10) as sock:
        sock.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
        return sock.recv(4096).split(b"\r\n", 1)[0]


def test_the_proxy_serves_the_index_and_the_file_host_it_names_and_refuses_the_rest(
    scene: tuple[FakeIndex, Listener, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    index, other, connected = scene
    indexes = frozenset({Target.of_url(index.url), Target("index.test", 443), Target("metadata.test", 80)})
    policy = Policy(frozenset(t for t in indexes if t), server="team-a", step="pip install")
    box = start(policy, monkeypatch, connected)
    try:
        status, page = get(box, index.url + "/evil-helper/")
        assert status == 200 and b"evil_helper-0.1.tar.gz" in page
        status, body = get(box, index.files_url + "/files/evil_helper-0.1.tar.gz")
        assert (status, body) == (200, b"an sdist")  # learned from the page just served
        assert get(box, f"http://127.0.0.1:{other.port}/")[0] == 403
        assert get(box, "http://169.254.169.254/latest/meta-data/")[0] == 403
        assert connect(box, "metadata.test:80") == b"HTTP/1.1 403 Forbidden"  # allowed name, refused address
        assert connect(box, "private.test:443") == b"HTTP/1.1 403 Forbidden"
        assert connect(box, "index.test:443") == b"HTTP/1.1 403 Forbidden"  # an index rebound to the LAN
        assert connect(box, "exfil.example:443") == b"HTTP/1.1 403 Forbidden"
    finally:
        box.close()
    refused = [(r.host, r.port, r.address, r.rule) for r in policy.taken()]
    assert refused == [
        ("127.0.0.1", other.port, "", "not_an_index"),
        ("169.254.169.254", 80, "", "not_an_index"),
        ("metadata.test", 80, "169.254.169.254", "link_local"),
        ("private.test", 443, "", "not_an_index"),
        ("index.test", 443, "10.0.0.6", "private_network"),
        ("exfil.example", 443, "", "not_an_index"),
    ]
    assert all(r.server == "team-a" and r.step == "pip install" and not r.let_through for r in policy.taken())
    assert other.hits == 0
    assert connected == [index.url.split("/")[2], index.files_url.split("/")[2]]


def test_under_audit_a_refusal_is_recorded_and_let_through(
    scene: tuple[FakeIndex, Listener, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    index, other, connected = scene
    policy = Policy(frozenset({Target.of_url(index.url) or Target("", 0)}), mode="audit")
    box = start(policy, monkeypatch, connected)
    try:
        assert connect(box, f"127.0.0.1:{other.port}") == b"HTTP/1.1 200 Connection established"
    finally:
        box.close()
    assert [(r.rule, r.let_through) for r in policy.taken()] == [("not_an_index", True)]
    assert connected == [f"127.0.0.1:{other.port}"]


def test_a_connection_that_merely_failed_is_not_a_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    down = socket.socket()
    down.bind(("127.0.0.1", 0))  # bound, never listening: an index that is down (its port stays ours)
    port = down.getsockname()[1]
    policy = Policy(frozenset({Target("127.0.0.1", port), Target("unknown.test", 443)}))
    box = start(policy, monkeypatch, [])
    try:
        assert get(box, f"http://127.0.0.1:{port}/simple/")[0] == 502
        assert connect(box, "unknown.test:443") == b"HTTP/1.1 502 Bad Gateway"  # does not resolve
        with socket.create_connection(("127.0.0.1", box.port), timeout=10) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")  # not a proxy request: answered, not recorded
            assert sock.recv(4096).startswith(b"HTTP/1.1 400 ")
    finally:
        box.close()
        down.close()
    assert policy.taken() == []


def test_room_env_sends_every_installer_through_the_proxy() -> None:
    env = proxy.room_env(3128)
    assert env["HTTPS_PROXY"] == env["http_proxy"] == env["npm_config_https_proxy"] == "http://127.0.0.1:3128"
    assert env["NO_PROXY"] == env["no_proxy"] == env["npm_config_noproxy"] == ""


def _tls_index(folder: Path, page: bytes) -> tuple[http.server.ThreadingHTTPServer, ssl.SSLContext, list[str]]:
    """An HTTPS index on loopback (a certificate of its own for 127.0.0.1) answering `page` to every GET."""
    key, cert = folder / "key.pem", folder / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"]
        + ["-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    asked: list[str] = []

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: object) -> None:
            return None

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    serving = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    serving.load_cert_chain(cert, key)
    server.socket = serving.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    trusting = ssl.create_default_context(cafile=str(cert))
    return server, trusting, asked


def test_an_https_indexs_page_is_read_before_the_first_tunnel_there_and_names_the_file_hosts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = b'{"files": [{"url": "https://files.test/packages/ab/mcp-2.3.0.tar.gz", "hashes": {}}]}'
    server, trusting, asked = _tls_index(tmp_path, page)
    port = server.server_address[1]
    index = Target("127.0.0.1", port)
    policy = Policy(frozenset({index}))
    learn = [f"https://127.0.0.1:{port}/simple/mcp/", "https://elsewhere.test/simple/mcp/"]
    box = proxy.EgressProxy(policy, resolver=_loopback_only, learn_urls=learn, tls=trusting)
    box.start()
    try:
        assert Target("files.test", 443) not in policy.allowed()
        assert connect(box, f"127.0.0.1:{port}") == b"HTTP/1.1 200 Connection established"
        assert connect(box, f"127.0.0.1:{port}") == b"HTTP/1.1 200 Connection established"
    finally:
        box.close()
        server.shutdown()
    assert asked == ["/simple/mcp/"]  # once, and only on the index the installer went to
    assert policy.allowed()[Target("files.test", 443)] is False
    assert policy.taken() == []


async def _loopback_only(host: str, port: int) -> list[str]:
    if ipaddress.ip_address(host).is_loopback:
        return [host]
    raise OSError(f"a test resolves only loopback, not {host}")
