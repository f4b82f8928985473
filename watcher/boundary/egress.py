"""What an install room may reach through the watcher's proxy (`proxy.py`), and the record of what it may not.

An install room has no route out: its one way out is the proxy, which allows the exact host:port of each
configured index (pip's, uv's and npm's configuration, and the SDK sources the config names) and the file
hosts those indexes' answers name (learned while the watcher runs, never written in a file). A name is
resolved by the proxy itself and the addresses are judged *after* resolving, so a name that is allowed but
points at the metadata address or the private network is still refused (no DNS rebinding).

Each rule below is one reason a request is refused; `judge_target` and `judge_address` name the first that
applies. Under `suites.egress: audit` a refused request is recorded and let through; under `block` (the
default, and the deploy kit's) it is recorded and refused. A request that is allowed but fails (the index
is down, the name does not resolve) is a failure of that request, never a refusal.

Stdlib only: the unprivileged scenes of the tests import it with the system Python.
"""

from __future__ import annotations

import configparser
import contextlib
import ipaddress
import os
import re
import socket
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from watcher.core import clock

Mode = Literal["audit", "block"]
MODES: tuple[Mode, ...] = ("audit", "block")
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

PIP_VARIABLES = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL")
UV_VARIABLES = ("UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX")
NPM_VARIABLES = ("npm_config_registry", "NPM_CONFIG_REGISTRY")
PIP_CONF_KEYS = ("index-url", "extra-index-url")
LEARNED_CAP = 256
"""At most this many file hosts are learned per proxy: an index answer naming thousands is not a way in."""
_URL = re.compile(rb"https?://[A-Za-z0-9._~%-]+(?::[0-9]{1,5})?(?=[/\"'<>\s?#]|$)")


@dataclass(frozen=True, order=True)
class Target:
    """A host (a name or an address literal, lower case) and a TCP port."""

    host: str
    port: int

    @classmethod
    def of_url(cls, url: str) -> Target | None:
        """The host:port of an http(s) URL; None for any other (a file:// index, a path)."""
        try:
            parts = urlsplit(url.strip())
            port = parts.port
        except ValueError:
            return None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return None
        return cls(parts.hostname.lower(), port or (443 if parts.scheme == "https" else 80))

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    def literal(self) -> Address | None:
        """The host as an address, when it is written as one."""
        with contextlib.suppress(ValueError):
            return ipaddress.ip_address(self.host)
        return None

    def on_loopback(self) -> bool:
        """Written as a loopback address or `localhost`: the operator's own machine (a mirror, a test fake)."""
        address = self.literal()
        return self.host == "localhost" or (address is not None and address.is_loopback)


@dataclass(frozen=True)
class Refusal:
    """One request of an install room the proxy refused (or, under `audit`, recorded and let through)."""

    host: str
    port: int
    address: str
    """The address the name resolved to ("" when it was refused before resolving: a name not on the list is
    never looked up, so the lookup itself cannot carry data out)."""
    rule: str
    step: str
    server: str
    at: str
    let_through: bool = False
    """True under `suites.egress: audit`: recorded, and then allowed."""
    kind: str = "proxy"
    """How it was attempted: "proxy" (asked of the proxy), "direct" (a connection or datagram straight to an
    address, bypassing it) or "raw" (a raw or packet socket); the last two recorded by the room's recorder
    (`guard.py`) and refused under both modes (the room has no route and no `CAP_NET_RAW` for them anyway)."""

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


# The rules. Each names one reason; `judge_target` / `judge_address` apply them in this order.


def not_an_index(target: Target, allowed: Mapping[Target, bool]) -> bool:
    """The host:port is neither a configured index nor a file host learned from one's answers."""
    return target not in allowed


def loopback_not_an_index(address: Address, loopback_ok: bool) -> bool:
    """The address is the host's loopback, and the host is not an index (or file host) written as loopback."""
    return address.is_loopback and not loopback_ok


def link_local(address: Address) -> bool:
    """The address is link-local (169.254.0.0/16, fe80::/10): the cloud's instance-metadata service lives there."""
    return address.is_link_local


def multicast(address: Address) -> bool:
    """The address is multicast."""
    return address.is_multicast


def direct_connect(address: str | Address) -> bool:
    """A room's connection or datagram goes straight to an address off the room's own loopback, not to the proxy."""
    found = _unmapped(ipaddress.ip_address(address))
    return not (found.is_loopback or found.is_unspecified)


def raw_socket(family: int, kind: int) -> bool:
    """A room opens a raw IP socket (AF_INET or AF_INET6, SOCK_RAW) or a packet socket (AF_PACKET, any type)."""
    return family == socket.AF_PACKET or (family in (socket.AF_INET, socket.AF_INET6) and kind == socket.SOCK_RAW)


PRIVATE_NETWORKS = tuple(
    ipaddress.ip_network(net)
    for net in (
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "100.64.0.0/10",
        "0.0.0.0/8",
        "240.0.0.0/4",
        "fc00::/7",
        "fec0::/10",
        "::/128",
    )
)
"""Private use (RFC 1918, 6598 shared, 4193 unique local, site-local), "this network", reserved (240/4 and the
broadcast address) and the unspecified address. Not the documentation or benchmarking ranges (192.0.2/24,
198.51.100/24, 203.0.113/24, 198.18/15, 2001:db8::/32): they route nowhere on the Internet, and a gateway that
answers on one for the registries (some networks route them so) is the operator's own."""


def private_network(address: Address) -> bool:
    """The address is private, reserved or unspecified (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7, ...)."""
    return any(address in net for net in PRIVATE_NETWORKS if net.version == address.version)


def _unmapped(address: Address) -> Address:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


