"""The source stage, first of a suite run: the server's code, checked out from git at the configured ref into the
run's folder (a path server has its tree already and skips it). Next comes the build stage (`suites/build/`)."""
