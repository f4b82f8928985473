"""Acting where the news is read: buttons on the watcher's Slack messages, their modals, and `/mcp-watcher`,
with Bolt for Python, over Socket Mode or signed HTTP.

buttons   the buttons on alerts, suite results and the digest, and the Accept… and Mute… modals
app       the Bolt app: what each click, submission and slash command does (ack first, work after)
connect   Socket Mode, or POST /slack/events with Slack's v0 signature on the service's clock
gate      who may act on a team's server: its channel's members or its user group
records   actions, accepts and mutes in the state database
accepts   Slack's accepts and the accept file's as one list to the diff (the file wins)
summary   what Slack did, for `status`, the run page and `/mcp-watcher status|accepted`
"""
