"""What a key exchange costs against curve25519-sha256 measured in the same rounds (pure): the extra connection time
and each side's extra CPU as paired differences (round r of a kex minus round r of curve25519, the median of those
and its distribution-free 95 % interval), the bytes each way up to the new keys and the client's round trips (from
a counted warm-up login: measure/wire.py), and the key shares' size the catalog expects for the difference."""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sshbench import kex
from sshbench.model import Kind, Scenario, client_name
from sshbench.ratios import MIN_PAIRS
from sshbench.records import StoredScenario
from sshbench.samples import Sample, WireCount
from sshbench.stats import CONFIDENCE, summarize

BASELINE = "curve25519-sha256"  # the classical default of OpenSSH 8.x-9.x: what post-quantum is paid against


@dataclass(frozen=True)
class Difference:
    """A paired difference (kex minus baseline, same round): its median and 95 % interval, in seconds."""

    n: int
    median: float
    ci_low: float
    ci_high: float
    coverage: float

    def to_dict(self) -> dict[str, float | int]:
        """Return the difference as JSON-ready seconds."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class KexCost:
    """One key exchange's cost: absolute medians, and against the baseline of its group where there is one."""

    scenario: Scenario
    post_quantum: bool
    time: float | None  # median connection seconds
    client_cpu: float | None  # median CPU seconds of the ssh client per login
    server_cpu: float | None  # median CPU seconds of the server per login (embedded servers)
    wire: WireCount | None
    wire_problem: str | None = None  # why the warm-up could not be counted
    extra_time: Difference | None = None  # against the baseline, same rounds (None: this is the baseline, or none)
    extra_client_cpu: Difference | None = None
    extra_server_cpu: Difference | None = None
    extra_bytes: tuple[int, int] | None = None  # sent, received beyond the baseline's counted login
    share_bytes: tuple[int, int] | None = None  # what the catalog's key shares predict for extra_bytes
    baseline: bool = False

    def to_dict(self) -> dict[str, Any]:
        """Return the cost as JSON-ready values (seconds and bytes)."""
        return {
            "scenario": self.scenario.to_dict(),
            "post_quantum": self.post_quantum,
            "baseline": self.baseline,
            "time_s": self.time,
            "client_cpu_s": self.client_cpu,
            "server_cpu_s": self.server_cpu,
            "wire": _wire_dict(self.wire),
            "wire_problem": self.wire_problem,
            "extra_time_s": _dict(self.extra_time),
            "extra_client_cpu_s": _dict(self.extra_client_cpu),
            "extra_server_cpu_s": _dict(self.extra_server_cpu),
            "extra_bytes": list(self.extra_bytes) if self.extra_bytes else None,
            "share_bytes": list(self.share_bytes) if self.share_bytes else None,
        }


def _wire_dict(w: WireCount | None) -> dict[str, int] | None:
    """Return a count as the run document names it (sent, received, round_trips)."""
    return {"sent": w.kex_sent, "received": w.kex_received, "round_trips": w.round_trips} if w else None


def _dict(d: Difference | None) -> dict[str, float | int] | None:
    """Return a difference as a dict, or None."""
    return d.to_dict() if d else None


def paired_difference(a: Mapping[int, float], b: Mapping[int, float]) -> Difference | None:
    """Return the median of b_r - a_r over the rounds both have, with its interval; None below MIN_PAIRS rounds."""
    common = sorted(set(a) & set(b))
    if len(common) < MIN_PAIRS:
        return None
    s = summarize([b[r] - a[r] for r in common])
    return Difference(s.n, s.median, s.ci_low, s.ci_high, s.coverage)


def _per_round(st: StoredScenario, field: Callable[[Sample], float | None]) -> dict[int, float]:
    """Return a measured figure of each round (the last measured sample of a round)."""
    out: dict[int, float] = {}
    for s in st.samples:
        got = field(s) if s.measured else None
        if got is not None:
            out[s.round] = got
    return out


def _median(values: Mapping[int, float]) -> float | None:
    """Return the median of the rounds' figures, or None."""
    return statistics.median(values.values()) if values else None


FIGURES: tuple[Callable[[Sample], float | None], ...] = (  # connection time, client CPU, server CPU per login
    lambda s: s.value,
    lambda s: s.client_cpu,
    lambda s: s.server_cpu,
)


def _wire(st: StoredScenario) -> tuple[WireCount | None, str | None]:
    """Return the last counted warm-up's wire count, or why it has none."""
    counted = [s.wire for s in st.samples if s.wire]
    if not counted:
        return None, None
    last = WireCount.read(counted[-1])
    return (None, last) if isinstance(last, str) else (last, None)


def _group(sc: Scenario) -> Scenario:
    """Return what a kex is compared within: the same scenario but for its kex."""
    return dataclasses.replace(sc, kex=None)


