"""Pure statistics: median with a distribution-free confidence interval, IQR, MAD outliers, ties.

The CI of the median uses order statistics and the binomial distribution (no normality assumed),
as in Conover, *Practical Nonparametric Statistics*, ch. 3.2. Outliers use the modified Z-score
of Iglewicz and Hoaglin (1993): |0.6745 (x - median) / MAD| > 3.5.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

OUTLIER_Z = 3.5
CONFIDENCE = 0.95
MIN_RANKED = 3  # fewest samples a rank, a winner or a --fail-if verdict is drawn from


@dataclass(frozen=True)
class Summary:
    """Descriptive statistics of one scenario's successful samples."""

    n: int
    median: float
    ci_low: float
    ci_high: float
    coverage: float  # actual confidence level of [ci_low, ci_high]; < 0.95 when n < 6
    q1: float
    q3: float
    minimum: float
    maximum: float
    outliers: int

    @property
    def rankable(self) -> bool:
        """Return True when there are enough samples to rank this result or declare it a winner."""
        return self.n >= MIN_RANKED

    @property
    def rel_halfwidth(self) -> float:
        """Return the CI half-width relative to the median (0.05 means +-5 %)."""
        if self.median == 0:
            return math.inf
        width: float = self.ci_high - self.ci_low
        return width / 2 / abs(self.median)

    def overlaps(self, other: Summary) -> bool:
        """Return True when the two confidence intervals overlap (the medians are statistically tied)."""
        return self.ci_low <= other.ci_high and other.ci_low <= self.ci_high


def _binom_cdf(k: int, n: int) -> float:
    """Return P(B <= k) for B ~ Binomial(n, 1/2)."""
    if k < 0:
        return 0.0
    return sum(math.comb(n, i) for i in range(k + 1)) / float(1 << n)


def median_ci_ranks(n: int, confidence: float = CONFIDENCE) -> tuple[int, int, float]:
    """Return 1-based ranks (lo, hi) bracketing the median with at least `confidence`, and the coverage.

    When n is too small for that confidence the widest interval (min, max) is returned with its
    lower, honest coverage.
    """
    if n < 1:
        raise ValueError("need at least one sample")
    alpha_half = (1 - confidence) / 2
    j = 0
    while j + 1 <= n // 2 and _binom_cdf(j, n) <= alpha_half:
        j += 1
    lo = max(j, 1)
    hi = n - lo + 1
    coverage = 1 - 2 * _binom_cdf(lo - 1, n)
    return lo, hi, coverage


def outlier_flags(values: Sequence[float]) -> list[bool]:
    """Flag values whose modified Z-score exceeds 3.5; none are flagged when MAD is 0."""
    med = statistics.median(values)
    mad = statistics.median([abs(v - med) for v in values])
    if mad == 0:
        return [False] * len(values)
    return [abs(0.6745 * (v - med) / mad) > OUTLIER_Z for v in values]


def summarize(values: Sequence[float]) -> Summary:
    """Summarize a non-empty sequence of samples."""
    if not values:
        raise ValueError("cannot summarize zero samples")
    ordered = sorted(values)
    n = len(ordered)
    lo, hi, coverage = median_ci_ranks(n)
    if n >= 2:
        q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    else:
        q1 = q3 = ordered[0]
    return Summary(
        n=n,
        median=statistics.median(ordered),
        ci_low=ordered[lo - 1],
        ci_high=ordered[hi - 1],
        coverage=coverage,
        q1=q1,
        q3=q3,
        minimum=ordered[0],
        maximum=ordered[-1],
        outliers=sum(outlier_flags(ordered)),
    )


def rank_with_ties(summaries: Sequence[Summary], higher_is_better: bool) -> list[tuple[int, bool]]:
    """Rank summaries best first; return (rank, tied) per input position.

    Sorted by median; an entry whose CI overlaps the CI of the group leader shares its rank.
    """
    order = sorted(
        range(len(summaries)),
        key=lambda i: -summaries[i].median if higher_is_better else summaries[i].median,
    )
    result: list[tuple[int, bool]] = [(0, False)] * len(summaries)
    leader = -1
    for position, i in enumerate(order):
        if leader >= 0 and summaries[i].overlaps(summaries[leader]):
            result[i] = (result[leader][0], True)
            result[leader] = (result[leader][0], True)
        else:
            leader = i
            result[i] = (position + 1, False)
    return result


def instability(summary: Summary, ci_target: float) -> str | None:
    """Return why a result is not stable enough (the remedy is REMEDY), else None."""
    problems = []
    if summary.rel_halfwidth > ci_target:
        problems.append(f"95 % CI is +-{summary.rel_halfwidth:.1%} of the median (target {ci_target:.0%})")
    if summary.outliers * 5 > summary.n:
        problems.append(f"{summary.outliers} of {summary.n} samples are outliers")
    if summary.coverage < CONFIDENCE:
        problems.append(f"only {summary.n} samples, the CI covers {summary.coverage:.0%}")
    if not problems:
        return None
    return "; ".join(problems)


REMEDY = (
    "results marked ! may be unstable: allow more rounds (--max-rounds, --max-time) and stop other busy programs; "
    "a rank =N is shared by rows not significantly slower than the first row of its group"
)
