"""The spec side: the deprecated-features registry, spec revisions, the release calendar, removal dates.

See README.md in this folder. Entry points: ``watch.poll_spec`` (service), ``commands.register`` (CLI),
``removal.compute_deprecations`` and ``calendar.projected_releases`` (pure, for the digest).
"""
