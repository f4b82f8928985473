"""The run stage, after the build stage (`suites/build/`): the server started and stopped inside the isolation
boundary (a bubblewrap room with no network but a loopback relay, scrubbed environment variables, the server's
granted secrets, every process tracked and reaped). The boundary and the child-command helpers live here and the
build and source stages use them too. While the server runs, the judge stage (`suites/judge/`) exercises it."""
