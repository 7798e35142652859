"""What a `load` run's stored logins say per step: offered and achieved rate, latency percentiles from each login's
intended start (an HdrHistogram of the stored logins, never hand-made), failures by cause with the 95 % upper bound
of the failure rate, and the generator's CPU per login."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from hdrh.histogram import HdrHistogram

from sshbench.analyse.interop import upper_bound
from sshbench.records import StoredScenario
from sshbench.samples import Sample

LOWEST_US, HIGHEST_US, DIGITS = 1, 3_600_000_000, 3  # 1 us .. 1 h, 3 significant digits
PERCENTILES = (50.0, 90.0, 99.0, 99.9)


def rate_of(load: str | None) -> float:
    """Return a step's offered rate from its scenario's `load` (`20/s`)."""
    return float((load or "0/s").removesuffix("/s"))


def intended(s: Sample) -> float:
    """Return a login's intended start, seconds from its step's start (stored as its `intended` phase)."""
    return dict(s.phases).get("intended", 0.0)


@dataclass(frozen=True)
class Step:
    """One step's logins, read back."""

    rate: float
    logins: int
    failures: int
    causes: tuple[tuple[str, int], ...]
    achieved: float | None  # successful logins per second, from the step's start to its last login's end
    percentiles: tuple[tuple[float, float], ...]  # (percentile, seconds from the intended start), successful logins
    worst: float | None  # the slowest successful login, seconds
    generator_cpu: float | None  # the generator's CPU seconds per login (the ssh client's, from wait4)
    upper: float  # 95 % upper bound of the failure rate
    late: float | None  # the latest a login started after its intended start, seconds (the generator's own lag)

    def at(self, percentile: float) -> float | None:
        """Return the latency at a percentile, or None without successful logins."""
        return dict(self.percentiles).get(percentile)


def histogram(seconds: Sequence[float]) -> HdrHistogram:
    """Return an HdrHistogram of latencies (recorded in microseconds)."""
    h = HdrHistogram(LOWEST_US, HIGHEST_US, DIGITS)
    for v in seconds:
        h.record_value(min(max(int(v * 1e6), LOWEST_US), HIGHEST_US))
    return h


def step(st: StoredScenario, seconds: float) -> Step:
    """Summarize one step of `seconds` from its stored logins."""
    logins = [s for s in st.samples if not s.warmup]
    ok = [s for s in logins if s.ok and s.value is not None]
    values = [s.value for s in ok if s.value is not None]
    h = histogram(values) if values else None
    ends = [intended(s) + (s.value or 0.0) for s in ok]
    cpu = [s.client_cpu for s in logins if s.client_cpu is not None]
    late = [dict(s.phases).get("late") for s in logins]
    return Step(
        rate=rate_of(st.scenario.load),
        logins=len(logins),
        failures=len(logins) - len(ok),
        causes=tuple(Counter(s.error or "no reason given" for s in logins if not s.ok).most_common()),
        achieved=len(ok) / max(seconds, *ends) if ok else None,
        percentiles=tuple((p, h.get_value_at_percentile(p) / 1e6) for p in PERCENTILES) if h else (),
        worst=h.get_max_value() / 1e6 if h else None,
        generator_cpu=statistics.fmean(cpu) if cpu else None,
        upper=upper_bound(len(logins) - len(ok), len(logins)),
        late=max((v for v in late if v is not None), default=None),
    )
