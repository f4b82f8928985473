"""The judge stage, last of a suite run, after the run stage (`suites/run/`) started the server: the conformance
suite per requirement set against the expected failures, the contract snapshot diffed against the baseline and
steered by the team's levels and accept entries, the deprecation warnings in the server's logs, and the committed
baselines these compare with. What follows a finished run (the evaluation) is wired above `watcher.suites`."""
