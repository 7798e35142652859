"""Ratios of two results with confidence intervals, and the verdict words drawn from them (pure).

One vocabulary for every claim that compares two results (docs/CLAIMS.md). For a ratio B/A of two medians with
a 95 % interval [lo, hi] and an equivalence margin m (5 % by default):
  equivalent    [lo, hi] lies inside [1 - m, 1 / (1 - m)];
  faster/slower the interval excludes 1 (which of the two depends on whether higher values are better);
  inconclusive  otherwise, with roughly how many more samples would likely decide it.

Two ways to get the interval:
- **paired**, within one run: the rows were measured in the same rounds, so each round gives one ratio b_r / a_r;
  the median of those ratios and its distribution-free interval (order statistics, as `stats.summarize`);
- **unpaired**, between runs: the Hodges-Lehmann estimate of the shift of log values, with the Moses interval
  from the Mann-Whitney distribution (exact for small samples, normal approximation for large ones):
  Hollander & Wolfe, *Nonparametric Statistical Methods* (3rd ed.), ch. 4.3. Between runs the interval holds
  only the noise inside the two runs, not the drift between them.
"""

from __future__ import annotations

import enum
import functools
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sshbench.exact import quantile_ranks
from sshbench.stats import CONFIDENCE, median_ci_ranks

MARGIN = 0.05  # the default equivalence margin: within +-5 % is "equivalent"
MIN_PAIRS = 3  # fewest rounds in common for a paired interval; fewer: the unpaired one
DECIDING_PAIRS = 6  # fewest paired rounds a change is pasted from: 6 ratios give a 95 % (96.9 %) interval
EXACT_LIMIT = 2500  # m * n up to which the Mann-Whitney distribution is counted exactly
Z95 = 1.959963984540054


class Word(enum.StrEnum):
    """What a ratio of two results says (B against A)."""

    EQUIVALENT = "equivalent"
    FASTER = "faster"
    SLOWER = "slower"
    INCONCLUSIVE = "inconclusive"


class Standing(enum.StrEnum):
    """What a row of a result group is against the group's leader."""

    LEADER = "leader"
    EQUIVALENT = "equivalent"
    SLOWER = "slower"
    INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class Ratio:
    """B / A of two results' values, with its confidence interval and how it was obtained."""

    value: float
    low: float
    high: float
    coverage: float  # the interval's real confidence level (below 95 % for very few samples)
    n: int  # rounds paired, or the smaller sample
    paired: bool
    how: str | None = None  # another method than the two below, in words (a percentile's ratio)

    @property
    def method(self) -> str:
        """Return how the interval was made, in words."""
        if self.how is not None:
            return self.how
        return "paired per round" if self.paired else "unpaired (Hodges-Lehmann, Moses interval)"

    def to_dict(self) -> dict[str, object]:
        """Return a JSON-ready dict."""
        return {
            "ratio": self.value,
            "low": self.low,
            "high": self.high,
            "coverage": self.coverage,
            "n": self.n,
            "method": self.method,
        }


def paired_ratio(a: Mapping[int, float], b: Mapping[int, float]) -> Ratio | None:
    """Return the median of per-round ratios b_r / a_r over the rounds both have, with its interval (None below
    MIN_PAIRS rounds in common or with a non-positive value)."""
    rounds = sorted(set(a) & set(b))
    if len(rounds) < MIN_PAIRS or any(a[r] <= 0 or b[r] <= 0 for r in rounds):
        return None
    ratios = sorted(b[r] / a[r] for r in rounds)
    lo, hi, coverage = median_ci_ranks(len(ratios))
    return Ratio(statistics.median(ratios), ratios[lo - 1], ratios[hi - 1], coverage, len(ratios), True)


def mann_whitney_cdf(m: int, n: int) -> tuple[float, ...]:
    """Return P(U <= u) for u = 0 .. m*n under the null hypothesis (exact counts)."""
    counts = _counts(m, n)
    total = sum(counts)
    out, running = [], 0
    for c in counts:
        running += c
        out.append(running / total)
    return tuple(out)


