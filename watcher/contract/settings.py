"""The `contract` section of a team or a server: severity overrides per contract rule."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from watcher.core.configfile import StrictModel


class ContractSettings(StrictModel):
    levels: dict[str, Literal["breaking", "models", "info", "ignore"]] = Field(default_factory=dict)
    """Severity overrides: contract rule id → the grade its changes get (the original is kept beside)."""

    @field_validator("levels")
    @classmethod
    def _known_rules(cls, value: dict[str, str]) -> dict[str, str]:
        from watcher.contract.rules import RULES  # late: the config loads without the contract package

        unknown = sorted(rule for rule in value if rule not in RULES)
        if unknown:
            raise ValueError(f"unknown contract rule id(s) {', '.join(unknown)} (see docs/contract-rules.md)")
        return value
