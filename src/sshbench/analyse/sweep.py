"""Sweep analysis (pure): per-dimension aggregates, ranked cipher x MAC combinations, and recommendations.

The factorised design measures each cipher with one reference MAC, each MAC with one reference cipher
(aes128-ctr), each kex with one host key and each host key with one kex. Costs per byte add up (encrypt,
then authenticate), so an unmeasured pair is predicted in time per byte:
    T(c, m) = T(c, m_ref) + T(c_ref, m) - T(c_ref, m_ref),   T = 1 / rate,
and marked as predicted. Intervals combined from several estimates are conservative (every lower
bound with every upper bound), not exact 95 % intervals; they say so where they are shown.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sshbench.analyse.caveats import caveats
from sshbench.analyse.policy import Policy, is_post_quantum
from sshbench.analyse.winners import pq_loss, tie_first
from sshbench.model import METRICS, Direction, Kind, Scenario, is_aead
from sshbench.records import Discovery, Negotiated, StoredScenario
from sshbench.stats import summarize


@dataclass(frozen=True)
class Estimate:
    """A median with an interval (95 % CI, or a conservative combination of CIs) and its sample count."""

    median: float
    low: float
    high: float
    n: int

    @property
    def rel_halfwidth(self) -> float:
        """Return the interval's half-width relative to the median."""
        return (self.high - self.low) / 2 / self.median if self.median else float("inf")


def estimate(values: Sequence[float]) -> Estimate | None:
    """Summarize values as an Estimate (None when there are none)."""
    if not values:
        return None
    s = summarize(values)
    return Estimate(s.median, s.ci_low, s.ci_high, s.n)


@dataclass(frozen=True)
class DimensionRow:
    """The speed of one algorithm of one kind (cipher, MAC, kex, host key), for one direction."""

    kind: str
    algorithm: str
    direction: str | None  # "down"/"up" for ciphers and MACs, None for kex and host keys
    estimate: Estimate
    basis: str  # how the value was obtained, e.g. "with umac-64-etm@openssh.com" or "pooled over 9 combinations"


def _reference(scenarios: Sequence[Scenario], partner: str) -> str | None:
    """Return the most frequent value of the partner field (the design's reference algorithm)."""
    counts = Counter(getattr(sc, partner) for sc in scenarios if getattr(sc, partner) is not None)
    return counts.most_common(1)[0][0] if counts else None


def _dimension(
    stored: Sequence[StoredScenario], field_: str, partner: str, kind: str, direction: str | None, full: bool
) -> list[DimensionRow]:
    """Aggregate one dimension: a reference slice (factorised design) or pooled over combinations (full)."""
    groups: dict[str, list[StoredScenario]] = {}
    for st in stored:
        value = getattr(st.scenario, field_)
        if value is not None:
            groups.setdefault(value, []).append(st)
    ref = _reference([st.scenario for st in stored if getattr(st.scenario, field_) is not None], partner)
    rows = []
    for value, members in groups.items():
        if full:
            chosen, basis = members, f"pooled over {len(members)} combination(s)"
        else:
            exact = [st for st in members if getattr(st.scenario, partner) in (ref, None)]
            chosen = exact or members
            other = getattr(chosen[0].scenario, partner)
            basis = f"with {other}" if other else "(AEAD: no MAC)"
        est = estimate([v for st in chosen for v in st.values()])
        if est is not None:
            rows.append(DimensionRow(kind, value, direction, est, basis))
    return rows


def best_first(rows: Sequence[DimensionRow], kind: Kind) -> list[DimensionRow]:
    """Sort rows of one kind of measurement best first."""
    sign = -1 if METRICS[kind].higher_is_better else 1
    return sorted(rows, key=lambda r: sign * r.estimate.median)


def dimensions(stored: Sequence[StoredScenario], full: bool) -> list[DimensionRow]:
    """Return per-cipher and per-MAC rows for each direction, and per-kex and per-host-key rows."""
    rows: list[DimensionRow] = []
    lat = [st for st in stored if st.scenario.kind is Kind.LATENCY]
    rows += best_first(_dimension(lat, "kex", "hostkey", "kex", None, full), Kind.LATENCY)
    rows += best_first(_dimension(lat, "hostkey", "kex", "hostkey", None, full), Kind.LATENCY)
    for d in Direction:
        thr = [st for st in stored if st.scenario.kind is Kind.THROUGHPUT and st.scenario.direction is d]
        ciphers = _dimension(thr, "cipher", "mac", "cipher", d.value, full)
        plain = [st for st in thr if not is_aead(st.scenario.cipher or "")]
        macs = _dimension(plain, "mac", "cipher", "mac", d.value, full)
        rows += best_first(ciphers, Kind.THROUGHPUT) + best_first(macs, Kind.THROUGHPUT)
    return rows


