"""Finding the knee to a precision (pure): the two rates that bracket it among a run's steps, the rate halfway
between them on a log scale, and how many steps that may take (`load --precision`)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from sshbench.analyse.load import Step, knee

MAX_BISECTIONS = 8  # steps a run adds at most to find the knee to --precision


def bracket(steps: Sequence[Step], slo: float) -> tuple[float, float] | None:
    """Return the last rate within the SLO and the first past it among the steps that say something of the server
    (None: no step broke it, or none below the first that did kept it)."""
    k = knee(steps, slo)
    if k.broken is None or k.rate is None:
        return None
    return k.rate, k.broken.rate


def between(good: float, bad: float) -> float:
    """Return the rate that halves the gap between two rates on a log scale, rounded (whole logins a second from
    10/s, tenths below) where the rounding stays strictly inside."""
    mid = math.sqrt(good * bad)
    rounded = round(mid) if mid >= 10 else round(mid, 1)
    return rounded if good < rounded < bad else mid


def bisections(rates: Sequence[float], precision: float) -> int:
    """Return the steps bisection may add after `rates`: enough to narrow their widest gap to `precision`."""
    ordered = sorted(rates)
    widest = max((b / a for a, b in itertools.pairwise(ordered)), default=1.0)
    if precision <= 0 or widest <= 1 + precision:
        return 0
    return min(math.ceil(math.log2(math.log(widest) / math.log1p(precision))), MAX_BISECTIONS)
