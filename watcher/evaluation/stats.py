"""Paired statistics for two versions run on the same tasks: exact McNemar / sign test, bootstrap interval.

Exact binomial tails with `math.comb` (integers, no floating error until the last division); the
bootstrap is seeded so the same trials always give the same interval.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass


def binomial_tail_ge(k: int, n: int) -> float:
    """P(X >= k) for X ~ Binomial(n, 1/2)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    outcomes: int = 2**n  # typeshed types int ** int as Any (a negative exponent gives a float)
    return sum(math.comb(n, i) for i in range(k, n + 1)) / outcomes


def sign_test(worse: int, better: int) -> tuple[float, float]:
    """Exact sign test on the pairs that differ: (two-sided p, one-sided p that "worse" dominates).

    `worse` pairs moved one way, `better` the other; ties are left out by the caller. This is the
    exact McNemar test when the pairs are binary outcomes (worse = baseline success, candidate failure).
    """
    n = worse + better
    if n == 0:
        return 1.0, 1.0
    two_sided = min(1.0, 2 * binomial_tail_ge(max(worse, better), n))
    return two_sided, binomial_tail_ge(worse, n)


@dataclass(frozen=True)
class McNemar:
    pairs: int
    baseline_only: int
    """Pairs where the baseline succeeded and the candidate failed."""
    candidate_only: int
    p_two_sided: float
    p_worse: float
    """One-sided p that the candidate is worse."""


def mcnemar_exact(pairs: Sequence[tuple[bool, bool]]) -> McNemar:
    """Exact McNemar test on paired binary outcomes (baseline, candidate)."""
    b = sum(1 for old, new in pairs if old and not new)
    c = sum(1 for old, new in pairs if new and not old)
    two, worse = sign_test(b, c)
    return McNemar(len(pairs), b, c, two, worse)


@dataclass(frozen=True)
class PairedCounts:
    pairs: int
    mean_delta: float
    """Mean of candidate - baseline over the pairs."""
    ci_low: float
    ci_high: float
    sign_p: float
    """Two-sided exact sign test on the non-zero differences."""
    increased: int
    decreased: int


def bootstrap_mean_interval(
    deltas: Sequence[float], confidence: float = 0.95, resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of `deltas` (seeded: reproducible)."""
    if not deltas:
        return math.nan, math.nan
    rng = random.Random(seed)
    n = len(deltas)
    means = sorted(sum(rng.choices(deltas, k=n)) / n for _ in range(resamples))
    tail = (1 - confidence) / 2
    low = means[max(0, math.floor(tail * resamples))]
    high = means[min(resamples - 1, math.ceil((1 - tail) * resamples) - 1)]
    return low, high


def paired_counts(pairs: Sequence[tuple[float, float]], seed: int = 0) -> PairedCounts:
    """Paired comparison of a count (tool calls, tokens, tool errors): mean delta, its interval, sign test."""
    deltas = [new - old for old, new in pairs]
    up = sum(1 for d in deltas if d > 0)
    down = sum(1 for d in deltas if d < 0)
    low, high = bootstrap_mean_interval(deltas, seed=seed)
    mean = sum(deltas) / len(deltas) if deltas else math.nan
    return PairedCounts(len(deltas), mean, low, high, sign_test(up, down)[0], up, down)
