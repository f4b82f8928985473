"""Loopback stand-ins for the outside services (package registries, Slack, a model provider), shared by the
benchmarks and the tests.

They live here, not in tests/, because a benchmark imports only the product and bench/: renaming a test
helper can never break one. The tests import them as `tests.fakes.<module>` (tests/fakes/__init__.py adds
this folder to that package's path), beside the GitHub fakes only the tests use.
"""
