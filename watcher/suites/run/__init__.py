"""The run stage, after the build stage (`suites/build/`): the server started and stopped inside the isolation
boundary (`watcher/boundary/`: a bubblewrap room with no network but a loopback relay, scrubbed environment
variables, every process tracked and reaped), with the server's granted secrets. While the server runs, the
judge stage (`suites/judge/`) exercises it."""
