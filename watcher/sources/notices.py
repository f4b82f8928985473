"""The alert a team gets when polling finds a new version of one of its SDKs."""

from __future__ import annotations

from typing import Any

from watcher.notify.blocks import Mrkdwn, context, escape, fields, header, link, section
from watcher.sources.events import ReleaseEvent
from watcher.sources.versions import parse, run_refusal

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


def release_notice(release: ReleaseEvent, servers: list[str]) -> tuple[Mrkdwn, list[dict[str, Any]]]:
    """Text and blocks for one new SDK version, as posted to one team.

    The version and package come from a registry: escaped in every mrkdwn text (the fallback text too,
    which Slack also reads for mentions), and a version that may not be run says so instead of a plan."""
    kind = "pre-release" if release.prerelease else "release"
    parsed = parse(release.registry, release.version)
    if not parsed.valid:  # announced, since it may be a beta, but not passed off as an ordinary one
        kind = f"unparseable version (the {parsed.scheme} rules cannot read it, so it is treated as a pre-release)"
    what = kind if parsed.valid else "unparseable version"
    package, version = release.package, release.version
    title = f"New {what}: {package} {version} ({release.sdk} SDK)"
    refusal = run_refusal(release.registry, release.version)
    page = None if refusal else release_page(release.registry, package, version)
    pairs = [
        ("Registry", escape(release.registry)),
        ("Published", escape(release.published or "not stated by the registry")),
        ("First seen", escape(release.first_seen)),
        ("Kind", escape(kind)),
    ]
    if refusal:
        plan = Mrkdwn("No suite run: {}.").format(refusal)
    elif servers:
        plan = Mrkdwn("Suite runs queued for: {}. Results will follow in this thread.").format(", ".join(servers))
    else:
        plan = Mrkdwn("No server of this team is configured for this SDK, so no suite run follows.")
    text = Mrkdwn("New {}: {} {} ({} SDK). {}").format(what, package, version, release.sdk, plan)
    blocks = [header(title), fields(pairs), section(plan)]
    if page:
        blocks.append(context(link(page, f"{package} {version}")))
    return text, blocks