@dataclass(frozen=True)
class Combo:
    """A cipher (+ MAC) with its rate per direction and both ways combined."""

    cipher: str
    mac: str | None
    rates: dict[str, Estimate]  # direction -> MB/s
    predicted: bool = False

    @property
    def combined(self) -> Estimate:
        """Return the rate for moving the same amount both ways (harmonic mean), with a conservative interval."""
        ests = list(self.rates.values())
        if len(ests) == 1:
            return ests[0]

        def hmean(xs: Sequence[float]) -> float:
            """Harmonic mean."""
            return len(xs) / sum(1 / x for x in xs)

        return Estimate(
            hmean([e.median for e in ests]),
            hmean([e.low for e in ests]),
            hmean([e.high for e in ests]),
            min(e.n for e in ests),
        )

    @property
    def label(self) -> str:
        """Return `cipher + MAC` (or the cipher alone for AEAD)."""
        return self.cipher if self.mac is None else f"{self.cipher} + {self.mac}"


def _predict(a: Estimate, b: Estimate, ref: Estimate) -> Estimate | None:
    """Predict a rate from T = T(a) + T(b) - T(ref) in time per byte; None when the model breaks down."""
    t = 1 / a.median + 1 / b.median - 1 / ref.median
    t_fast = 1 / a.high + 1 / b.high - 1 / ref.low
    t_slow = 1 / a.low + 1 / b.low - 1 / ref.high
    if t <= 0 or t_fast <= 0 or t_slow <= 0:
        return None
    return Estimate(1 / t, 1 / t_slow, 1 / t_fast, min(a.n, b.n, ref.n))


def combinations(stored: Sequence[StoredScenario]) -> list[Combo]:
    """Return measured cipher x MAC combinations plus predicted ones, fastest (both ways) first."""
    measured: dict[tuple[str, str | None], dict[str, Estimate]] = {}
    for st in stored:
        sc = st.scenario
        est = estimate(st.values())
        if sc.kind is Kind.THROUGHPUT and sc.cipher and sc.direction and est:
            measured.setdefault((sc.cipher, sc.mac), {})[sc.direction.value] = est
    combos = [Combo(c, m, rates) for (c, m), rates in measured.items()]
    plain = [(c, m) for (c, m) in measured if m is not None]
    mref = _reference([Scenario(Kind.THROUGHPUT, cipher=c, mac=m) for c, m in plain], "mac")
    cref = _reference([Scenario(Kind.THROUGHPUT, cipher=c, mac=m) for c, m in plain if m != mref], "cipher")
    if mref and cref and (cref, mref) in measured:
        ciphers = {c for c, m in plain if m == mref}
        macs = {m for c, m in plain if c == cref and m is not None}
        for c in sorted(ciphers):
            for m in sorted(macs):
                if (c, m) in measured:
                    continue
                rates = {}
                for d, ref in measured[(cref, mref)].items():
                    a, b = measured[(c, mref)].get(d), measured[(cref, m)].get(d)
                    p = _predict(a, b, ref) if a and b else None
                    if p:
                        rates[d] = p
                if rates:
                    combos.append(Combo(c, m, rates, predicted=True))
    return sorted(combos, key=lambda x: -x.combined.median)


@dataclass(frozen=True)
class Gain:
    """Relative change against a baseline (conservative interval).

    Throughput: +12 % means 12 % more MB/s. Connection time: -30 % means 30 % less time.
    """

    percent: float
    low: float
    high: float
    baseline: str


def gain(new: Estimate, old: Estimate, baseline: str) -> Gain:
    """Return the change of `new` against `old` in % (MB/s, or time when lower is better), conservatively bounded."""
    ratio, low, high = new.median / old.median, new.low / old.high, new.high / old.low
    return Gain(100 * (ratio - 1), 100 * (low - 1), 100 * (high - 1), baseline)


