"""What an interop soak's logins say per pair (client x server x key exchange x host key): how many, how many
failed and with which words, the 95 % upper bound of the failure rate (Clopper-Pearson, one-sided: 0 failures of
100 logins read "at most 3.0 %") and how many logins would bound it at a rate worth finding (0.2 %: a bug that
fails one handshake in 512)."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from sshbench.exact import CONFIDENCE, upper_bound
from sshbench.records import StoredScenario

RARE = 0.002  # the failure rate worth bounding: one handshake in 512 failed in Erlang/OTP's ML-KEM


def logins_to_bound(failures: int, logins: int, rate: float = RARE, confidence: float = CONFIDENCE) -> int | None:
    """Return how many logins in all (the ones to come all succeeding) would bound the failure rate at `rate`, or
    None when the failures seen already make that impossible to show."""
    if upper_bound(failures, logins, confidence) <= rate:
        return logins
    if failures == 0:
        return math.ceil(math.log(1.0 - confidence) / math.log1p(-rate))
    if failures / max(logins, 1) >= rate or upper_bound(failures, 10**9, confidence) > rate:
        return None
    lo, hi = logins, max(logins, 1)
    while upper_bound(failures, hi, confidence) > rate:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if upper_bound(failures, mid, confidence) > rate else (lo, mid)
    return hi


@dataclass(frozen=True)
class Pair:
    """One pair's logins: counts, the failures' words (most frequent first), its bound and what would tighten it."""

    client: str
    server: str
    kex: str | None  # None: the client's own choice (it cannot be pinned)
    hostkey: str | None
    warm: bool  # logged in from one warm process (a library), or one process per login
    logins: int
    failures: int
    errors: tuple[tuple[str, int], ...]
    median_ms: float | None
    upper: float
    needed: int | None
    failure: str | None = None  # why the pair was not soaked at all (n/a)

    @property
    def rate(self) -> float:
        """Return the observed failure rate."""
        return self.failures / self.logins if self.logins else 0.0


def pair(st: StoredScenario) -> Pair:
    """Summarize one stored pair."""
    sc = st.scenario
    logins = [s for s in st.samples if not s.warmup]
    bad = [s for s in logins if not s.ok]
    times = [s.value for s in logins if s.ok and s.value is not None]
    words = Counter(s.error or "no reason given" for s in bad)
    return Pair(
        client=sc.client or "openssh",
        server=sc.server or "",
        kex=sc.kex,
        hostkey=sc.hostkey,
        warm=sc.mode is not None,
        logins=len(logins),
        failures=len(bad),
        errors=tuple(words.most_common()),
        median_ms=statistics.median(times) * 1000 if times else None,
        upper=upper_bound(len(bad), len(logins)),
        needed=logins_to_bound(len(bad), len(logins)),
        failure=st.failure if not logins else None,
    )


def pairs(stored: Sequence[StoredScenario]) -> list[Pair]:
    """Summarize every pair of a soak, in the order they were planned."""
    return [pair(st) for st in stored]
