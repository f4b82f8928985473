"""Readiness for the next spec revision: the conformance suite as a watched source, its new requirement sets
run against every server (things to fix, not regressions), and the countdown per server.

suite     the suite's npm package polled like an SDK; each new version installed once and read for its sets
plan      which sets are new, the revision (and release date) each counts toward, the SDK version to run on
judge     one set against one server's URL (by name, or the way the CLI allows), failures with spec links
cycle     poll → inspect → readiness runs for every server → stored results → notices on change
view      the per-revision, per-server summary the page, /api/status and the digest show
notices   the threaded per-team notice and the operators' candidate-suite notice
"""