@functools.cache
def _counts(m: int, n: int) -> tuple[int, ...]:
    """Return the number of arrangements with U = u for u = 0 .. m*n, by the recurrence
    N(m, n, u) = N(m - 1, n, u - n) + N(m, n - 1, u) (Mann & Whitney 1947)."""
    # rows over n' = 0..n for the current m' (m' grows from 0 to m)
    prev = [[1] for _ in range(n + 1)]  # m' = 0: only U = 0
    for mm in range(1, m + 1):
        cur: list[list[int]] = [[1]]  # n' = 0: only U = 0
        for nn in range(1, n + 1):
            size = mm * nn + 1
            row = [0] * size
            for u, c in enumerate(cur[nn - 1]):  # N(mm, nn - 1, u)
                row[u] += c
            for u, c in enumerate(prev[nn]):  # N(mm - 1, nn, u - nn)
                row[u + nn] += c
            cur.append(row)
        prev = cur
    return tuple(prev[n])


def mann_whitney_critical(m: int, n: int, confidence: float = CONFIDENCE) -> tuple[int, float]:
    """Return (c, coverage): the largest c with P(U <= c - 1) <= (1 - confidence) / 2 (at least 1), and the
    coverage of the interval between the c-th smallest and c-th largest pairwise difference."""
    half = (1 - confidence) / 2
    if m * n <= EXACT_LIMIT:
        cdf = mann_whitney_cdf(m, n)
        c = 0
        while c < len(cdf) and cdf[c] <= half:
            c += 1
        c = max(c, 1)
        return c, 1 - 2 * cdf[c - 1]
    mean, sd = m * n / 2, math.sqrt(m * n * (m + n + 1) / 12)
    c = max(1, math.floor(mean - Z95 * sd))  # the usual large-sample rule (Hollander & Wolfe, eq. 4.41)
    return c, 1 - 2 * _phi((c - 0.5 - mean) / sd)


def _phi(z: float) -> float:
    """Return the standard normal distribution function."""
    return 0.5 * (1 + math.erf(z / math.sqrt(2)))


def unpaired_ratio(a: Sequence[float], b: Sequence[float]) -> Ratio | None:
    """Return B / A as exp(Hodges-Lehmann shift of the logs), with the Moses interval (None when a side has no
    positive values)."""
    la = [math.log(v) for v in a if v > 0]
    lb = [math.log(v) for v in b if v > 0]
    if not la or not lb:
        return None
    diffs = sorted(y - x for x in la for y in lb)
    c, coverage = mann_whitney_critical(len(la), len(lb))
    low, high = diffs[c - 1], diffs[len(diffs) - c]
    return Ratio(
        math.exp(statistics.median(diffs)), math.exp(low), math.exp(high), coverage, min(len(la), len(lb)), False
    )


SIDE_CONFIDENCE = math.sqrt(CONFIDENCE)  # each side's percentile interval: both hold together at 95 %
BY_PERCENTILES = "each side's percentile with its order-statistics interval (97.5 % each, 95 % together)"


def percentile(values: Sequence[float], q: float) -> tuple[float, float, float, float] | None:
    """Return the q-quantile of `values` (nearest rank) with its distribution-free interval at SIDE_CONFIDENCE and
    that interval's coverage, or None when too few values give the interval both ends."""
    ordered = sorted(values)
    if not ordered:
        return None
    lo, hi, coverage = quantile_ranks(len(ordered), q, SIDE_CONFIDENCE)
    if lo is None or hi is None:
        return None
    return ordered[max(math.ceil(q * len(ordered)), 1) - 1], ordered[lo - 1], ordered[hi - 1], coverage


def percentile_ratio(a: Sequence[float], b: Sequence[float], q: float) -> Ratio | None:
    """Return B / A of two samples' q-quantiles, its interval from each side's (B's low over A's high, B's high over
    A's low: both intervals hold together with the product of their coverages), or None when a side has too few
    values for both ends (`samples_for_quantile`) or a non-positive one."""
    pa, pb = percentile(a, q), percentile(b, q)
    if pa is None or pb is None or min(pa[:3]) <= 0 or min(pb[:3]) <= 0:
        return None
    (va, la, ha, ca), (vb, lb, hb, cb) = pa, pb
    return Ratio(vb / va, lb / ha, hb / la, ca * cb, min(len(a), len(b)), False, BY_PERCENTILES)


def interval_name(ratio: Ratio) -> str:
    """Return what a ratio's interval covers in words: `95 % interval`, or less with few samples (`75 %` at 3)."""
    return "95 % interval" if ratio.coverage >= 0.95 else f"{ratio.coverage * 100:.0f} % interval"


