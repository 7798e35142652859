"""What each key exchange costs a server in logins a second (pure): `load --kex A,B,...` runs the same steps for
each, interleaved, and this reads them side by side.

Per key exchange: the server's CPU a login over its steps (each step's cgroup CPU over its logins: one value a step,
a generator-bound step's too; their mean with a t-interval), the logins a second one core serves at that cost, and
its knee. Against the first key exchange (the baseline): the difference in server CPU a login, paired per offered
rate (the two ran the same rate one after the other), its mean with a t-interval, and what it makes of the logins a
second a core serves over the rates the two share.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sshbench.analyse.load import Knee, Step, knee
from sshbench.exact import t_ppf

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Mean:
    """A mean over a few values with its two-sided 95 % t-interval (no interval from one value)."""

    value: float
    low: float | None
    high: float | None
    n: int

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form."""
        return {"mean": self.value, "low": self.low, "high": self.high, "n": self.n}


def mean(values: Sequence[float]) -> Mean | None:
    """Return the mean and its 95 % t-interval (None without values)."""
    if not values:
        return None
    m = statistics.fmean(values)
    if len(values) < 2:
        return Mean(m, None, None, 1)
    half = t_ppf(1 - (1 - CONFIDENCE) / 2, len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return Mean(m, m - half, m + half, len(values))


@dataclass(frozen=True)
class KexCapacity:
    """One key exchange's row of the capacity table."""

    kex: str | None
    cpu: Mean | None  # the server's CPU seconds a login, over its read steps
    knee: Knee
    diff: Mean | None = None  # against the baseline: its CPU a login minus the baseline's, paired per rate
    base: float | None = None  # the baseline's CPU a login over the rates the two share (what `diff` is against)

    @property
    def per_core(self) -> float | None:
        """Return the logins a second one core serves at this CPU a login (None: not counted)."""
        return 1 / self.cpu.value if self.cpu is not None and self.cpu.value > 0 else None

    def to_dict(self, base: KexCapacity | None = None) -> dict[str, Any]:
        """Return the JSON form (seconds), with the loss in logins a second a core against `base`."""
        return {
            "kex": self.kex,
            "server_cpu_per_login": self.cpu.to_dict() if self.cpu else None,
            "logins_per_second_per_core": self.per_core,
            "knee": self.knee.rate,
            "knee_found": self.knee.broken is not None,  # False: no step read broke the SLO, the knee is higher
            "against_first": None if self.diff is None else self.diff.to_dict(),
            "logins_per_core_change": self.change(base),
        }

    def change(self, base: KexCapacity | None) -> float | None:
        """Return the change in logins a second a core against `base` over the rates the two share: the baseline's
        CPU a login there over it plus the paired difference (-0.23: 23 % fewer; None: not counted). Per-login CPU
        falls as the rate rises (fixed costs spread), so rates one of the two did not run would bias it."""
        if base is None or base is self or self.diff is None or not self.base or self.base + self.diff.value <= 0:
            return None
        return self.base / (self.base + self.diff.value) - 1


def read(rows: Sequence[Step]) -> list[Step]:
    """Return the steps whose server CPU a login is counted: a generator-bound step's too (its server still spent
    what it spent on each login; only its latency says nothing of the server), not one cut short or whose server
    died."""
    return [s for s in rows if s.logins and s.server_cpu is not None and not s.cut and s.stopped is None]


def capacities(rows: Sequence[Step], kexes: Sequence[str | None], slo: float) -> list[KexCapacity]:
    """Return each key exchange's row, the first one the baseline of the others' differences."""
    by = {k: [s for s in rows if s.kex == k] for k in kexes}
    cpu = {k: {s.rate: s.server_cpu for s in read(by[k]) if s.server_cpu is not None} for k in kexes}
    out = []
    first = cpu[kexes[0]]
    for k in kexes:
        common = [r for r in cpu[k] if r in first]
        diff = mean([cpu[k][r] - first[r] for r in common]) if k != kexes[0] else None
        base = statistics.fmean(first[r] for r in common) if common and k != kexes[0] else None
        out.append(KexCapacity(k, mean(list(cpu[k].values())), knee(by[k], slo), diff, base))
    return out


def welch(a: Sequence[float], b: Sequence[float]) -> Mean | None:
    """Return mean(b) - mean(a) with its 95 % Welch t-interval (None with fewer than 2 values a side)."""
    if len(a) < 2 or len(b) < 2:
        return None
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    d = statistics.fmean(b) - statistics.fmean(a)
    if va + vb == 0:
        return Mean(d, d, d, min(len(a), len(b)))
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    half = t_ppf(1 - (1 - CONFIDENCE) / 2, df) * math.sqrt(va + vb)
    return Mean(d, d - half, d + half, min(len(a), len(b)))


@dataclass(frozen=True)
class Across:
    """One key exchange in two runs that compare key exchanges: its server CPU a login in each, and B - A."""

    kex: str | None
    a: Mean | None
    b: Mean | None
    diff: Mean | None  # Welch: the runs' steps are not paired


def across(a: Sequence[Step], b: Sequence[Step], kexes: Sequence[str | None]) -> list[Across]:
    """Return each key exchange both runs measured, its CPU a login in each and the change (steps unpaired)."""
    out = []
    for k in kexes:
        va = [s.server_cpu for s in read(a) if s.kex == k and s.server_cpu is not None]
        vb = [s.server_cpu for s in read(b) if s.kex == k and s.server_cpu is not None]
        if va and vb:
            out.append(Across(k, mean(va), mean(vb), welch(va, vb)))
    return out
