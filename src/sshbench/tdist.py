"""Student's t distribution (pure): its survival function and quantiles, for the racing tests on paired log
ratios (measure/racing.py).

The survival function comes from the regularized incomplete beta function,
    P(T > t) = I_x(df / 2, 1 / 2) / 2  with  x = df / (df + t^2),  t >= 0,
evaluated by its continued fraction (modified Lentz), using the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) where
the fraction converges slowly (Abramowitz & Stegun 26.5.8 and 26.7.1). Quantiles invert it by bisection.
Tested against published t tables (tests/ground/test_tdist.py).
"""

from __future__ import annotations

import math

_EPS = 1e-15
_TINY = 1e-300
_MAX_TERMS = 400


def _beta_fraction(a: float, b: float, x: float) -> float:
    """Return the continued fraction of the incomplete beta function (modified Lentz's method)."""
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _MAX_TERMS + 1):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            h *= d * c
        if abs(d * c - 1.0) < _EPS:
            break
    return h


def incomplete_beta(a: float, b: float, x: float) -> float:
    """Return the regularized incomplete beta function I_x(a, b) for a, b > 0 and 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


def t_sf(t: float, df: float) -> float:
    """Return P(T > t) for Student's t with `df` degrees of freedom."""
    if df <= 0:
        raise ValueError("degrees of freedom must be positive")
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
    return tail if t >= 0 else 1.0 - tail


def t_ppf(p: float, df: float) -> float:
    """Return the quantile t with P(T <= t) = p (bisection on t_sf, to about 1e-10)."""
    if not 0.0 < p < 1.0:
        raise ValueError("p must lie strictly between 0 and 1")
    if p < 0.5:
        return -t_ppf(1.0 - p, df)
    low, high = 0.0, 1.0
    while t_sf(high, df) > 1.0 - p:
        high *= 2.0
    for _ in range(200):
        mid = (low + high) / 2.0
        if t_sf(mid, df) > 1.0 - p:
            low = mid
        else:
            high = mid
        if high - low < 1e-10 * max(1.0, high):
            break
    return (low + high) / 2.0
