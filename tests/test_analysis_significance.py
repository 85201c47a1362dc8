"""McNemar's exact test and the bootstraps, on cases with known answers."""
from __future__ import annotations

import math

import numpy as np
import pytest

from nlivis.analysis.significance import (bootstrap_accuracy, discordant_counts, mcnemar_exact,
                                          paired_bootstrap)


def test_mcnemar_all_discordant_one_way():
    assert mcnemar_exact(10, 0) == pytest.approx(2 * 0.5 ** 10)
    assert mcnemar_exact(0, 10) == pytest.approx(0.001953125)


def test_mcnemar_balanced_is_one():
    assert mcnemar_exact(7, 7) == 1.0
    assert mcnemar_exact(0, 0) == 1.0


def test_mcnemar_against_binomial_sum():
    # b=8, c=2: p = 2 * sum_{k<=2} C(10,k) / 2^10 = 2 * 56 / 1024
    assert mcnemar_exact(8, 2) == pytest.approx(2 * (1 + 10 + 45) / 1024)


def test_mcnemar_is_scipy_stats_binomial():
    from scipy.stats import binom

    for b, c in ((8, 2), (40, 60), (123, 310), (480, 520), (3, 3000), (0, 7), (1, 1)):
        expected = float(min(1.0, 2.0 * binom.cdf(min(b, c), b + c, 0.5)))
        assert mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-9, abs=1e-300)
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 3)


def test_discordant_counts():
    assert discordant_counts([1, 1, 0, 0, 1], [1, 0, 1, 0, 0]) == (2, 1)
    with pytest.raises(ValueError, match="different lengths"):
        discordant_counts([1, 0], [1])


def test_paired_bootstrap_degenerate_and_reproducible():
    always = paired_bootstrap([True] * 50, [False] * 50)
    assert (always.estimate, always.low, always.high) == (1.0, 1.0, 1.0)
    rng = np.random.default_rng(3)
    a, b = rng.random(400) < 0.8, rng.random(400) < 0.7
    first, second = paired_bootstrap(a, b, seed=5), paired_bootstrap(a, b, seed=5)
    assert first == second
    assert first.low <= first.estimate <= first.high


def test_paired_bootstrap_matches_normal_approximation():
    # 200 pairs only A right, 100 only B right, 700 tied: difference 0.1, sd of the per-pair
    # difference sqrt(0.3 - 0.01), so the 95% interval is about 0.1 ± 1.96 * 0.5385 / sqrt(1000).
    a = np.array([True] * 200 + [False] * 100 + [True] * 350 + [False] * 350)
    b = np.array([False] * 200 + [True] * 100 + [True] * 350 + [False] * 350)
    interval = paired_bootstrap(a, b, resamples=20_000)
    half_width = 1.96 * math.sqrt(0.3 - 0.01) / math.sqrt(1000)
    assert interval.estimate == pytest.approx(0.1)
    assert interval.low == pytest.approx(0.1 - half_width, abs=0.003)
    assert interval.high == pytest.approx(0.1 + half_width, abs=0.003)


def test_bootstrap_accuracy_interval():
    correct = np.array([True] * 800 + [False] * 200)
    interval = bootstrap_accuracy(correct, resamples=20_000)
    half_width = 1.96 * math.sqrt(0.8 * 0.2 / 1000)
    assert interval.estimate == pytest.approx(0.8)
    assert interval.low == pytest.approx(0.8 - half_width, abs=0.003)
    assert interval.high == pytest.approx(0.8 + half_width, abs=0.003)
    with pytest.raises(ValueError, match="no pairs"):
        bootstrap_accuracy([])


def test_holm_and_benjamini_hochberg_on_hand_computed_p_values():
    """p = (0.01, 0.04, 0.03, 0.005), m = 4. Holm, sorted 0.005, 0.01, 0.03, 0.04: × 4, 3, 2, 1 = 0.02, 0.03,
    0.06, 0.04 → running maximum 0.02, 0.03, 0.06, 0.06. BH: × 4/1, 4/2, 4/3, 4/4 = 0.02, 0.02, 0.04, 0.04 →
    running minimum from the top leaves them. Unadjusted all four are below 0.05; Holm keeps two."""
    from nlivis.analysis.significance import benjamini_hochberg, holm_adjusted

    p = [0.01, 0.04, 0.03, 0.005]
    assert holm_adjusted(p) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert benjamini_hochberg(p) == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert sum(q < 0.05 for q in holm_adjusted(p)) == 2
    assert holm_adjusted([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert benjamini_hochberg([0.2, 0.01, 0.04]) == pytest.approx([0.2, 0.03, 0.06])
    assert holm_adjusted([]) == [] and benjamini_hochberg([]) == []


def test_wilson_interval_hand_computed_and_exact_at_the_edges():
    """z = 1.959964 (95%), z² = 3.841459. 0 of 10: the upper end is z² / (n + z²) = 3.841459 / 13.841459 =
    0.277533; 10 of 10 mirrors it, lower end n / (n + z²) = 0.722467. 5 of 10: centre (0.5 + z²/20) / (1 + z²/10)
    = 0.5, half-width z·√(0.025 + z²/400) / (1 + z²/10) = 0.364592 / 1.384146 = 0.263407 → [0.236593, 0.763407].
    The edge ends are exactly 0.0 and 1.0: the closed form gave 4.9e-17 for 0 of 3 and 0.9999999999999999 for
    10 of 10 in floating point."""
    from nlivis.analysis.significance import wilson_interval

    assert wilson_interval(0, 10) == (0.0, pytest.approx(0.277533, abs=1e-6))
    assert wilson_interval(10, 10) == (pytest.approx(0.722467, abs=1e-6), 1.0)
    assert wilson_interval(5, 10) == (pytest.approx(0.236593, abs=1e-6), pytest.approx(0.763407, abs=1e-6))
    for count in range(1, 300):
        low, _ = wilson_interval(0, count)
        _, high = wilson_interval(count, count)
        assert low == 0.0 and high == 1.0, count
        assert 0.0 < wilson_interval(1, count)[0] and wilson_interval(count - 1, count)[1] < 1.0
    assert all(math.isnan(end) for end in wilson_interval(0, 0))
    with pytest.raises(ValueError):
        wilson_interval(11, 10)
