"""Maven Central through ``maven-metadata.xml``: ``GET <base>/<group/as/path>/<artifact>/maven-metadata.xml``.

``package`` is ``groupId:artifactId``. The metadata lists versions but no time per version, so
``published`` is None and the watcher's first-seen time is what tells when a version appeared.
(A version's time could be read from the Last-Modified header of its ``.pom``, but that is one more
request per version on a cold poll, and the shared HTTP layer hands adapters bodies, not headers.)
``-SNAPSHOT`` versions are dropped: they are moving builds, not releases.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from watcher.core import schemes, untrusted
from watcher.sources._parse import get, ordered, release, root
from watcher.sources.base import RegistryHttp, RegistryInfo, Release, SourceError
from watcher.sources.settings import SdkSource

REGISTRY = RegistryInfo(
    name="maven",
    scheme=schemes.MAVEN,
    project_page="https://central.sonatype.com/artifact/{group}/{artifact}/{version}",
)


def default_base() -> str:
    return "https://repo1.maven.org/maven2"


def coordinates(package: str) -> tuple[str, str]:
    group, sep, artifact = package.partition(":")
    if not sep or not group or not artifact or ":" in artifact:
        raise SourceError(f"maven package {package!r}: expected groupId:artifactId")
    return group, artifact


def metadata_url(base: str, package: str) -> str:
    group, artifact = coordinates(package)
    return f"{base}/{group.replace('.', '/')}/{artifact}/maven-metadata.xml"


async def fetch(http: RegistryHttp, source: SdkSource) -> list[Release]:
    url = metadata_url(root(source, default_base), source.package)
    fetched = await get(http, url, headers={"Accept": "application/xml, text/xml"})
    listed = parse_metadata(fetched.body, url)
    return ordered(REGISTRY, [release(REGISTRY, v, None) for v in listed])


def parse_metadata(body: bytes, url: str) -> list[str]:
    # Metadata never has a DTD, and entity tricks have no business here: the one loader refuses both.
    try:
        document = untrusted.xml_document(body, url, limits=untrusted.ANSWER)
    except ValueError as exc:
        raise SourceError(str(exc)) from exc
    if _local(document.tag) != "metadata":
        raise SourceError(f"{url}: unexpected response: root element <{_local(document.tag)}>, expected <metadata>")
    versions = _child(document, "versioning")
    versions = _child(versions, "versions") if versions is not None else None
    if versions is None:
        raise SourceError(f"{url}: unexpected response: field metadata.versioning.versions is missing")
    found = []
    for element in versions:
        if _local(element.tag) != "version":
            continue
        text = (element.text or "").strip()
        if not text:
            raise SourceError(f"{url}: unexpected response: field metadata.versioning.versions.version is empty")
        found.append(text)
    return list(dict.fromkeys(found))


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]  # metadata may carry the Maven namespace


def _child(element: ET.Element, name: str) -> ET.Element | None:
    return next((c for c in element if _local(c.tag) == name), None)
