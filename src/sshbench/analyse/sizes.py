"""A `tune` remedy's gain for the copies people make (pure): each copy's steady rate and fixed cost read apart, so the
gain measured on one copy size is said for others.

A copy of one or N connections is timed from spawn to exit; its sampler records phase `fixed`, what it took besides
the seconds in which its parts moved bytes at their steady rates (logins, slow starts, exits; measure/remedies.combine:
parts that ran together count those seconds once, parts that ran one after another each count theirs). A copy of S
bytes then takes about `fixed + S / steady`: for a large copy the steady rates decide, for a small one the fixed
costs. Per round, the default copy and the remedy's are each carried to S that way, and their ratio is paired per
round as the measured gain is (ratios.paired_ratio): the interval is the rounds' spread, not the model's error. At
the size measured the prediction is the measurement itself; at sizes far from it, it is a prediction and said so.

The prediction is checked in the run: after the remedies, the default and the best copy remedy one way are copied
at CHECK_SIZE (10 MB) for DECIDING_PAIRS paired rounds (rows whose remedy carries that copy size, a group of their
own), when the copies measured are at least CHECK_FACTOR times larger. A predicted gain outside the interval of
the gain those copies measured is a failed check, and said.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sshbench.analyse.results import by_round
from sshbench.model import Direction, Kind, Scenario
from sshbench.ratios import MIN_PAIRS, Verdict, judge, paired_ratio
from sshbench.records import StoredScenario
from sshbench.remedy import ONE_CONNECTION
from sshbench.samples import FIXED, Sample

MB = 1e6  # bytes in a MB, as rates are stored (MB/s)

SIZES = (10 * 10**6, 10**9)  # the copies a transfer remedy's gain is said for: 10 MB and 1 GB (and --for-size)
CHECK_SIZE = SIZES[0]  # the copies a prediction is checked with: small ones, where the fixed costs weigh most
CHECK_FACTOR = 4  # checked only when the copies measured are this many times larger (else it is the measurement)


@dataclass(frozen=True)
class Check:
    """A gain predicted for copies of `size` bytes against the gain copies of that size measured in the same run."""

    size: int
    predicted: Verdict | None
    measured: Verdict | None  # None: too few paired rounds of the check copies

    @property
    def holds(self) -> bool | None:
        """Return whether the measured gain's interval holds the predicted gain (None: one of them is missing)."""
        if self.predicted is None or self.measured is None:
            return None
        return self.measured.ratio.low <= self.predicted.ratio.value <= self.measured.ratio.high

    def to_dict(self) -> dict[str, object]:
        """Return the JSON form."""
        return {
            "bytes": self.size,
            "predicted": self.predicted.to_dict() if self.predicted else None,
            "measured": self.measured.to_dict() if self.measured else None,
            "holds": self.holds,
        }


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


def checked(sc: Scenario, size: int = CHECK_SIZE) -> Scenario:
    """Return the check row of a copy scenario: the same copy at `size` bytes."""
    assert sc.remedy is not None
    return dataclasses.replace(sc, remedy=sc.remedy.checking(size))


def to_check(stored: Sequence[StoredScenario], copies: Mapping[Direction | None, int]) -> list[Scenario]:
    """Return the check rows after the remedies: per direction whose copies (`copies`, bytes) are at least
    CHECK_FACTOR x CHECK_SIZE, the default copy and the remedy with the largest gain measured, both at CHECK_SIZE."""
    out: list[Scenario] = []
    for direction, size in copies.items():
        if size < CHECK_FACTOR * CHECK_SIZE:
            continue
        mine = [st for st in stored if st.scenario.kind is Kind.THROUGHPUT and st.scenario.direction == direction]
        base = next((st for st in mine if st.scenario.remedy == ONE_CONNECTION and st.scenario.cipher is None), None)
        if base is None:
            continue
        gained = []
        for st in mine:
            if st is base or st.scenario.remedy is None or st.scenario.is_check:
                continue
            ratio = paired_ratio(by_round(base), by_round(st))
            if ratio is not None:
                gained.append((ratio.value, st.scenario))
        if gained:
            out += [checked(base.scenario), checked(max(gained, key=lambda g: g[0])[1])]
    return out


def check_of(
    remedy: Scenario, base: Scenario, by: Mapping[Scenario, StoredScenario], predicted: Verdict | None, margin: float
) -> Check | None:
    """Return the check of a remedy's gain predicted at CHECK_SIZE, from the check rows stored (None: not checked)."""
    a, b = by.get(checked(base)), by.get(checked(remedy))
    if a is None or b is None:
        return None
    ratio = paired_ratio(by_round(a), by_round(b))
    measured = judge(ratio, True, margin) if ratio is not None else None
    return Check(CHECK_SIZE, predicted, measured)
