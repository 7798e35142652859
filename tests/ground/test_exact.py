"""Student's t (SciPy's, behind sshbench.exact) against published tables (two-sided critical values, e.g. NIST/SEMATECH
e-Handbook 1.3.6.7.2)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sshbench.exact import t_ppf, t_sf

# (df, upper-tail probability, published critical value)
TABLE = [
    (1, 0.025, 12.706),
    (2, 0.025, 4.303),
    (3, 0.025, 3.182),
    (5, 0.025, 2.571),
    (10, 0.025, 2.228),
    (30, 0.025, 2.042),
    (100, 0.025, 1.984),
    (5, 0.005, 4.032),
    (20, 0.005, 2.845),
    (3, 0.0005, 12.924),
    (10, 0.05, 1.812),
    (4, 0.10, 1.533),
    (60, 0.001, 3.232),
]


@pytest.mark.parametrize(("df", "tail", "value"), TABLE)
def test_quantiles_match_the_published_table(df: int, tail: float, value: float) -> None:
    assert t_ppf(1 - tail, df) == pytest.approx(value, abs=0.0015)
    assert t_sf(value, df) == pytest.approx(tail, rel=0.01)


def test_known_closed_forms() -> None:
    assert t_sf(0.0, 7) == pytest.approx(0.5)
    assert t_sf(1.0, 1) == pytest.approx(0.25)  # Cauchy: 1/2 - atan(1)/pi
    assert t_sf(2.0, 2) == pytest.approx(0.5 - 2.0 / (2 * math.sqrt(6.0)))  # df=2: 1/2 - t / (2 sqrt(2 + t^2))
    assert t_sf(1e9, 3) < 1e-20 and t_sf(-1e9, 3) == 1.0


@given(st.floats(0.0, 50.0), st.integers(1, 200))
def test_the_survival_function_is_a_tail(t: float, df: int) -> None:
    upper = t_sf(t, df)
    assert 0.0 <= upper <= 0.5 + 1e-12
    assert t_sf(-t, df) == pytest.approx(1.0 - upper, abs=1e-12)
    assert t_sf(t + 0.5, df) <= upper + 1e-12


@given(st.floats(0.5001, 0.9999), st.integers(1, 200))
def test_quantile_inverts_the_survival_function(p: float, df: int) -> None:
    assert t_sf(t_ppf(p, df), df) == pytest.approx(1.0 - p, rel=1e-6, abs=1e-12)


def test_a_percentile_interval_by_order_statistics() -> None:
    """The q = 0.5 ranks are the median's (stats.median_ci_ranks); a p99 of 500 samples at 97.5 % is bracketed by
    ranks 489..500 (hand check: P(B <= 488) = 0.0052, P(B >= 500) = 0.99^500 = 0.0066, B ~ Bin(500, 0.99)); 300
    samples bound no p99 from above (0.99^300 = 0.049 > 0.0127), and 435 is the fewest that do."""
    from sshbench.exact import quantile_ranks, samples_for_quantile
    from sshbench.stats import median_ci_ranks

    for n in (6, 20, 101):
        lo, hi, coverage = quantile_ranks(n, 0.5)
        assert (lo, hi) == median_ci_ranks(n)[:2] and coverage == pytest.approx(median_ci_ranks(n)[2])
    side = 0.95**0.5
    lo, hi, coverage = quantile_ranks(500, 0.99, side)
    assert (lo, hi) == (489, 500) and coverage == pytest.approx(1 - 0.0052 - 0.99**500, abs=0.0005)
    assert quantile_ranks(300, 0.99, side)[1] is None
    assert samples_for_quantile(0.99, side) == 435
    assert quantile_ranks(435, 0.99, side)[1] == 435 and quantile_ranks(434, 0.99, side)[1] is None