@dataclass(frozen=True)
class Choice:
    """One recommended configuration with its expected gain and caveats."""

    title: str
    cipher: str | None
    mac: str | None
    kex: str | None
    hostkey: str | None
    rate: Estimate | None  # MB/s both ways
    latency: Estimate | None  # seconds
    gain: Gain | None
    latency_gain: Gain | None
    lists: dict[str, list[str]] = field(default_factory=dict)  # ssh_config lines: kind -> algorithms, best first
    predicted: bool = False
    tied: tuple[str, ...] = ()  # combinations tied for fastest (the pick was made within them by the policy)
    tied_kex: tuple[str, ...] = ()  # key exchanges tied for quickest


@dataclass(frozen=True)
class Recommendation:
    """Fastest overall, fastest within the policy, fastest handshake, and what the policy excluded."""

    overall: Choice | None
    within_policy: Choice | None
    handshake: Choice | None
    policy: dict[str, Any]
    excluded: list[tuple[str, str, str]]  # (kind, algorithm, reason)
    caveats: list[str]


def _best_latency(rows: Sequence[DimensionRow], kind: str, allowed: Any) -> list[DimensionRow]:
    """Return allowed per-kex or per-host-key rows, quickest first."""
    return sorted((r for r in rows if r.kind == kind and allowed(kind, r.algorithm)), key=lambda r: r.estimate.median)


@dataclass(frozen=True)
class _Baseline:
    """What the plain client negotiates today, to state gains against."""

    default: Negotiated | None
    combo: Combo | None  # today's cipher (+ MAC), if it was measured
    kexes: list[DimensionRow]  # every measured kex, to find today's
    ok: Callable[[str, str | None], bool]  # the policy's verdict, to pick within a tie

    def allowed(self, c: Combo) -> bool:
        """Return True when the policy allows a combination."""
        return self.ok("cipher", c.cipher) and self.ok("mac", c.mac)


def _lists(pool: list[Combo], ks: list[DimensionRow], hs: list[DimensionRow], ranked: bool) -> dict[str, list[str]]:
    """Return the config lines of a choice: the best of each kind, or every allowed one best first (ranked)."""
    best = pool[0] if pool else None
    lists: dict[str, list[str]] = {}
    if best:
        lists["Ciphers"] = list(dict.fromkeys(c.cipher for c in pool)) if ranked else [best.cipher]
        macs = [c.mac for c in pool if c.mac] if ranked else ([best.mac] if best.mac else [])
        if macs:
            lists["MACs"] = list(dict.fromkeys(macs))
    if ks:
        lists["KexAlgorithms"] = [r.algorithm for r in ks] if ranked else [ks[0].algorithm]
    if hs:
        lists["HostKeyAlgorithms"] = [r.algorithm for r in hs] if ranked else [hs[0].algorithm]
    return lists


def _choice(
    title: str, pool: list[Combo], ks: list[DimensionRow], hs: list[DimensionRow], ranked: bool, base: _Baseline
) -> Choice | None:
    """Build one Choice from the pools: the pick within the group tied for fastest comes first."""
    if not pool and not ks:
        return None
    pool, tied = tie_first(pool, lambda c: c.combined, lambda c: (not base.allowed(c), c is not base.combo))
    ks, tied_kex = tie_first(ks, lambda r: r.estimate, lambda r: _kex_preference(r, base))
    best = pool[0] if pool else None
    return Choice(
        title=title,
        cipher=best.cipher if best else None,
        mac=best.mac if best else None,
        kex=ks[0].algorithm if ks else None,
        hostkey=hs[0].algorithm if hs else None,
        rate=best.combined if best else None,
        latency=ks[0].estimate if ks else None,
        gain=gain(best.combined, base.combo.combined, base.combo.label) if best and base.combo else None,
        latency_gain=_latency_gain(ks, base.kexes, base.default),
        lists=_lists(pool, ks, hs, ranked),
        predicted=bool(best and best.predicted),
        tied=tuple(c.label for c in tied) if len(tied) > 1 else (),
        tied_kex=tuple(r.algorithm for r in tied_kex) if len(tied_kex) > 1 else (),
    )


def _kex_preference(r: DimensionRow, base: _Baseline) -> tuple[bool, bool, bool]:
    """Within a tie: allowed by the policy, the kex used today, post-quantum."""
    today = base.default.kex if base.default else None
    return (not base.ok("kex", r.algorithm), r.algorithm != today, not is_post_quantum(r.algorithm))


