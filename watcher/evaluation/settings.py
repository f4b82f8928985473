"""A server's `evaluation` section: its task file, the model that runs it, the budget and what counts as a
regression."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from watcher.core.configfile import StrictModel


class EvaluationBudget(StrictModel):
    max_trials: int | None = Field(default=None, ge=2)
    """Trials (model conversations, both versions together) one evaluation may run; None: no cap."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Input + output tokens (from the API's usage fields) one evaluation may spend; None: no cap."""


class EvaluationThresholds(StrictModel):
    """What makes a task a regression (candidate against baseline, same tasks, same model)."""

    success_drop: float = Field(default=0.4, gt=0, le=1)
    """A drop of the task's success rate by at least this much (0.4 = 2 of 5 trials)."""
    tool_calls_ratio: float | None = Field(default=1.5, gt=1)
    """Mean tool calls per trial at least this many times the baseline's; None: not judged."""
    tokens_ratio: float | None = Field(default=1.5, gt=1)
    """Mean input + output tokens per trial at least this many times the baseline's; None: not judged."""
    tool_errors_increase: float | None = Field(default=0.5, gt=0)
    """Mean tool errors per trial up by at least this much; None: not judged."""
    no_tool_calls: bool = True
    """A task whose right behaviour is to call no tool, now calling one, is a regression."""
    alpha: float = Field(default=0.05, gt=0, lt=1)
    """Significance level of the overall paired test on success (exact McNemar, one-sided)."""


class Evaluation(StrictModel):
    """The model-behaviour stage of one server: its task file and the model that runs it."""

    tasks: str
    """The task file, relative to the server's `path` (else to the config file's folder)."""
    provider: Literal["anthropic", "openai"] = "anthropic"
    model: str = Field(min_length=1)
    api_key_env: str | None = None
    """The variable holding the provider's API key; None: ANTHROPIC_API_KEY / OPENAI_API_KEY."""
    api_url: str | None = None
    """Base URL of the provider's API (proxies, local model servers, tests); None: the SDK's default."""
    trials: int = Field(default=5, ge=1, le=100)
    max_steps: int = Field(default=6, ge=1, le=50)
    max_tokens: int = Field(default=1024, ge=1)
    """max_tokens of each model response."""
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_retries: int = Field(default=2, ge=0, le=10)
    """The provider SDK's own retries (429, 5xx, connection errors; it honours Retry-After)."""
    timeout_seconds: float = Field(default=120, gt=0)
    """One provider request, and one tool call against the server under test."""
    budget: EvaluationBudget = Field(default_factory=EvaluationBudget)
    thresholds: EvaluationThresholds = Field(default_factory=EvaluationThresholds)

    def key_env(self) -> str:
        return self.api_key_env or ("ANTHROPIC_API_KEY" if self.provider == "anthropic" else "OPENAI_API_KEY")
