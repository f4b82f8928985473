"""The digest's four sections, one module each: what each gathers from the state for one team.

changes   1 · what is on its way out (registry rows, spec changes since the last digest)
exposure  2 · where the team is affected (evidence that a server uses a deprecated feature)
releases  3 · the team's SDK releases of the period with each server's suite verdict
outlook   4 · what is coming (next spec revision, SDK-beta window, next earliest removal)
readiness 4 · per upcoming revision: servers ready, what the team has to fix (watcher.readiness)
"""
