"""The alert a team gets when polling finds a new version of one of its SDKs."""

from __future__ import annotations

from typing import Any

from watcher.notify.blocks import context, fields, header, section
from watcher.versions import parse

# Public pages of a version. PyPI's and npm's are left out: their hosts are taken from each
# ecosystem's own configuration elsewhere and are not written into this project.
REGISTRY_PAGES = {
    "nuget": "https://www.nuget.org/packages/{package}/{version}",
    "goproxy": "https://pkg.go.dev/{package}@{version}",
    "crates": "https://crates.io/crates/{package}/{version}",
    "rubygems": "https://rubygems.org/gems/{package}/versions/{version}",
    "packagist": "https://packagist.org/packages/{package}#{version}",
    "github": "https://github.com/{package}/releases/tag/{version}",
    "maven": "https://central.sonatype.com/artifact/{group}/{artifact}/{version}",
}


def release_page(registry: str, package: str, version: str) -> str | None:
    if registry == "maven" and ":" in package:
        group, artifact = package.split(":", 1)
        return REGISTRY_PAGES["maven"].format(group=group, artifact=artifact, version=version)
    template = REGISTRY_PAGES.get(registry)
    return template.format(package=package, version=version) if template else None


def release_notice(release: dict[str, Any], servers: list[str]) -> tuple[str, list[dict[str, Any]]]:
    """Text and blocks for one new SDK version, as posted to one team."""
    kind = "pre-release" if release["prerelease"] else "release"
    parsed = parse(release["registry"], release["version"])
    if not parsed.valid:  # announced, since it may be a beta, but not passed off as an ordinary one
        kind = f"unparseable version (the {parsed.scheme} rules cannot read it, so it is treated as a pre-release)"
    what = kind if parsed.valid else "unparseable version"
    title = f"New {what}: {release['package']} {release['version']} ({release['sdk']} SDK)"
    page = release_page(release["registry"], release["package"], release["version"])
    pairs = [
        ("Registry", release["registry"]),
        ("Published", release.get("published") or "not stated by the registry"),
        ("First seen", release["first_seen"]),
        ("Kind", kind),
    ]
    if servers:
        plan = f"Suite runs queued for: {', '.join(servers)}. Results will follow in this thread."
    else:
        plan = "No server of this team is configured for this SDK, so no suite run follows."
    text = f"{title}. {plan}"
    blocks = [header(title), fields(pairs), section(plan)]
    if page:
        blocks.append(context(f"<{page}|{release['package']} {release['version']}>"))
    return text, blocks
