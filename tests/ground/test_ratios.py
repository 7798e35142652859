"""Ratio intervals and verdict words: against published Mann-Whitney tables, hand-computed cases, and
properties (hypothesis); and the error rate of the verdicts on simulated data with known truth."""

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sshbench.ratios import (
    Ratio,
    Word,
    band,
    judge,
    mann_whitney_cdf,
    mann_whitney_critical,
    more_samples,
    paired_ratio,
    speed,
    unpaired_ratio,
)

# Two-sided 5 % critical values of the Mann-Whitney U (reject when U <= value), as printed in the usual tables
# (e.g. Hollander & Wolfe, Table A.6, or any statistics textbook's table of U).
PUBLISHED = {(4, 4): 0, (5, 5): 2, (6, 6): 5, (7, 7): 8, (8, 8): 13, (10, 10): 23, (5, 10): 8, (20, 20): 127}


@pytest.mark.parametrize(("m", "n"), sorted(PUBLISHED))
def test_mann_whitney_critical_values_match_published_tables(m: int, n: int) -> None:
    c, coverage = mann_whitney_critical(m, n)
    assert c - 1 == PUBLISHED[(m, n)]
    assert 0.95 <= coverage < 0.975


def test_mann_whitney_distribution_hand_counted() -> None:
    # m = n = 2: the 6 orderings give U = 0, 1, 2, 2, 3, 4
    assert mann_whitney_cdf(2, 2) == pytest.approx((1 / 6, 2 / 6, 4 / 6, 5 / 6, 1.0))


def test_too_few_samples_give_the_widest_interval_with_its_real_coverage() -> None:
    c, coverage = mann_whitney_critical(3, 3)  # P(U <= 0) = 1/20: no 95 % interval exists
    assert c == 1 and coverage == pytest.approx(0.9)


def test_unpaired_ratio_of_a_pure_shift() -> None:
    a = [100.0, 101.0, 99.0, 100.0, 102.0, 98.0]
    r = unpaired_ratio(a, [v * 0.8 for v in a])
    assert r is not None and not r.paired
    assert r.value == pytest.approx(0.8)
    assert r.low < 0.8 < r.high


def test_paired_ratio_uses_common_rounds_only() -> None:
    a = {1: 100.0, 2: 110.0, 3: 90.0, 4: 100.0}
    b = {2: 55.0, 3: 45.0, 4: 50.0, 9: 1.0}
    r = paired_ratio(a, b)
    assert r is not None and r.paired and r.n == 3
    assert r.value == pytest.approx(0.5)
    assert paired_ratio({1: 1.0, 2: 1.0}, {1: 1.0, 2: 1.0}) is None  # fewer than 3 rounds in common


def _ratio(value: float, low: float, high: float, n: int = 8) -> Ratio:
    return Ratio(value, low, high, 0.95, n, True)


def test_verdict_words() -> None:
    lo, hi = band(0.05)
    assert (lo, hi) == (pytest.approx(0.95), pytest.approx(1 / 0.95))
    assert judge(_ratio(1.0, 0.97, 1.03), True).word is Word.EQUIVALENT
    assert judge(_ratio(0.22, 0.2, 0.25), True).word is Word.SLOWER  # -78 %: never "no change"
    assert judge(_ratio(0.22, 0.2, 0.25), False).word is Word.FASTER  # a connection time that fell
    wide = judge(_ratio(0.9, 0.5, 1.4), True)
    assert wide.word is Word.INCONCLUSIVE and wide.more is not None and wide.more > 0
    # excludes 1 but reaches outside the margin: slower, not equivalent
    assert judge(_ratio(0.97, 0.93, 0.99), True).word is Word.SLOWER


def test_more_samples_for_an_inconclusive_ratio() -> None:
    # centre 0.9 (log 0.105), half-width log(1.4/0.5)/2 = 0.515: to exclude 1 needs (0.515/0.105)^2 ~ 24x the samples
    more = more_samples(_ratio(0.9, 0.5, 1.4, n=8), 0.05)
    assert more is not None and 150 < more < 250
    assert more_samples(_ratio(1.0, 0.99, 1.06, n=8), 0.05) is not None  # equivalence is within reach


def test_speed_orientation() -> None:
    r = speed(_ratio(2.0, 1.5, 2.5), higher_is_better=False)  # time doubled: half the speed
    assert (r.value, r.low, r.high) == (0.5, pytest.approx(0.4), pytest.approx(1 / 1.5))


@given(
    st.lists(st.floats(min_value=1.0, max_value=1e4), min_size=1, max_size=25),
    st.lists(st.floats(min_value=1.0, max_value=1e4), min_size=1, max_size=25),
)
def test_unpaired_interval_contains_its_estimate(a: list[float], b: list[float]) -> None:
    r = unpaired_ratio(a, b)
    assert r is not None
    assert r.low <= r.value * (1 + 1e-9) and r.value <= r.high * (1 + 1e-9)
    assert 0 <= r.coverage <= 1  # one sample each: a point, covering nothing (callers need 3 each)


def _simulated_error_rate(true_ratio: float, paired: bool, runs: int = 400) -> dict[Word, float]:
    """Simulate `runs` comparisons of 8 samples each with 10 % noise; return how often each word came out."""
    rng = random.Random(7)
    counts = dict.fromkeys(Word, 0)
    for _ in range(runs):
        a = {r: 100 * math.exp(rng.gauss(0, 0.1)) for r in range(1, 9)}
        b = {r: 100 * true_ratio * math.exp(rng.gauss(0, 0.1)) for r in range(1, 9)}
        ratio = paired_ratio(a, b) if paired else unpaired_ratio(list(a.values()), list(b.values()))
        assert ratio is not None
        counts[judge(ratio, True).word] += 1
    return {w: c / runs for w, c in counts.items()}


@pytest.mark.parametrize("paired", [True, False])
def test_verdicts_are_right_at_the_stated_error_rate(paired: bool) -> None:
    # no difference: "slower" or "faster" is a false claim, at most ~5 % of the time (2.5 % each way)
    same = _simulated_error_rate(1.0, paired)
    assert same[Word.SLOWER] + same[Word.FASTER] <= 0.08
    # B truly half as fast: never called faster or equivalent, almost always slower
    half = _simulated_error_rate(0.5, paired)
    assert half[Word.FASTER] == 0 and half[Word.EQUIVALENT] == 0
    assert half[Word.SLOWER] >= 0.95