@dataclass
class Policy:
    """The allow-list of one proxy: the configured indexes, the file hosts learned from their answers, the
    mode, and the label (server, step) its refusals are recorded under."""

    indexes: frozenset[Target]
    mode: Mode = "block"
    server: str = ""
    step: str = ""
    learned: dict[Target, bool] = field(default_factory=dict)
    """File hosts learned from an index's answers, each with whether loopback is allowed for it (it was
    learned from an index on loopback and is written as loopback itself)."""
    refusals: list[Refusal] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    """Allowed requests that failed (an index down, a name that does not resolve): what the installer saw as
    the proxy's 502 is said here with its cause, for the step's blame. Never counted as refused."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def allowed(self) -> dict[Target, bool]:
        """Every allowed host:port, with whether it may resolve to the host's loopback."""
        with self._lock:
            return {**{t: t.on_loopback() for t in self.indexes}, **self.learned}

    def is_index(self, target: Target) -> bool:
        return target in self.indexes

    def judge_target(self, target: Target) -> str | None:
        """The rule that refuses `target` before it is resolved, or None."""
        return "not_an_index" if not_an_index(target, self.allowed()) else None

    def judge_address(self, target: Target, address: Address) -> str | None:
        """The rule that refuses connecting to `address` (one `target` resolved to), or None. An address the
        operator wrote as an index's host is theirs to name (a mirror on the private network)."""
        address = _unmapped(address)
        if target.literal() is not None and target in self.indexes:
            return None
        loopback_ok = self.allowed().get(target, False)
        if loopback_not_an_index(address, loopback_ok):
            return "loopback_not_an_index"
        if link_local(address):
            return "link_local"
        if multicast(address):
            return "multicast"
        if private_network(address):
            return "private_network"
        return None

    def learn(self, source: Target, body: bytes) -> None:
        """Allow the file hosts an index's answer names (absolute http(s) URLs in its HTML or JSON)."""
        if source not in self.indexes:
            return  # only an index's own answers teach; a file host's do not
        for match in _URL.findall(body):
            found = Target.of_url(match.decode("ascii", "replace") + "/")
            if found is None:
                continue
            with self._lock:
                if found in self.indexes or found in self.learned or len(self.learned) >= LEARNED_CAP:
                    continue
                # Loopback only for a loopback host learned from a loopback index (a local mirror's files).
                self.learned[found] = found.on_loopback() and source.on_loopback()

    def refuse(self, target: Target, rule: str, address: str = "") -> Refusal:
        """Record a refusal; under `audit` it is recorded as let through."""
        refusal = Refusal(
            target.host,
            target.port,
            address,
            rule,
            self.step,
            self.server,
            clock.now().isoformat(timespec="seconds"),
            let_through=self.mode == "audit",
        )
        with self._lock:
            self.refusals.append(refusal)
        return refusal

    def note_failure(self, text: str) -> None:
        with self._lock:
            if len(self.failures) < LEARNED_CAP:
                self.failures.append(text)

    def taken(self) -> list[Refusal]:
        """The refusals so far (a copy)."""
        with self._lock:
            return list(self.refusals)


def pip_conf_values(files: Iterable[str], keys: Iterable[str] = PIP_CONF_KEYS) -> list[str]:
    """The values of `keys` in every section of the pip.conf files that exist (an unreadable one is skipped)."""
    urls: list[str] = []
    for conf in files:
        if not conf or not Path(conf).is_file():
            continue
        parser = configparser.ConfigParser(interpolation=None)
        with contextlib.suppress(configparser.Error, OSError, UnicodeDecodeError):
            parser.read(conf, encoding="utf-8")
            for section in parser.sections():
                for key in keys:
                    urls += parser.get(section, key, fallback="").split()
    return urls


def pip_conf_files(env: Mapping[str, str]) -> list[str]:
    """pip's configuration files that hold its index settings, as pip reads them (site, user, PIP_CONFIG_FILE)."""
    home = env.get("HOME", "")
    xdg = env.get("XDG_CONFIG_HOME") or (os.path.join(home, ".config") if home else "")
    files = ["/etc/pip.conf", "/etc/xdg/pip/pip.conf"]
    if xdg:
        files.append(os.path.join(xdg, "pip", "pip.conf"))
    if home:
        files.append(os.path.join(home, ".pip", "pip.conf"))
    return [*files, env.get("PIP_CONFIG_FILE", "")]


def index_urls(env: Mapping[str, str], *, defaults: Sequence[str] = (), extra: Sequence[str] = ()) -> list[str]:
    """Every http(s) index the installers are configured with: pip's and uv's variables and pip's configuration
    files, npm's registry variables, `defaults` (the installers' own defaults, which the caller takes from their
    libraries or `npm config get registry`) and `extra` (the SDK sources the config names)."""
    values: list[str] = []
    for name in (*PIP_VARIABLES, *UV_VARIABLES, *NPM_VARIABLES):
        values += env.get(name, "").replace(",", " ").split()
    values += pip_conf_values(pip_conf_files(env))
    urls = [
        value.split("=", 1)[-1] if "=" in value.split("://", 1)[0] else value for value in [*values, *defaults, *extra]
    ]
    return list(dict.fromkeys(url for url in urls if Target.of_url(url) is not None))


def configured_indexes(
    env: Mapping[str, str], *, defaults: Sequence[str] = (), extra: Sequence[str] = ()
) -> frozenset[Target]:
    """The host:port of each index of `index_urls`: what an install room's proxy allows from the start."""
    found = (Target.of_url(url) for url in index_urls(env, defaults=defaults, extra=extra))
    return frozenset(t for t in found if t is not None)
