"""The weekly deprecation digest of each team, built from the state only (no network).

model      the content as plain data (``Digest`` and its parts)
sections/  one module per section: what each gathers for one team and period
build      ``build_digest``: the four sections for one team and period
document   the digest laid out once (parts, items, styled spans) for every rendering
slack      Block Kit messages within Slack's limits (split, never cut)
markdown   Markdown and HTML previews
timeline   the timeline picture (PNG)
notices    the digest as outbox notices (parent message with the picture, thread replies)
schedule   the weekly job: when a digest is due, queueing it once per team and ISO week
commands   ``mcp-watcher digest``
"""
