"""Is a source's ``url:`` of the form its registry's adapter expects?

Each adapter appends its own paths to ``url:`` (see ``watcher.sources``), so a URL of another kind fails
only later, at a poll, with a 404 or a page of the wrong format. The configuration refuses what is clearly
wrong instead, naming the form expected. Only clear mistakes are refused: a URL without an http(s) scheme
or host, one with a query or fragment (paths are appended to it), and per registry the usual confusions
(PyPI's JSON API for its Simple index, NuGet's ``index.json``, a GOPROXY list, an API path the adapter adds
itself, GitHub's web site for its API). Mirrors and proxies at any other path are accepted.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import SplitResult, urlsplit

EXPECTED: dict[str, str] = {
    "pypi": "pip's Simple index URL (index-url), e.g. https://mirror.example/simple/",
    "npm": "the npm registry root, e.g. https://npm.example/",
    "nuget": "the NuGet v3 root: the folder of the service index, without index.json, e.g. https://nuget.example/v3",
    "goproxy": "the URL of one Go module proxy (not a GOPROXY list), e.g. https://goproxy.example",
    "crates": "the crates.io site root, without /api/v1, e.g. https://crates.example",
    "maven": "a Maven repository root, e.g. https://maven.example/maven2",
    "rubygems": "the RubyGems site root, without /api/v1, e.g. https://gems.example",
    "packagist": "a Composer 2 repository root, without packages.json or /p2, e.g. https://packagist.example",
    "github": "the GitHub REST API root: https://api.github.com, or https://HOST/api/v3 for GitHub Enterprise",
}

Check = Callable[[SplitResult, str], str | None]
"""(the split URL, its path lower-cased without trailing slashes) → why it is wrong, or None."""


def _ends(pattern: str, why: str) -> Check:
    compiled = re.compile(rf"(?:^|/)(?:{pattern})$")
    return lambda url, path: why if compiled.search(path) else None


def _goproxy_list(url: SplitResult, path: str) -> str | None:
    return "a GOPROXY list (',' or '|' between entries)" if re.search(r"[,|]", url.geturl()) else None


def _github_web(url: SplitResult, path: str) -> str | None:
    return (
        "GitHub's web site, not its REST API"
        if (url.hostname or "").lower() in ("github.com", "www.github.com")
        else None
    )


CHECKS: dict[str, tuple[Check, ...]] = {
    "pypi": (_ends(r"pypi|json", "a PyPI JSON API URL (…/pypi or …/json)"),),
    "nuget": (
        _ends(r"index\.json", "the service index itself (index.json)"),
        _ends(r"api/v2|v2", "a NuGet v2 feed"),
    ),
    "goproxy": (_goproxy_list,),
    "crates": (_ends(r"api/v1|api/v1/crates", "the API path that the adapter appends itself"),),
    "rubygems": (_ends(r"api/v1|api/v1/versions", "the API path that the adapter appends itself"),),
    "packagist": (_ends(r"packages\.json|p2", "a path that the adapter appends itself"),),
    "github": (_github_web, _ends(r"repos", "the repos path that the adapter appends itself")),
}


def url_problem(registry: str, url: str) -> str | None:
    """Why ``url`` cannot be a ``url:`` of ``registry`` (with the form expected), or None when it may be."""
    why = _why(registry, url)
    if why is None:
        return None
    expected = EXPECTED.get(registry, "the registry's root")
    return f"{why}; a {registry} url: is {expected}"


def _why(registry: str, url: str) -> str | None:
    try:
        parts = urlsplit(url.strip())
    except ValueError as exc:
        return f"not a URL ({exc})"
    if parts.scheme not in ("http", "https"):
        if "://" not in url:
            return "no http:// or https:// scheme"
        return f"the scheme {parts.scheme}:// is not http:// or https://"
    if not parts.hostname:
        return "no host"
    if parts.query or parts.fragment:
        return "a query or fragment, but the adapter appends paths to the URL"
    path = parts.path.rstrip("/").lower()
    for check in CHECKS.get(registry, ()):
        if why := check(parts, path):
            return why
    return None
