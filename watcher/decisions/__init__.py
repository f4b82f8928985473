"""What people decide about the watcher's findings, without Slack's app: the buttons our messages carry, the
actions, accepts and mutes recorded, and the accepts a diff reads. The Bolt app (`slackapp`) and the stages
both use it; it imports neither."""
