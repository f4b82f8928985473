"""The normalisation of a failure text before it is fingerprinted: what differs between two servers failing
the same way (their paths, ports, ids, versions) is replaced by a placeholder. Each rule is named, applied in
the order of `NORMALISERS`, and documented in one line; docs/clusters.md lists them."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Normaliser:
    name: str
    doc: str
    pattern: re.Pattern[str]
    placeholder: str


def _rule(name: str, doc: str, pattern: str, placeholder: str) -> Normaliser:
    return Normaliser(name, doc, re.compile(pattern, re.IGNORECASE), placeholder)


NORMALISERS: tuple[Normaliser, ...] = (
    _rule("url", "a URL (scheme to the next space) is <url>", r"\b[a-z][a-z0-9+.-]*://[^\s'\"<>]+", "<url>"),
    _rule("path", "an absolute path of two or more parts is <path>", r"(?<![\w.])(?:/[\w.@+~-]+){2,}/?", "<path>"),
    _rule(
        "host_port",
        "an address with a port (127.0.0.1:8080, localhost:3000, [::1]:80) is <host>:<port>",
        r"(?:\b(?:\d{1,3}\.){3}\d{1,3}|\blocalhost|\[[0-9a-f:]+\]):\d+\b",
        "<host>:<port>",
    ),
    _rule("port", "'port 8080' is 'port <port>'", r"\bport\s+\d+\b", "port <port>"),
    _rule("uuid", "a UUID is <id>", r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", "<id>"),
    _rule(
        "hex",
        "a 0x… number or a run of 12+ hex digits (addresses, commits, tokens) is <hex>",
        r"\b0x[0-9a-f]+\b|\b(?=[0-9a-f]*\d)[0-9a-f]{12,}\b",
        "<hex>",
    ),
    _rule(
        "version",
        "a version number (1.2, v1.27.2, 2.0.0a1, 3.1.0-beta.2) is <version>",
        r"\bv?\d+\.\d+(?:\.\d+)*(?:[-.]?(?:a|b|rc|alpha|beta|dev|post|pre)\.?\d*)?\b",
        "<version>",
    ),
    _rule(
        "number",
        "any other number of two or more digits (pids, ids, seconds, line numbers) is <n>",
        r"\b\d{2,}\b",
        "<n>",
    ),
    _rule("space", "runs of white space are one space", r"\s+", " "),
)


def normalise(text: str) -> str:
    """`text` with every rule of NORMALISERS applied in order, stripped."""
    for rule in NORMALISERS:
        text = rule.pattern.sub(rule.placeholder, text)
    return text.strip()