def _alone(st: StoredScenario) -> KexCost:
    """Return a kex's absolute cost, with nothing to compare it with."""
    name = st.scenario.kex or ""
    wire, problem = _wire(st)
    time, client, server = (_median(_per_round(st, f)) for f in FIGURES)
    post_quantum, baseline = kex.is_post_quantum(name), kex.same(name, BASELINE)
    return KexCost(st.scenario, post_quantum, time, client, server, wire, problem, baseline=baseline)


def _against(cost: KexCost, st: StoredScenario, base: StoredScenario, base_cost: KexCost) -> KexCost:
    """Return `cost` with its paired differences against the baseline and its bytes beyond the baseline's."""
    time, client, server = (paired_difference(_per_round(base, f), _per_round(st, f)) for f in FIGURES)
    extra = None
    if cost.wire and base_cost.wire:
        extra = (cost.wire.kex_sent - base_cost.wire.kex_sent, cost.wire.kex_received - base_cost.wire.kex_received)
    return dataclasses.replace(
        cost,
        extra_time=time,
        extra_client_cpu=client,
        extra_server_cpu=server,
        extra_bytes=extra,
        share_bytes=share_difference(cost.scenario.kex or ""),
    )


def share_difference(name: str) -> tuple[int, int] | None:
    """Return how many bytes more than curve25519's each way the catalog's key shares of `name` take."""
    row, base = kex.lookup(name), kex.lookup(BASELINE)
    if row is None or base is None or row.client_share is None or row.server_share is None:
        return None
    assert base.client_share is not None and base.server_share is not None
    return row.client_share - base.client_share, row.server_share - base.server_share


def kex_costs(stored: Sequence[StoredScenario]) -> list[KexCost]:
    """Return the cost of every key exchange a run timed connections with, compared within its group (same server,
    host key, client) against curve25519-sha256 where the group has it; [] when no connection pinned a kex."""
    timed = [st for st in stored if st.scenario.kind is Kind.LATENCY and st.scenario.kex]
    groups = list(_groups(timed).values())
    if any(len(g) > 1 for g in groups):  # a group of one kex (another host key's row) compares nothing
        groups = [g for g in groups if len(g) > 1]
    out: list[KexCost] = []
    for group in groups:
        base = next((st for st in group if kex.same(st.scenario.kex, BASELINE)), None)
        base_cost = _alone(base) if base else None
        for st in group:
            cost = _alone(st)
            if base and base_cost and st is not base:
                cost = _against(cost, st, base, base_cost)
            out.append(cost)
    return out if len(out) > 1 or any(c.wire for c in out) else []


def _groups(timed: Sequence[StoredScenario]) -> dict[Scenario, list[StoredScenario]]:
    """Return the scenarios grouped by everything but their kex, in stored order."""
    groups: dict[Scenario, list[StoredScenario]] = {}
    for st in timed:
        groups.setdefault(_group(st.scenario), []).append(st)
    return groups


def said(d: Difference) -> str:
    """Return a difference in words: `+1.2 ms (+0.9..+1.6)` or `no measurable difference (-0.3..+0.4 ms)`, with
    the interval's real coverage where it is under 95 % (`..+1.6, a 75 % interval`)."""
    cover = "" if d.coverage >= CONFIDENCE else f", a {d.coverage * 100:.0f} % interval"
    if d.ci_low <= 0 <= d.ci_high:
        return f"no measurable difference ({d.ci_low * 1000:+.1f}..{d.ci_high * 1000:+.1f} ms{cover})"
    return f"{d.median * 1000:+.1f} ms ({d.ci_low * 1000:+.1f}..{d.ci_high * 1000:+.1f}{cover})"


def cost_sentence(c: KexCost, keyed: bool = False) -> str | None:
    """Return what a kex costs against the baseline in one sentence, or None without a paired time; `keyed`: the
    rows have several host keys, so the sentence names its own."""
    if c.extra_time is None:
        return None
    parts = [f"{said(c.extra_time)} per connection"]
    for side, d in (("client", c.extra_client_cpu), ("server", c.extra_server_cpu)):
        if d is not None:
            parts.append(f"{said(d)} of {side} CPU")
    if c.extra_bytes:
        parts.append(f"{c.extra_bytes[0] + c.extra_bytes[1]:+d} bytes to the new keys")
    sc = c.scenario
    who = f"{client_name(sc.client, sc.mode)}: " if sc.client else ""
    key = f" with {sc.hostkey}" if keyed and sc.hostkey else ""
    return f"{who}{sc.kex}{key} against {BASELINE} (same rounds): {', '.join(parts)}"


def pick_cost(stored: Sequence[StoredScenario], pick: str) -> str:
    """Return what a picked post-quantum kex costs against the baseline, or how to measure it."""
    found = [c for c in kex_costs(stored) if kex.same(c.scenario.kex, pick)]
    keyed = len({c.scenario.hostkey for c in found}) > 1
    sentences = [s for c in found if (s := cost_sentence(c, keyed))]
    if sentences:
        return "cost of the post-quantum pick: " + "; ".join(sentences)
    return (
        f"cost of the post-quantum pick: not measured against {BASELINE} in this run (`sshbench latency --kex "
        f"{pick},{BASELINE}` measures both in the same rounds)"
    )
