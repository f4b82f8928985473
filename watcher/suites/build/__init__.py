"""The build stage, after the source stage (`suites/source/`): the server's environment under one SDK version
(an SDK install or the team's declared build, inside the run boundary, then sealed read-only), the node and
Python toolchains it uses, and the pre-builds the service starts when a version is seen. Next comes the run
stage (`suites/run/`), which starts the server from this environment."""
