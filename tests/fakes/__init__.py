"""Fakes of outside services. The GitHub ones are here; the registries, Slack and the model provider are in
bench/fakes/ (the benchmarks use them too, and import nothing from tests/): this package's path includes
that folder, so `tests.fakes.slack_server` and the rest import as before."""

from pathlib import Path

__path__.append(str(Path(__file__).resolve().parents[2] / "bench" / "fakes"))
