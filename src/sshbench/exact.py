"""The field's numerics, from SciPy, each imported inside the function that needs it, so that `sshbench --help` and
the commands that never decide or bound anything do not load SciPy (`scipy.special`'s distribution functions where
they serve: `scipy.stats` takes three times as long to import, docs/BENCHMARKS.md, bench_numerics.py).

Student's t for the racing tests on paired log ratios (measure/racing.py) and the sweep's intervals, the exact
(Clopper-Pearson) interval of a proportion for a failure rate's bound (`interop`, `load`) and a burst's drops, and
Fisher's exact test of two proportions, and the distribution-free interval of a percentile from order statistics
(Conover, *Practical Nonparametric Statistics*, ch. 3.2: the binomial distribution of how many samples fall below
it; `compare` of load steps' p50 and p99). Tested against published tables and hand-computed values
(tests/ground/test_exact.py, tests/analyse/test_interop_bounds.py, tests/analyse/test_load_steps.py).
"""

from __future__ import annotations

import math

CONFIDENCE = 0.95


def t_sf(t: float, df: float) -> float:
    """Return P(T > t) for Student's t with `df` degrees of freedom."""
    if df <= 0:
        raise ValueError("degrees of freedom must be positive")
    from scipy.special import stdtr  # Student's t distribution function

    return float(stdtr(df, -t))


def t_ppf(p: float, df: float) -> float:
    """Return the quantile t with P(T <= t) = p."""
    if not 0.0 < p < 1.0:
        raise ValueError("p must lie strictly between 0 and 1")
    if df <= 0:
        raise ValueError("degrees of freedom must be positive")
    from scipy.special import stdtrit  # its inverse

    return float(stdtrit(df, p))


def upper_bound(failures: int, trials: int, confidence: float = CONFIDENCE) -> float:
    """Return the one-sided exact (Clopper-Pearson) upper bound of a rate after `failures` of `trials`: the rate
    at which `failures` or fewer would be seen with probability 1 - confidence (1 with nothing to go on)."""
    if trials <= 0 or failures >= trials:
        return 1.0
    from scipy.special import betaincinv  # the beta distribution's quantile: Clopper-Pearson's bound

    return float(betaincinv(failures + 1, trials - failures, confidence))


def interval(k: int, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Return the exact (Clopper-Pearson) two-sided interval of a proportion of k in n (0 of n included)."""
    if n <= 0:
        return 0.0, 1.0
    tail = 1 - (1 - confidence) / 2
    low = 0.0 if k == 0 else 1.0 - upper_bound(n - k, n, tail)
    return low, upper_bound(k, n, tail)


def fisher(a: int, n1: int, b: int, n2: int) -> float:
    """Return the two-sided p-value of Fisher's exact test that a of n1 and b of n2 come from one proportion."""
    from scipy.stats import fisher_exact

    return float(fisher_exact([[a, n1 - a], [b, n2 - b]], alternative="two-sided").pvalue)


def binomial_cdf(k: int, n: int, p: float) -> float:
    """Return P(B <= k) for B ~ Binomial(n, p) (0 below 0, 1 from n on)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    from scipy.special import bdtr  # the binomial distribution function

    return float(bdtr(k, n, p))


def quantile_ranks(n: int, q: float, confidence: float = CONFIDENCE) -> tuple[int | None, int | None, float]:
    """Return 1-based ranks (lo, hi) of n sorted samples bracketing their q-quantile with at least `confidence`, and
    the interval's real coverage; an end too few samples give (a p99 from fewer than about 370) is None."""
    if not 0.0 < q < 1.0 or n < 1:
        raise ValueError("need 0 < q < 1 and at least one sample")
    tail = (1 - confidence) / 2
    lo = 0  # ranks below the quantile with at most `tail` chance: X_(lo) <= quantile
    while lo < n and binomial_cdf(lo, n, q) <= tail:
        lo += 1
    hi = n + 1  # X_(hi) >= quantile with at least 1 - tail
    while hi > 1 and binomial_cdf(hi - 2, n, q) >= 1 - tail:
        hi -= 1
    coverage = binomial_cdf(hi - 1, n, q) - binomial_cdf(lo - 1, n, q)
    return (lo or None), (hi if hi <= n else None), coverage


def samples_for_quantile(q: float, confidence: float = CONFIDENCE) -> int:
    """Return the fewest samples whose interval of the q-quantile has both ends at `confidence`."""
    tail = (1 - confidence) / 2
    return math.ceil(math.log(tail) / math.log(max(q, 1 - q)))