def recommend(
    stored: Sequence[StoredScenario], discovery: Discovery | None, policy: Policy, full: bool
) -> Recommendation:
    """Choose configurations from a run's measurements under a policy."""
    dims = dimensions(stored, full)
    every = combinations(stored)
    directions = max((len(c.rates) for c in every), default=0)
    combos = [c for c in every if len(c.rates) == directions]  # rank only combinations known both ways
    verdicts = {(k, a): policy.check(k, a) for k, a in _names(stored)}
    excluded = sorted((k, a, v.reason) for (k, a), v in verdicts.items() if not v.allowed)

    def ok(kind: str, algorithm: str | None) -> bool:
        """Return True if the policy allows the algorithm (None: not used)."""
        return algorithm is None or policy.check(kind, algorithm).allowed

    default = discovery.default() if discovery else None
    kexes = _best_latency(dims, "kex", lambda k, a: True)
    hostkeys, hk_note = _worth_changing(_best_latency(dims, "hostkey", lambda k, a: True), default)
    pkexes = _best_latency(dims, "kex", ok)
    phostkeys, phk_note = _worth_changing(_best_latency(dims, "hostkey", ok), default)
    allowed_combos = [c for c in combos if ok("cipher", c.cipher) and ok("mac", c.mac)]
    notes = caveats(excluded, combos, allowed_combos) + sorted({n for n in (hk_note, phk_note) if n})
    base = _Baseline(default, _find_default(combos, default), kexes, ok)
    handshake = None
    if kexes:
        handshake = _choice(f"Fastest handshake within {policy.name}", [], pkexes, phostkeys, True, base)
    overall = _choice("Fastest overall (any algorithm)", combos, kexes, hostkeys, False, base)
    within = _choice(f"Fastest within {policy.name}", allowed_combos, pkexes, phostkeys, True, base)
    notes += sorted({loss for c in (overall, within) if c and (loss := pq_loss(default, c.kex))})
    return Recommendation(
        overall=overall,
        within_policy=within,
        handshake=handshake,
        policy=policy.to_dict(),
        excluded=excluded,
        caveats=notes,
    )


def _worth_changing(rows: list[DimensionRow], default: Negotiated | None) -> tuple[list[DimensionRow], str]:
    """Keep host-key advice only when it beats the default host key significantly (a new key must be verified)."""
    current = next((r for r in rows if default and r.algorithm == default.hostkey), None)
    if not rows or current is None:
        return rows, ""
    if rows[0] is current:
        return [], f"your current host key {current.algorithm} is the quickest: keep it (no HostKeyAlgorithms line)"
    if rows[0].estimate.high < current.estimate.low:
        note = f"switching host key to {rows[0].algorithm} means verifying that host key in known_hosts first"
        return rows, note
    tied = f"host keys are statistically tied with your current {current.algorithm}"
    return [], f"{tied}: keep it (no HostKeyAlgorithms line)"


def _names(stored: Sequence[StoredScenario]) -> list[tuple[str, str]]:
    """Return every (kind, algorithm) that appears in the run's scenarios."""
    out = []
    for st in stored:
        for kind in ("kex", "hostkey", "cipher", "mac"):
            value = getattr(st.scenario, kind)
            if value is not None:
                out.append((kind, value))
    return out


def _find_default(combos: Sequence[Combo], default: Negotiated | None) -> Combo | None:
    """Return the combination the plain client negotiates today, if it was measured."""
    if not default:
        return None
    cipher = default.cipher
    mac = None if is_aead(cipher or "") else default.mac
    return next((c for c in combos if c.cipher == cipher and c.mac == mac), None)


def _latency_gain(
    ks: Sequence[DimensionRow], all_kex: Sequence[DimensionRow], default: Negotiated | None
) -> Gain | None:
    """Return the handshake speed-up of the chosen kex over the kex negotiated by default."""
    if not ks or not default:
        return None
    base = next((r for r in all_kex if r.algorithm == default.kex), None)
    return gain(ks[0].estimate, base.estimate, base.algorithm) if base else None


def to_document(
    stored: Sequence[StoredScenario], discovery: Discovery | None, policy: Policy, full: bool, top: int = 10
) -> dict[str, Any]:
    """Return a sweep's derived results as a JSON-ready document (computed on read, printed by --json)."""
    combos = combinations(stored)
    return {
        "design": "full cartesian product" if full else "factorised",
        "dimensions": [dataclasses.asdict(r) for r in dimensions(stored, full)],
        "top": [
            {**dataclasses.asdict(c), "label": c.label, "both_ways": dataclasses.asdict(c.combined)}
            for c in combos[:top]
        ],
        "recommendation": dataclasses.asdict(recommend(stored, discovery, policy, full)),
    }
