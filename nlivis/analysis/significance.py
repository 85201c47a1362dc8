"""Is model A really better than model B on the same pairs? McNemar's exact test and a paired bootstrap.

Both work on paired per-pair correctness, because two models scored on the same dev set are not
independent samples: only the pairs where exactly one model is right carry evidence.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

DEFAULT_RESAMPLES = 10_000
"""Bootstrap resamples: enough for a stable 95% interval's ends at the third decimal."""
DEFAULT_SEED = 0


@dataclass(frozen=True)
class Interval:
    """A bootstrap percentile interval of a statistic (accuracy or accuracy difference)."""

    estimate: float
    low: float
    high: float
    confidence: float
    resamples: int
    seed: int


def mcnemar_exact(only_a_correct: int, only_b_correct: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts b (only A right) and c (only B right).

    Under the null each discordant pair is a fair coin: p = min(1, 2 · P[Binomial(b + c, ½) ≤ min(b, c)]).
    No discordant pairs means no evidence either way: p = 1.
    """
    if only_a_correct < 0 or only_b_correct < 0:
        raise ValueError("discordant counts must be non-negative")
    discordant = only_a_correct + only_b_correct
    if discordant == 0:
        return 1.0
    # scipy.special's binomial CDF (public, and the same p-values as scipy.stats.binom.cdf to 1e-11 relative),
    # not scipy.stats, whose import was 1.5-2 CPU s of the Ablations page's first visit after a launch
    from scipy.special import bdtr

    return float(min(1.0, 2.0 * bdtr(min(only_a_correct, only_b_correct), discordant, 0.5)))


def holm_adjusted(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error control, valid under any dependence between the
    tests): sorted ascending, p_(i) × (m − i + 1) for i = 1..m, made non-decreasing, capped at 1; returned
    in the input order. A test is significant at level α when its adjusted p is below α."""
    values = np.asarray(p_values, dtype=float)
    m = values.size
    if m == 0:
        return []
    order = np.argsort(values, kind="stable")
    stepped = np.minimum(1.0, np.maximum.accumulate(values[order] * (m - np.arange(m))))
    adjusted = np.empty(m)
    adjusted[order] = stepped
    return adjusted.tolist()


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini–Hochberg adjusted p-values (q-values; false-discovery-rate control for independent or
    positively dependent tests): sorted ascending, p_(i) × m / i, made non-decreasing from the largest down,
    capped at 1; returned in the input order."""
    values = np.asarray(p_values, dtype=float)
    m = values.size
    if m == 0:
        return []
    order = np.argsort(values, kind="stable")
    scaled = values[order] * m / np.arange(1, m + 1)
    stepped = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    adjusted = np.empty(m)
    adjusted[order] = stepped
    return adjusted.tolist()


def within_seed_range(accuracy: float, seed_accuracies: Sequence[float]) -> bool:
    """Whether a checkpoint's accuracy is no worse than the worst of one config's seeds on the same pairs: some seed
    of that config alone does as badly, so a loss that small need not come from what else changed. Unlike the
    Ablations page's rule (a difference no larger than the seeds' range, `analysis.ablations.compare_variants`) it
    does not depend on which seed is the reference, nor grow more lenient with every seed added. (1e-9 absorbs the
    rounding of accuracies counted two ways.)"""
    return accuracy >= min(seed_accuracies) - 1e-9


def discordant_counts(correct_a: Sequence[bool], correct_b: Sequence[bool]) -> tuple[int, int]:
    """(pairs only A got right, pairs only B got right)."""
    a, b = _as_bool(correct_a), _as_bool(correct_b)
    if a.shape != b.shape:
        raise ValueError(f"paired correctness of different lengths: {a.size} and {b.size}")
    return int(np.sum(a & ~b)), int(np.sum(~a & b))


def _as_bool(values: Sequence[bool]) -> np.ndarray:
    return np.asarray(values, dtype=bool).reshape(-1)


def percentile_interval(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    """The central `confidence` share of bootstrap samples: (low, high) percentiles."""
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(samples, [tail, 100.0 - tail])
    return float(low), float(high)


def paired_bootstrap(correct_a: Sequence[bool], correct_b: Sequence[bool],
                     resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                     confidence: float = 0.95) -> Interval:
    """Percentile interval of accuracy(A) − accuracy(B) over pairs resampled with replacement.

    A resample's difference depends only on how many drawn pairs fall into "only A right", "only B
    right" and "both or neither", so the resamples are drawn as multinomial counts of those three
    groups — the same distribution as resampling indices, in constant memory.
    """
    a, b = _as_bool(correct_a), _as_bool(correct_b)
    if a.shape != b.shape:
        raise ValueError(f"paired correctness of different lengths: {a.size} and {b.size}")
    if a.size == 0:
        raise ValueError("no pairs to bootstrap")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    n = a.size
    only_a, only_b = discordant_counts(a, b)
    shares = np.array([only_a, only_b, n - only_a - only_b], dtype=float) / n
    counts = np.random.default_rng(seed).multinomial(n, shares, size=resamples)
    differences = (counts[:, 0] - counts[:, 1]) / n
    low, high = percentile_interval(differences, confidence)
    return Interval((only_a - only_b) / n, low, high, confidence, resamples, seed)


def bootstrap_accuracy(correct: Sequence[bool], resamples: int = DEFAULT_RESAMPLES,
                       seed: int = DEFAULT_SEED, confidence: float = 0.95) -> Interval:
    """Percentile interval of one model's accuracy (resampled correct counts are binomial)."""
    values = _as_bool(correct)
    if values.size == 0:
        raise ValueError("no pairs to bootstrap")
    n = values.size
    accuracy = float(values.mean())
    samples = np.random.default_rng(seed).binomial(n, accuracy, size=resamples) / n
    low, high = percentile_interval(samples, confidence)
    return Interval(accuracy, low, high, confidence, resamples, seed)


def wilson_interval(correct: int, count: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of an accuracy `correct / count`: closed form, inside [0, 1] and sensible
    for the small per-tag counts of an error analysis (23 CONDITIONAL pairs), where the normal
    approximation is not. (nan, nan) when `count` is 0. At the edges the closed form's end is exact
    mathematically but not in floating point (0 of 3 gave a lower end of 4.9e-17, 10 of 10 an upper end of
    0.9999999999999999), so 0 successes give exactly 0.0 and `count` of `count` exactly 1.0."""
    if count <= 0:
        return float("nan"), float("nan")
    if not 0 <= correct <= count:
        raise ValueError(f"successes must be between 0 and the count {count}, got {correct}")
    from scipy.special import ndtri  # what scipy.stats.norm.ppf computes, without scipy.stats's second to import

    z = float(ndtri(0.5 + confidence / 2))
    share = correct / count
    centre = share + z * z / (2 * count)
    spread = z * np.sqrt(share * (1 - share) / count + z * z / (4 * count * count))
    denominator = 1 + z * z / count
    low = 0.0 if correct == 0 else max(0.0, (centre - spread) / denominator)
    high = 1.0 if correct == count else min(1.0, (centre + spread) / denominator)
    return float(low), float(high)
