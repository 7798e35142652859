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
