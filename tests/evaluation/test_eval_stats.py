"""The paired statistics against values computed by hand."""

from __future__ import annotations

import pytest

from watcher.evaluation.stats import (
    binomial_tail_ge,
    bootstrap_mean_interval,
    mcnemar_exact,
    paired_counts,
    sign_test,
)


def test_binomial_tails_of_a_fair_coin():
    assert binomial_tail_ge(3, 3) == 1 / 8
    assert binomial_tail_ge(5, 6) == 7 / 64  # C(6,5) + C(6,6) = 7
    assert binomial_tail_ge(0, 4) == 1.0
    assert binomial_tail_ge(5, 4) == 0.0


def test_sign_test_two_and_one_sided():
    assert sign_test(3, 0) == (0.25, 0.125)
    assert sign_test(0, 0) == (1.0, 1.0)
    assert sign_test(1, 1) == (1.0, 0.75)  # two-sided capped at 1; P(X >= 1 | n=2) = 3/4


def test_exact_mcnemar_counts_only_the_discordant_pairs():
    pairs = [(True, False)] * 5 + [(False, True)] + [(True, True)] * 10 + [(False, False)] * 3
    test = mcnemar_exact(pairs)
    assert (test.pairs, test.baseline_only, test.candidate_only) == (19, 5, 1)
    assert test.p_two_sided == pytest.approx(14 / 64)
    assert test.p_worse == pytest.approx(7 / 64)
    better = mcnemar_exact([(False, True)] * 5 + [(True, False)])
    assert better.p_worse == pytest.approx(63 / 64)  # a candidate that does better is not "worse"


def test_five_of_five_lost_is_the_smallest_p_five_trials_can_give():
    test = mcnemar_exact([(True, False)] * 5)
    assert (test.p_two_sided, test.p_worse) == (1 / 16, 1 / 32)


def test_paired_counts_mean_delta_and_sign_test():
    counts = paired_counts([(1, 1), (1, 3), (2, 2), (0, 2)])
    assert counts.mean_delta == 1.0
    assert (counts.increased, counts.decreased) == (2, 0)
    assert counts.sign_p == 0.5  # 2 * P(X >= 2 | n=2) = 2 * 1/4


def test_bootstrap_interval_by_hand():
    assert bootstrap_mean_interval([1.0, 1.0, 1.0]) == (1.0, 1.0)
    # Resampling [0, 2] gives means 0 (1/4), 1 (1/2), 2 (1/4): the 95 % percentile interval is [0, 2].
    assert bootstrap_mean_interval([0.0, 2.0]) == (0.0, 2.0)
    # Seeded: the same data give the same interval.
    data = [0.0, 1.0, 3.0, 1.0, 2.0]
    assert bootstrap_mean_interval(data) == bootstrap_mean_interval(data)
    low, high = bootstrap_mean_interval(data)
    assert low <= sum(data) / len(data) <= high
