"""Whose fault a failed install is: the watcher's own, or the server's.

A build step fails for one of two kinds of reason. The server's: the SDK version does not resolve with the
project's dependencies, a dependency is missing, the build breaks — a `fail`, news for the team. Or the
watcher's own: it could not reach its registry (network, proxy, DNS), does not trust its certificate (a
TLS-inspecting proxy's `SELF_SIGNED_CERT_IN_CHAIN`), or the registry is down — nothing is known about the
server then, so the run is an `error` with that reason, never a `fail` that blames the team's server.

One named rule per kind of the watcher's own failure, matched on the failed step's last output lines
(uv, pip and npm word them differently). Output no rule matches stays the server's fault.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    id: str
    explanation: str
    """One line: what went wrong, said to the operator (it is the watcher's to fix)."""
    patterns: tuple[re.Pattern[str], ...]


def _any(*patterns: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p) for p in patterns)


RULES: tuple[Rule, ...] = (
    Rule(
        "registry-certificate",
        "the registry's TLS certificate is not trusted here (a self-signed or inspecting proxy, an unknown "
        "issuer, expired, another host's)",
        _any(
            # npm (Node's OpenSSL error codes)
            r"\b(?:SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|UNABLE_TO_VERIFY_LEAF_SIGNATURE"
            r"|UNABLE_TO_GET_ISSUER_CERT(?:_LOCALLY)?|CERT_HAS_EXPIRED|CERT_NOT_YET_VALID|CERT_UNTRUSTED"
            r"|ERR_TLS_CERT_ALTNAME_INVALID)\b",
            # uv (rustls)
            r"invalid peer certificate: [A-Za-z]+",
            # pip (Python's ssl module)
            r"CERTIFICATE_VERIFY_FAILED\][^\n]{0,120}",
        ),
    ),
    Rule(
        "registry-server-error",
        "the registry answered with a server error: it is down or overloaded",
        _any(
            # uv: "HTTP status server error (503 Service Unavailable) for url (…)"
            r"HTTP status server error \(5\d\d[^)\n]*\)",
            # npm: "npm error code E503", "503 Service Unavailable - GET …"
            r"\bcode E5\d\d\b",
            # pip: "HTTP error 503 while getting …", "503 Server Error: Service Unavailable for url: …"
            r"HTTP error 5\d\d\b",
            r"\b5\d\d Server Error\b[^\n]{0,80}",
        ),
    ),
    Rule(
        "registry-unreachable",
        "the registry could not be reached (connection refused or reset, no route, name resolution, proxy, timeout)",
        _any(
            # every installer, from the system's error text (the root cause: named first when it is there)
            r"Connection refused|Connection reset by peer|Network is unreachable|No route to host",
            # npm
            r"\b(?:ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ESOCKETTIMEDOUT|ENETUNREACH"
            r"|EHOSTUNREACH|EPROXY)\b",
            # uv (hyper / reqwest)
            r"(?i)tcp connect error[^\n]{0,80}",
            r"(?i)dns error[^\n]{0,80}",
            r"(?i)failed to lookup address information[^\n]{0,80}",
            r"(?i)operation timed out",
            # pip (urllib3 / requests)
            r"Failed to establish a new connection[^\n]{0,80}",
            r"Temporary failure in name resolution",
            r"Read timed out\.?",
            r"ProxyError[^\n]{0,80}",
        ),
    ),
)


@dataclass(frozen=True)
class WatcherFault:
    """An install that failed for the watcher's own reason: which rule, and the reason to report."""

    rule: str
    reason: str


def watcher_fault(output: str) -> WatcherFault | None:
    """The watcher's own reason for a failed build step, read from the step's last output lines; None: the
    failure is the server's (or nothing says otherwise)."""
    for rule in RULES:
        for pattern in rule.patterns:
            found = pattern.search(output)
            if found:
                return WatcherFault(rule.id, f"{rule.explanation}: {found.group(0).strip()}")
    return None