def band(margin: float) -> tuple[float, float]:
    """Return the equivalence band [1 - m, 1 / (1 - m)] (symmetric on a log scale)."""
    return 1 - margin, 1 / (1 - margin)


@dataclass(frozen=True)
class Verdict:
    """What a ratio B/A says under a margin: the word, the ratio, and (inconclusive) samples that would decide it."""

    word: Word
    ratio: Ratio
    margin: float
    more: int | None = None  # inconclusive: about this many more samples per side would likely decide it

    def to_dict(self) -> dict[str, object]:
        """Return a JSON-ready dict."""
        return {"verdict": self.word.value, **self.ratio.to_dict(), "margin": self.margin, "more_samples": self.more}


def judge(ratio: Ratio, higher_is_better: bool, margin: float = MARGIN) -> Verdict:
    """Return the verdict on B / A: equivalent, faster, slower or inconclusive (see the module docstring)."""
    lo, hi = band(margin)
    if lo <= ratio.low and ratio.high <= hi:
        return Verdict(Word.EQUIVALENT, ratio, margin)
    if ratio.low > 1 or ratio.high < 1:
        up = ratio.low > 1
        return Verdict(Word.FASTER if up == higher_is_better else Word.SLOWER, ratio, margin)
    return Verdict(Word.INCONCLUSIVE, ratio, margin, more_samples(ratio, margin))


def beyond_margin(verdict: Verdict) -> bool:
    """Return True when a faster verdict's whole interval lies beyond the margin: at least +m for a rate (higher is
    better), at most -m for a time."""
    r, m = verdict.ratio, verdict.margin
    if verdict.word is not Word.FASTER:
        return False
    return r.low >= 1 + m if r.low > 1 else r.high <= 1 - m


def worth_a_change(verdict: Verdict | None) -> bool:
    """Return True when a verdict supports changing a setting: faster, from DECIDING_PAIRS paired rounds or more
    with a 95 % interval that lies wholly beyond the margin."""
    return verdict is not None and _decisive(verdict) and beyond_margin(verdict)


def settled(verdict: Verdict | None) -> bool:
    """Return True when more rounds would not change what a verdict says of a change: from DECIDING_PAIRS paired
    rounds or more with a 95 % interval, slower, equivalent, faster beyond the margin, or faster but wholly within
    it (never worth a change)."""
    if verdict is None or not _decisive(verdict) or verdict.word is Word.INCONCLUSIVE:
        return False
    if verdict.word is not Word.FASTER:
        return True
    r, m = verdict.ratio, verdict.margin
    within = r.high <= 1 + m if r.low > 1 else r.low >= 1 - m
    return beyond_margin(verdict) or within


def _decisive(verdict: Verdict) -> bool:
    """Return True for a paired verdict from DECIDING_PAIRS rounds or more whose interval covers 95 %."""
    r = verdict.ratio
    return r.paired and r.n >= DECIDING_PAIRS and r.coverage >= CONFIDENCE


def more_samples(ratio: Ratio, margin: float) -> int | None:
    """Return roughly how many more samples per side would decide an inconclusive ratio, assuming its interval
    narrows as 1/sqrt(n) around the same centre (None when no number of samples is likely to)."""
    if ratio.low <= 0 or ratio.value <= 0 or ratio.n < 1:
        return None
    centre = abs(math.log(ratio.value))
    half = (math.log(ratio.high) - math.log(ratio.low)) / 2
    limit = math.log(band(margin)[1])
    targets = [t for t in (centre, limit - centre) if t > half * 0.02]  # exclude 1, or fit inside the margin
    if not targets or half <= 0:
        return None
    need = ratio.n * (half / max(targets)) ** 2
    more = math.ceil(need - ratio.n)
    return max(more, 1) if more <= 50 * ratio.n else None


def speed(ratio: Ratio, higher_is_better: bool) -> Ratio:
    """Return the ratio oriented as speed (B's speed over A's): itself when higher is better, else inverted."""
    if higher_is_better:
        return ratio
    return Ratio(1 / ratio.value, 1 / ratio.high, 1 / ratio.low, ratio.coverage, ratio.n, ratio.paired, ratio.how)
