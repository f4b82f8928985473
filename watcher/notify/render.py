"""Slack Block Kit renderings of the service's own notices (new SDK versions, operator alerts)."""

from __future__ import annotations

from typing import Any

# Slack's limits: 50 blocks a message, 3,000 characters in a section's text, 150 in a header.
MAX_BLOCKS = 50
MAX_SECTION_CHARS = 3000
MAX_HEADER_CHARS = 150


def header(text: str) -> dict[str, Any]:
    return {"type": "header", "text": {"type": "plain_text", "text": clip(text, MAX_HEADER_CHARS), "emoji": True}}


def section(markdown: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": clip(markdown, MAX_SECTION_CHARS)}}


def fields(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    # A section holds at most 10 fields of 2,000 characters each.
    return {
        "type": "section",
        "fields": [{"type": "mrkdwn", "text": clip(f"*{k}*\n{v}", 2000)} for k, v in pairs[:10]],
    }


def context(markdown: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": clip(markdown, MAX_SECTION_CHARS)}]}


def divider() -> dict[str, Any]:
    return {"type": "divider"}


def clip(text: str, limit: int) -> str:
    """Shorten to Slack's limit, saying so; callers that must not lose text split first."""
    if len(text) <= limit:
        return text
    marker = " … (cut, see the full report)"
    return text[: limit - len(marker)] + marker


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
    title = f"New {kind}: {release['package']} {release['version']} ({release['sdk']} SDK)"
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


def operator_alert(title: str, detail: str) -> tuple[str, list[dict[str, Any]]]:
    return f"{title}: {detail}", [header(title), section(detail)]
