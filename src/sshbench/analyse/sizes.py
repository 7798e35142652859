"""A `tune` remedy's gain for the copies people make (pure): each copy's steady rate and fixed cost read apart, so the
gain measured on one copy size is said for others.

A copy of one or N connections is timed from spawn to exit; its sampler records phase `fixed`, what it took besides
moving its bytes at N times its slowest part's steady rate (logins, slow starts, exits; measure/remedies.combine: the
copy ends with that part, and a part that lags lags in proportion to its bytes). A copy of S bytes then takes about
`fixed + S / steady`: for a large copy the steady rates decide, for a small one the fixed
costs. Per round, the default copy and the remedy's are each carried to S that way, and their ratio is paired per
round as the measured gain is (ratios.paired_ratio): the interval is the rounds' spread, not the model's error. At
the size measured the prediction is the measurement itself; at sizes far from it, it is a prediction and said so.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from sshbench.ratios import MIN_PAIRS, Verdict, judge, paired_ratio
from sshbench.records import StoredScenario
from sshbench.samples import FIXED, Sample

MB = 1e6  # bytes in a MB, as rates are stored (MB/s)

SIZES = (10 * 10**6, 10**9)  # the copies a transfer remedy's gain is said for: 10 MB and 1 GB (and --for-size)


def seconds_for(s: Sample, size: int) -> float | None:
    """Return how long this copy's connections would take to move `size` bytes: its fixed seconds plus the size at
    its steady rate (None: a sample without phase `fixed`, taken before issue 55, or failed)."""
    fixed = dict(s.phases).get(FIXED)
    if fixed is None or not s.ok or not s.nbytes or s.wall <= fixed:
        return None
    return fixed + size * (s.wall - fixed) / s.nbytes


def rates_at(st: StoredScenario, size: int) -> dict[int, float]:
    """Return the MB/s a copy of `size` bytes would move, per round (the median when a round has several)."""
    per: dict[int, list[float]] = {}
    for s in st.samples:
        took = seconds_for(s, size) if s.measured else None
        if took:
            per.setdefault(s.round, []).append(size / took / MB)
    return {r: statistics.median(v) for r, v in per.items()}


def gain_at(base: StoredScenario, remedy: StoredScenario, size: int, margin: float) -> Verdict | None:
    """Return the remedy's gain over the default for a copy of `size` bytes, paired per round (None: fewer than
    MIN_PAIRS rounds with both sides' fixed costs)."""
    ratio = paired_ratio(rates_at(base, size), rates_at(remedy, size))
    return judge(ratio, True, margin) if ratio is not None and ratio.n >= MIN_PAIRS else None


def gains(
    base: StoredScenario, remedy: StoredScenario, sizes: Sequence[int], margin: float
) -> tuple[tuple[int, Verdict | None], ...]:
    """Return the remedy's gain at each size (empty when neither copy recorded its fixed cost)."""
    if not rates_at(base, sizes[0]) or not rates_at(remedy, sizes[0]):
        return ()
    return tuple((size, gain_at(base, remedy, size, margin)) for size in sizes)


def size_words(size: int) -> str:
    """Return a copy size for people: binary when it is whole MiB or GiB (--for-size 1G: 1 GiB), else decimal
    (10 MB, 1 GB, 142 MB)."""
    for unit, word in ((2**30, "GiB"), (2**20, "MiB")):
        if size % unit == 0:
            return f"{size // unit} {word}"
    for unit, word in ((10**12, "TB"), (10**9, "GB"), (10**6, "MB"), (10**3, "kB")):
        if size >= unit:
            return f"{size / unit:.3g} {word}"
    return f"{size} B"
