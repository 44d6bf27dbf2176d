"""The statistics every evaluation here shares: a seeded percentile bootstrap, the exact McNemar test
and the exact (Clopper-Pearson) interval of a proportion.

Both `ace-eval e2e` (tau2 pass^1, paired per task) and `ace-eval bench` (accuracy, paired per item)
compare two arms run on the same units. The paired bootstrap resamples units with the same indices
for both arms (so what the arms share, such as a unit's difficulty, cancels out); McNemar's exact
test asks whether the discordant pairs (right in one arm only) split more unevenly than a fair coin
would.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import comb, exp, lgamma, log

import numpy as np

from ace.errors import UsageError

__all__ = ["binomial_exact_ci", "bootstrap_ci", "mcnemar_exact_p"]


def bootstrap_ci(
    per_unit: Sequence[float], *, n_bootstrap: int = 2000, seed: int = 0, confidence: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of `per_unit` values, resampling units.

    The resampled indices depend only on `seed`, `n_bootstrap` and the number of units, so two
    calls over the same units in the same order resample the same units: the interval of a paired
    difference is this function over the per-unit differences. Raises UsageError for no unit.
    """
    if len(per_unit) == 0:
        raise UsageError("bootstrap_ci needs at least one value")
    resamples = np.random.default_rng(seed).integers(0, len(per_unit), size=(n_bootstrap, len(per_unit)))
    means = np.asarray(per_unit, dtype=float)[resamples].mean(axis=1)
    tail = (1.0 - confidence) / 2 * 100
    return float(np.percentile(means, tail)), float(np.percentile(means, 100 - tail))


def mcnemar_exact_p(only_b: int, only_a: int) -> float:
    """Two-sided exact McNemar p-value for `only_b` pairs right in arm B alone and `only_a` pairs
    right in arm A alone: the binomial probability, under p = 1/2, of a split at least as uneven as
    the one seen, `min(1, 2 * P(X <= min(only_a, only_b)))` with X ~ Binomial(only_a + only_b, 1/2).
    With no discordant pair the test has nothing to say and the p-value is 1.0. Raises UsageError
    for a negative count."""
    if only_b < 0 or only_a < 0:
        raise UsageError(f"discordant pair counts must be >= 0, got {only_b} and {only_a}")
    n = only_b + only_a
    if n == 0:
        return 1.0
    tail = sum(comb(n, k) for k in range(min(only_a, only_b) + 1))
    return min(1.0, 2 * tail / 2**n)


def binomial_exact_ci(successes: int, trials: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper-Pearson) interval of a proportion seen as `successes` of `trials`: the
    proportions p for which the count seen is not in either tail of Binomial(trials, p) beyond
    (1 - confidence) / 2. It never undercovers, so a small count gets an honest width (0 of 20:
    [0, 0.168]). Raises UsageError unless 0 <= successes <= trials and trials >= 1."""
    if trials < 1 or not 0 <= successes <= trials:
        raise UsageError(f"need 0 <= successes <= trials and trials >= 1, got {successes} of {trials}")
    tail = (1.0 - confidence) / 2
    low = 0.0 if successes == 0 else _solve(lambda p: 1.0 - _binomial_cdf(successes - 1, trials, p) < tail)
    high = 1.0 if successes == trials else _solve(lambda p: _binomial_cdf(successes, trials, p) > tail)
    return low, high


def _binomial_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), summed in log space so that large n cannot overflow."""
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 1.0 if k >= n else 0.0
    log_p, log_q = log(p), log(1.0 - p)
    log_n = lgamma(n + 1)
    return min(
        1.0, sum(exp(log_n - lgamma(i + 1) - lgamma(n - i + 1) + i * log_p + (n - i) * log_q) for i in range(k + 1))
    )


def _solve(below: Callable[[float], bool]) -> float:
    """The p in [0, 1] where the monotone predicate `below(p)` turns from True to False (bisection)."""
    low, high = 0.0, 1.0
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if below(middle) else (low, middle)
    return (low + high) / 2
