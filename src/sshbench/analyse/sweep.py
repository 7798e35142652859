"""Sweep analysis (pure): per-dimension aggregates and ranked cipher x MAC combinations.

The factorised design measures each cipher with one reference MAC, each MAC with one reference cipher
(aes128-ctr), each kex with one host key and each host key with one kex. Costs per byte add up (encrypt,
then authenticate), so an unmeasured pair is predicted in time per byte:
    T(c, m) = T(c, m_ref) + T(c_ref, m) - T(c_ref, m_ref),   T = 1 / rate,
and marked as predicted. The interval of a prediction comes from the model's own error where the sweep measured
check pairs (off both reference slices, `--macs each`): their log ratios of measured to predicted give the model's
residual error s (root mean square, one degree of freedom per check), and the prediction's interval is
exp(+-t(0.975, checks) x sqrt(s^2 + u^2)), u the inputs' own uncertainty propagated through T (each 95 % CI read as
+-1.96 standard errors). Without check pairs (older runs, other designs) the three intervals are combined
conservatively (every lower bound with every upper bound). A prediction whose interval reaches beyond +-50 % of its
value says nothing and is listed as not predicted.

A MAC is only given a row when it was measured with the reference cipher (aes128-ctr, or a cipher measured with
several MACs): a MAC measured with one cipher alone is that cipher's speed, not the MAC's. A cipher never measured
with the reference MAC keeps a row with its own MAC, and its basis says which.

Every scenario of a dimension is listed, measured or not: failed and skipped ones carry their reason, so a
summary never hides them. A combination's rate "both ways" (harmonic mean of download and upload) exists only
when both ways were measured; otherwise it is the one way that was.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sshbench.analyse.results import by_round
from sshbench.exact import t_ppf
from sshbench.model import METRICS, Direction, Kind, is_aead
from sshbench.records import StoredScenario
from sshbench.stats import summarize

MAC_REFERENCE = "aes128-ctr"  # the cipher `--macs each` pairs with every MAC
PREDICTION_LIMIT = 0.5  # a prediction whose interval reaches beyond +-50 % of its value is not shown
WAYS = {"down": "download", "up": "upload"}


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


Rounds = tuple[tuple[int, float], ...]


@dataclass(frozen=True)
class DimensionRow:
    """The speed of one algorithm of one kind (cipher, MAC, kex, host key), for one direction; or why it has none."""

    kind: str
    algorithm: str
    direction: str | None  # "down"/"up" for ciphers and MACs, None for kex and host keys
    estimate: Estimate | None  # None: not measured (failure says why)
    basis: str  # how the value was obtained, e.g. "with umac-64-etm@openssh.com" or "pooled over 9 combinations"
    failure: str | None = None
    rounds: Rounds = ()  # (round, value): the per-round values behind the estimate, for paired ratios


def _merged_rounds(members: Sequence[StoredScenario]) -> Rounds:
    """Return per-round values of several scenarios (the median of a round's values)."""
    per: dict[int, list[float]] = {}
    for st in members:
        for r, v in by_round(st).items():
            per.setdefault(r, []).append(v)
    return tuple(sorted((r, statistics.median(v)) for r, v in per.items()))


def _reference(stored: Sequence[StoredScenario], field_: str, partner: str) -> str | None:
    """Return the design's reference partner: the partner measured with the most values of `field_` (for MACs,
    aes128-ctr when it was measured with as many MACs as any cipher). For MACs, None when no cipher was measured
    with two MACs or more (and aes128-ctr was not measured): a MAC measured with one cipher alone is that cipher's
    speed, not the MAC's."""
    pairs = {(getattr(st.scenario, partner), getattr(st.scenario, field_)) for st in stored}
    counts = Counter(p for p, _ in pairs if p is not None)
    if not counts:
        return None
    most = max(counts.values())
    if partner == "cipher":
        if counts.get(MAC_REFERENCE) == most:
            return MAC_REFERENCE
        if most < 2:
            return None
    return str(sorted(p for p, c in counts.items() if c == most)[0])


def _failure(members: Sequence[StoredScenario]) -> str:
    """Return why none of a dimension value's scenarios has a measured value."""
    return next((st.failure for st in members if st.failure), None) or "not measured"


def _dimension(
    stored: Sequence[StoredScenario], field_: str, partner: str, kind: str, direction: str | None, full: bool
) -> list[DimensionRow]:
    """Aggregate one dimension: a reference slice (factorised design) or pooled over combinations (full); values
    that have no measured sample are rows too, with their reason."""
    groups: dict[str, list[StoredScenario]] = {}
    for st in stored:
        value = getattr(st.scenario, field_)
        if value is not None:
            groups.setdefault(value, []).append(st)
    ref = None if full else _reference([st for st in stored if getattr(st.scenario, field_)], field_, partner)
    rows = []
    for value, members in groups.items():
        if full:
            chosen, basis = members, f"pooled over {len(members)} combination(s)"
        else:
            exact = [st for st in members if getattr(st.scenario, partner) in (ref, None)]
            if not exact and partner == "cipher":
                continue  # a MAC measured without the reference cipher: its own speed is not separable
            chosen = exact or members[:1]  # a cipher never measured with the reference MAC: with its own, said so
            other = getattr(chosen[0].scenario, partner)
            basis = f"with {other}" if other else "(AEAD: no MAC)"
        est = estimate([v for st in chosen for v in st.values()])
        failure = None if est is not None else _failure(chosen)
        rows.append(DimensionRow(kind, value, direction, est, basis, failure, _merged_rounds(chosen)))
    return rows


def best_first(rows: Sequence[DimensionRow], kind: Kind) -> list[DimensionRow]:
    """Sort rows of one kind of measurement best first; rows without a value last."""
    sign = -1 if METRICS[kind].higher_is_better else 1
    measured = sorted((r for r in rows if r.estimate), key=lambda r: sign * r.estimate.median if r.estimate else 0)
    return measured + [r for r in rows if r.estimate is None]


def dimensions(stored: Sequence[StoredScenario], full: bool) -> list[DimensionRow]:
    """Return per-cipher and per-MAC rows for each direction, and per-kex and per-host-key rows."""
    rows: list[DimensionRow] = []
    lat = [st for st in stored if st.scenario.kind is Kind.LATENCY]
    rows += best_first(_dimension(lat, "kex", "hostkey", "kex", None, full), Kind.LATENCY)
    rows += best_first(_dimension(lat, "hostkey", "kex", "hostkey", None, full), Kind.LATENCY)
    for d in Direction:
        thr = [
            st
            for st in stored
            if st.scenario.kind is Kind.THROUGHPUT
            and st.scenario.direction is d
            and not st.scenario.is_check  # a tune check's copies: another size
        ]
        ciphers = _dimension(thr, "cipher", "mac", "cipher", d.value, full)
        plain = [st for st in thr if not is_aead(st.scenario.cipher or "")]
        macs = _dimension(plain, "mac", "cipher", "mac", d.value, full)
        rows += best_first(ciphers, Kind.THROUGHPUT) + best_first(macs, Kind.THROUGHPUT)
    return rows


def measured_directions(stored: Sequence[StoredScenario]) -> tuple[str, ...]:
    """Return the directions a run has measured throughput in (download first)."""
    found = {
        st.scenario.direction.value
        for st in stored
        if st.scenario.kind is Kind.THROUGHPUT and st.scenario.direction and st.values()
    }
    return tuple(d for d in WAYS if d in found)


def ways_text(directions: Sequence[str]) -> str:
    """Return what an aggregate over these directions is called: `both ways`, `download`, `upload`."""
    return "both ways" if len(directions) > 1 else WAYS.get(directions[0], directions[0]) if directions else "none"


def _hmean(xs: Sequence[float]) -> float:
    """Harmonic mean (the rate of moving the same amount each way)."""
    return len(xs) / sum(1 / x for x in xs)


@dataclass(frozen=True)
class Combo:
    """A cipher (+ MAC) with its rate per direction and over the directions measured."""

    cipher: str
    mac: str | None
    rates: dict[str, Estimate]  # direction -> MB/s
    predicted: bool = False
    rounds: Mapping[str, Mapping[int, float]] = field(default_factory=dict)  # direction -> round -> MB/s (measured)

    @property
    def directions(self) -> tuple[str, ...]:
        """Return the directions this combination has a rate for, download first."""
        return tuple(d for d in WAYS if d in self.rates)

    @property
    def combined(self) -> Estimate:
        """Return the rate over the directions measured (harmonic mean both ways), with a conservative interval."""
        ests = [self.rates[d] for d in self.directions]
        if len(ests) == 1:
            return ests[0]
        return Estimate(
            _hmean([e.median for e in ests]),
            _hmean([e.low for e in ests]),
            _hmean([e.high for e in ests]),
            min(e.n for e in ests),
        )

    def combined_rounds(self) -> dict[int, float]:
        """Return the combined rate per round in which every direction was measured (empty for predictions)."""
        ways = [self.rounds.get(d, {}) for d in self.directions]
        common = set.intersection(*(set(w) for w in ways)) if ways else set()
        return {r: _hmean([w[r] for w in ways]) for r in sorted(common)}

    @property
    def label(self) -> str:
        """Return `cipher + MAC` (or the cipher alone for AEAD)."""
        return self.cipher if self.mac is None else f"{self.cipher} + {self.mac}"


@dataclass(frozen=True)
class ModelError:
    """The factorised model's residual error in one direction: root mean square log ratio of measured to predicted
    over the check pairs, and how many checks it rests on."""

    rms: float
    checks: int


def _point(a: Estimate, b: Estimate, ref: Estimate) -> float:
    """Return the predicted time per byte T(a) + T(b) - T(ref)."""
    return 1 / a.median + 1 / b.median - 1 / ref.median


def _input_spread(a: Estimate, b: Estimate, ref: Estimate, t: float) -> float:
    """Return the relative standard error of a predicted T from its inputs' 95 % intervals."""
    var = sum((e.rel_halfwidth / 1.96 / e.median) ** 2 for e in (a, b, ref))  # sd of 1/e ~ rel sd / e
    return math.sqrt(var) / t


def _predict(a: Estimate, b: Estimate, ref: Estimate, error: ModelError | None = None) -> Estimate | None:
    """Predict a rate from T = T(a) + T(b) - T(ref) in time per byte; None when the model breaks down or its
    interval says nothing (beyond +-PREDICTION_LIMIT)."""
    t = _point(a, b, ref)
    if t <= 0:
        return None
    n = min(a.n, b.n, ref.n)
    if error is not None:
        half = t_ppf(0.975, error.checks) * math.hypot(error.rms, _input_spread(a, b, ref, t))
        est = Estimate(1 / t, math.exp(-half) / t, math.exp(half) / t, n)
    else:
        t_fast = 1 / a.high + 1 / b.high - 1 / ref.low
        t_slow = 1 / a.low + 1 / b.low - 1 / ref.high
        if t_fast <= 0 or t_slow <= 0:
            return None
        est = Estimate(1 / t, 1 / t_slow, 1 / t_fast, n)
    inside = (1 - PREDICTION_LIMIT) * est.median <= est.low and est.high <= (1 + PREDICTION_LIMIT) * est.median
    return est if inside else None


def _measured(stored: Sequence[StoredScenario]) -> dict[tuple[str, str | None], Combo]:
    """Return each measured cipher (+ MAC) with its rates and per-round values per direction."""
    rates: dict[tuple[str, str | None], dict[str, Estimate]] = {}
    rounds: dict[tuple[str, str | None], dict[str, dict[int, float]]] = {}
    for st in stored:
        sc = st.scenario
        est = estimate(st.values())
        if sc.kind is Kind.THROUGHPUT and sc.cipher and sc.direction and est:
            rates.setdefault((sc.cipher, sc.mac), {})[sc.direction.value] = est
            rounds.setdefault((sc.cipher, sc.mac), {})[sc.direction.value] = by_round(st)
    return {k: Combo(k[0], k[1], v, rounds=rounds[k]) for k, v in rates.items()}


def model_errors(measured: Mapping[tuple[str, str | None], Combo], cref: str, mref: str) -> dict[str, ModelError]:
    """Return the model's residual error per direction from the check pairs (measured off both reference slices)."""
    logs: dict[str, list[float]] = {}
    for (c, m), combo in measured.items():
        if c == cref or m in (mref, None) or (c, mref) not in measured or (cref, m) not in measured:
            continue
        for d, got in combo.rates.items():
            a, b = measured[(c, mref)].rates.get(d), measured[(cref, m)].rates.get(d)
            ref = measured[(cref, mref)].rates.get(d)
            if a and b and ref and _point(a, b, ref) > 0:
                logs.setdefault(d, []).append(math.log(got.median * _point(a, b, ref)))  # measured / predicted
    return {d: ModelError(math.sqrt(statistics.fmean(x * x for x in v)), len(v)) for d, v in logs.items()}


def predictions(stored: Sequence[StoredScenario]) -> tuple[list[Combo], list[str]]:
    """Return the predicted cipher x MAC pairs of a factorised sweep, and the pairs not predicted (interval too
    wide, or the model broke down)."""
    measured = _measured(stored)
    plain = [st for st in stored if st.scenario.kind is Kind.THROUGHPUT and st.values() and st.scenario.mac]
    mref = _reference(plain, "cipher", "mac")
    cref = _reference(plain, "mac", "cipher")
    if not (mref and cref and (cref, mref) in measured):
        return [], []
    ciphers = sorted({c for c, m in measured if m == mref})
    macs = sorted({m for c, m in measured if c == cref and m is not None})
    errors = model_errors(measured, cref, mref)
    out, missing = [], []
    for c in ciphers:
        for m in macs:
            if (c, m) in measured:
                continue
            rates = {}
            for d, ref in measured[(cref, mref)].rates.items():
                a, b = measured[(c, mref)].rates.get(d), measured[(cref, m)].rates.get(d)
                p = _predict(a, b, ref, errors.get(d)) if a and b else None
                if p:
                    rates[d] = p
            if rates and len(rates) == len(measured[(cref, mref)].rates):
                out.append(Combo(c, m, rates, predicted=True))
            else:
                missing.append(f"{c} + {m}")
    return out, missing


def combinations(stored: Sequence[StoredScenario]) -> list[Combo]:
    """Return measured cipher x MAC combinations plus predicted ones, fastest (over the directions measured)
    first."""
    combos = list(_measured(stored).values()) + predictions(stored)[0]
    return sorted(combos, key=lambda x: -x.combined.median)
