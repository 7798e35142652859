"""Statistics with hand-computed values, plus properties checked by hypothesis."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sshbench.stats import instability, median_ci_ranks, outlier_flags, rank_with_ties, summarize


def test_median_ci_ranks_hand_computed() -> None:
    # n=5: P(B<=0)=1/32 > 0.025, so only (min, max) with coverage 1 - 2/32 = 0.9375.
    assert median_ci_ranks(5) == (1, 5, pytest.approx(0.9375))
    # n=6: P(B<=0)=1/64 <= 0.025 but P(B<=1)=7/64 > 0.025: (x1, x6), coverage 1 - 2/64.
    assert median_ci_ranks(6) == (1, 6, pytest.approx(1 - 2 / 64))
    # n=10: P(B<=1)=11/1024 <= 0.025, P(B<=2)=56/1024 > 0.025: (x2, x9), coverage 1 - 22/1024.
    assert median_ci_ranks(10) == (2, 9, pytest.approx(1 - 22 / 1024))


def test_summarize_hand_computed() -> None:
    s = summarize([10, 12, 11, 13, 100, 12, 11, 12, 13, 11])
    assert s.n == 10
    assert s.median == 12
    assert (s.ci_low, s.ci_high) == (11, 13)  # ranks 2 and 9 of the sorted values
    assert (s.minimum, s.maximum) == (10, 100)
    assert s.q1 == 11 and s.q3 == 12.75
    assert s.outliers == 1  # 100: |0.6745 * 88 / 1| > 3.5
    assert s.rel_halfwidth == pytest.approx(1 / 12)


def test_outliers_none_when_mad_is_zero() -> None:
    assert outlier_flags([5, 5, 5, 9]) == [False, False, False, False]


def test_rank_with_ties_lower_is_better() -> None:
    a = summarize([1.0, 1.1, 1.2, 1.0, 1.1, 1.2])
    b = summarize([1.15, 1.25, 1.3, 1.2, 1.25, 1.3])  # overlaps a
    c = summarize([2.0, 2.1, 2.2, 2.0, 2.1, 2.2])
    assert rank_with_ties([c, a, b], higher_is_better=False) == [(3, False), (1, True), (1, True)]


def test_rank_with_ties_higher_is_better() -> None:
    fast, slow = summarize([500.0] * 6), summarize([300.0] * 6)
    assert rank_with_ties([slow, fast], higher_is_better=True) == [(2, False), (1, False)]


def test_instability_names_the_problem() -> None:
    assert instability(summarize([100.0] * 6), 0.05) is None
    warning = instability(summarize([100, 150, 90, 120, 80, 110]), 0.05)
    assert warning is not None and "CI is" in warning
    assert "only 3 samples" in (instability(summarize([1.0, 1.0, 1.0]), 0.05) or "")


@given(st.lists(st.floats(min_value=0.001, max_value=1e6), min_size=1, max_size=60))
def test_summary_invariants(values: list[float]) -> None:
    s = summarize(values)
    assert s.minimum <= s.ci_low <= s.median <= s.ci_high <= s.maximum
    assert s.minimum <= s.q1 <= s.q3 <= s.maximum
    assert 0 <= s.outliers < max(len(values), 1)
    assert 0 <= s.coverage <= 1
