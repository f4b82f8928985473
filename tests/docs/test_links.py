"""Every link in README.md and docs/*.md to a local file resolves, and so does its #anchor."""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

from tests.docs.helpers import ROOT, anchors, doc_pages, links


def test_every_local_link_resolves():
    problems = []
    for page in doc_pages():
        name = page.relative_to(ROOT).as_posix()
        for link in links(page):
            parts = urlsplit(link.target)
            if parts.scheme or parts.netloc:
                continue  # a web address: not checked (tests stay off the network)
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            relative = target.relative_to(ROOT).as_posix() if target.is_relative_to(ROOT) else str(target)
            if not target.exists():
                problems.append(f"{name}:{link.line}: {link.target} → {relative} does not exist")
                continue
            if parts.fragment and target.suffix == ".md" and parts.fragment not in anchors(target):
                problems.append(f"{name}:{link.line}: {link.target} → no heading #{parts.fragment} in {relative}")
    assert not problems, "\n".join(problems)


def test_the_pages_do_link_somewhere():
    # Guard against a parser change that silently finds no links at all.
    assert sum(len(links(page)) for page in doc_pages()) > 20
