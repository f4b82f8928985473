"""Delivery of notices, and the message layer every capability builds them with.

delivery  the outbox sent to Slack (Web API or incoming webhook) or the console; Slack's refusals and rate limits
blocks    Slack's limits, escaping, clipping, verdict icons and the Block Kit builders
keys      every notice, event and run-trigger key, one function per format

Each capability turns its own facts into notices in its ``notices`` module (``sources.notices`` for new
releases, ``spec.notices``, ``suites.notices``, ``digest.notices``); notify depends on none of them.
"""
