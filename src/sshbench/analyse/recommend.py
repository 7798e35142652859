"""Recommendations from a run (pure): the fastest configuration overall, within a security policy, and the
quickest handshake, each with the gain it promises against what the client uses today.

The pick is made among the leader and the rows equivalent to it (ratio verdicts paired per round, sshbench.ratios):
the one the policy allows, then today's. Rows not told apart from the leader yet are named, not picked over it.
Host keys follow `claims.gains.keep_or_change`: a change only to a significantly quicker key, and nothing said
about keys that were not measured.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sshbench.analyse.claims.caveats import caveats
from sshbench.analyse.claims.core import Claim, ClaimKind
from sshbench.analyse.claims.fastest import pq_loss
from sshbench.analyse.claims.gains import Gain, Option, gain, keep_or_change
from sshbench.analyse.kexcost import pick_cost
from sshbench.analyse.policy import Policy
from sshbench.analyse.sweep import Combo, DimensionRow, Estimate, combinations, dimensions, measured_directions
from sshbench.analyse.sweep import ways_text as ways_of
from sshbench.discovery import Discovery, Negotiated
from sshbench.kex import is_post_quantum
from sshbench.model import is_aead
from sshbench.ratios import MARGIN, Word, judge, paired_ratio, unpaired_ratio
from sshbench.records import StoredScenario


@dataclass(frozen=True)
class Choice:
    """One recommended configuration with its expected gain."""

    title: str
    cipher: str | None
    mac: str | None
    kex: str | None
    hostkey: str | None
    rate: Estimate | None  # MB/s over `ways`
    latency: Estimate | None  # seconds
    gain: Gain | None
    latency_gain: Gain | None
    lists: dict[str, list[str]] = field(default_factory=dict)  # ssh_config lines: kind -> algorithms, best first
    predicted: bool = False
    ways: str = "both ways"  # what `rate` is over: both ways, download, upload
    equivalent: tuple[str, ...] = ()  # combinations equivalent to the fastest (the pick was made among them)
    inconclusive: tuple[str, ...] = ()  # combinations not told apart from the fastest yet
    equivalent_kex: tuple[str, ...] = ()
    inconclusive_kex: tuple[str, ...] = ()
    inconclusive_more: tuple[int | None, ...] = ()  # per inconclusive row: about how many more samples would decide
    inconclusive_kex_more: tuple[int | None, ...] = ()

    def claims(self) -> list[Claim]:
        """Return the sentences this choice states: the cipher and its gain, the handshake and its gain, and what
        stands with the pick (equivalent, not told apart yet)."""
        out = []
        if self.cipher:
            what = self.cipher if self.mac is None else f"{self.cipher} + {self.mac}"
            predicted = " (predicted)" if self.predicted else ""
            text = f"cipher: {what}{predicted}; " + gain_text(self.gain, f"throughput {self.ways}")
            out.append(Claim(ClaimKind.GAIN, self.title, text, self.gain.to_dict() if self.gain else {}))
        if self.kex:
            hostkey = f" / {self.hostkey}" if self.hostkey else " (your host key is left as it is)"
            text = f"handshake: {self.kex}{hostkey}; " + gain_text(self.latency_gain, "connection time")
            evidence = self.latency_gain.to_dict() if self.latency_gain else {}
            out.append(Claim(ClaimKind.GAIN, self.title, text, evidence))
        for what, equivalent, unsure, more in (
            ("combinations", self.equivalent, self.inconclusive, self.inconclusive_more),
            ("key exchanges", self.equivalent_kex, self.inconclusive_kex, self.inconclusive_kex_more),
        ):
            if equivalent:
                text = (
                    f"equivalent {what} (within the margin of the fastest; picked among them by the policy: "
                    f"allowed first, then what the client uses today, then post-quantum): {', '.join(equivalent)}"
                )
                out.append(Claim(ClaimKind.FASTEST, self.title, text, {"equivalent": list(equivalent)}))
            if unsure:
                each = ", ".join(_more(label, n) for label, n in zip(unsure, more, strict=False))
                text = f"{what} not told apart from the fastest yet: {each}"
                evidence = {"inconclusive": list(unsure), "more_samples": list(more)}
                out.append(Claim(ClaimKind.FASTEST, self.title, text, evidence))
        return out

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        out = {
            k: getattr(self, k)
            for k in (
                "title",
                "cipher",
                "mac",
                "kex",
                "hostkey",
                "lists",
                "predicted",
                "ways",
                "equivalent",
                "inconclusive",
                "equivalent_kex",
                "inconclusive_kex",
                "inconclusive_more",
                "inconclusive_kex_more",
            )
        }
        out["rate"] = None if self.rate is None else vars(self.rate)
        out["latency"] = None if self.latency is None else vars(self.latency)
        out["gain"] = None if self.gain is None else self.gain.to_dict()
        out["latency_gain"] = None if self.latency_gain is None else self.latency_gain.to_dict()
        return out


@dataclass(frozen=True)
class Recommendation:
    """Fastest overall, fastest within the policy, fastest handshake, and what the policy excluded."""

    overall: Choice | None
    within_policy: Choice | None
    handshake: Choice | None
    policy: dict[str, Any]
    excluded: list[tuple[str, str, str]]  # (kind, algorithm, reason)
    caveats: list[Claim]

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return {
            **{
                k: None if (c := getattr(self, k)) is None else c.to_dict()
                for k in ("overall", "within_policy", "handshake")
            },
            "policy": self.policy,
            "excluded": [list(e) for e in self.excluded],
            "caveats": [c.to_dict() for c in self.caveats],
        }


@dataclass(frozen=True)
class _Baseline:
    """What the plain client negotiates today, to state gains against."""

    default: Negotiated | None
    combo: Combo | None  # today's cipher (+ MAC), if it was measured
    kexes: list[DimensionRow]  # every measured kex, to find today's
    ok: Callable[[str, str | None], bool]  # the policy's verdict, to pick among equals
    margin: float

    def allowed(self, c: Combo) -> bool:
        """Return True when the policy allows a combination."""
        return self.ok("cipher", c.cipher) and self.ok("mac", c.mac)


def gain_text(g: Gain | None, unit: str) -> str:
    """Describe a gain in the claims vocabulary (claims/gains.py), or say that today's choice was not measured."""
    if g is None:
        return f"{unit}: what your client uses today was not measured: no gain is claimed"
    return g.text(unit)


def _standings(
    items: Sequence[Any],
    rounds: Callable[[Any], Mapping[int, float]],
    higher: bool,
    margin: float,
    interval: Callable[[Any], Estimate | None] = lambda item: None,
) -> tuple[list[Any], list[Any]]:
    """Return the items (best first) equivalent to the first one and those not told apart from it yet; the rest
    are significantly slower. An item without per-round values (a prediction) is never equivalent: it is slower
    when its interval and the first one's do not overlap, else not told apart."""
    if not items:
        return [], []
    lead = rounds(items[0])
    equivalent, inconclusive = [], []
    for item in items[1:]:
        mine = rounds(item)
        ratio = paired_ratio(lead, mine) or (
            unpaired_ratio(list(lead.values()), list(mine.values())) if len(lead) >= 3 and len(mine) >= 3 else None
        )
        verdict = None if ratio is None else judge(ratio, higher, margin)
        word = Word.INCONCLUSIVE if verdict is None else verdict.word
        a, b = interval(items[0]), interval(item)
        if ratio is None and a is not None and b is not None and (b.high < a.low or a.high < b.low):
            word = Word.SLOWER
        if word is Word.EQUIVALENT:
            equivalent.append(item)
        elif word is not Word.SLOWER:
            inconclusive.append((item, None if verdict is None else verdict.more))
    return equivalent, inconclusive


def _more(label: str, more: int | None) -> str:
    """Return a row not told apart from the fastest, with how many more samples would likely decide it."""
    if more is None:
        return f"{label} (more than 50 times its samples would be needed to decide)"
    return f"{label} (about {more} more sample{'s' if more > 1 else ''} each would likely decide)"


def _lists(pool: list[Combo], ks: list[DimensionRow], hostkey: str | None, ranked: bool) -> dict[str, list[str]]:
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
    if hostkey:
        lists["HostKeyAlgorithms"] = [hostkey]
    return lists


def _first(items: list[Any], chosen: Any) -> list[Any]:
    """Return the items with the chosen one first."""
    return [chosen, *(i for i in items if i is not chosen)] if items else items


def _choice(
    title: str, pool: list[Combo], ks: list[DimensionRow], hostkey: str | None, ranked: bool, base: _Baseline
) -> Choice | None:
    """Build one Choice from the pools: the pick among the fastest and its equivalents comes first."""
    if not pool and not ks:
        return None
    eq, unsure = _standings(pool, lambda c: c.combined_rounds(), True, base.margin, lambda c: c.combined)
    chosen = min([*pool[:1], *eq], key=lambda c: (not base.allowed(c), c is not base.combo)) if pool else None
    keq, kunsure = _standings(ks, lambda r: dict(r.rounds), False, base.margin)
    kex = min([*ks[:1], *keq], key=lambda r: _kex_preference(r, base)) if ks else None
    pool, ks = _first(pool, chosen), _first(ks, kex)
    return Choice(
        title=title,
        cipher=chosen.cipher if chosen else None,
        mac=chosen.mac if chosen else None,
        kex=kex.algorithm if kex else None,
        hostkey=hostkey,
        rate=chosen.combined if chosen else None,
        latency=kex.estimate if kex else None,
        gain=_gain(chosen, base) if chosen else None,
        latency_gain=_latency_gain(kex, base) if kex else None,
        lists=_lists(pool, ks, hostkey, ranked),
        predicted=bool(chosen and chosen.predicted),
        ways=ways_of(chosen.directions) if chosen else "none",
        equivalent=tuple(c.label for c in [*pool[:1], *eq] if c is not chosen) if eq else (),
        inconclusive=tuple(c.label for c, _ in unsure),
        inconclusive_more=tuple(more for _, more in unsure),
        equivalent_kex=tuple(r.algorithm for r in [*ks[:1], *keq] if r is not kex) if keq else (),
        inconclusive_kex=tuple(r.algorithm for r, _ in kunsure),
        inconclusive_kex_more=tuple(more for _, more in kunsure),
    )


def _gain(chosen: Combo, base: _Baseline) -> Gain | None:
    """Return the throughput gain of the chosen combination over today's (None when today's was not measured)."""
    if base.combo is None:
        return None
    return gain(
        chosen.combined_rounds(),
        base.combo.combined_rounds(),
        base.combo.label,
        True,
        base.margin,
        same=chosen is base.combo,
        predicted=chosen.predicted,
    )


def _latency_gain(kex: DimensionRow, base: _Baseline) -> Gain | None:
    """Return the connection-time change of the chosen kex against the kex negotiated today."""
    today = base.default.kex if base.default else None
    old = next((r for r in base.kexes if r.algorithm == today), None)
    if old is None:
        return None
    return gain(dict(kex.rounds), dict(old.rounds), old.algorithm, False, base.margin, same=kex is old)


def _kex_preference(r: DimensionRow, base: _Baseline) -> tuple[bool, bool, bool]:
    """Among equals: allowed by the policy, the kex used today, post-quantum."""
    today = base.default.kex if base.default else None
    return (not base.ok("kex", r.algorithm), r.algorithm != today, not is_post_quantum(r.algorithm))


def _quickest(rows: Sequence[DimensionRow], kind: str, allowed: Callable[[str, str], bool]) -> list[DimensionRow]:
    """Return allowed, measured per-kex or per-host-key rows, quickest first."""
    mine = [r for r in rows if r.kind == kind and r.estimate is not None and allowed(kind, r.algorithm)]
    return sorted(mine, key=lambda r: r.estimate.median if r.estimate else 0.0)


def _hostkey(
    dims: Sequence[DimensionRow], default: Negotiated | None, allowed: Callable[[str, str], bool], margin: float
) -> tuple[str | None, Claim | None]:
    """Return the host key to switch to (None: keep today's) and the claim that says why."""
    rows = [r for r in dims if r.kind == "hostkey" and allowed("hostkey", r.algorithm)]
    if not rows or default is None or default.hostkey is None:
        return None, None
    options = [Option(r.algorithm, dict(r.rounds), r.failure if r.estimate is None else None) for r in rows]
    return keep_or_change("host key", default.hostkey, options, margin)


def recommend(
    stored: Sequence[StoredScenario],
    discovery: Discovery | None,
    policy: Policy,
    full: bool,
    margin: float = MARGIN,
    caveats_more: Sequence[Claim] = (),
) -> Recommendation:
    """Choose configurations from a run's measurements under a policy."""
    dims = dimensions(stored, full)
    directions = measured_directions(stored)
    combos = [c for c in combinations(stored) if c.directions == directions]  # rank only what every way measured
    verdicts = {(k, a): policy.check(k, a) for k, a in _names(stored)}
    excluded = sorted((k, a, v.reason) for (k, a), v in verdicts.items() if not v.allowed)

    def ok(kind: str, algorithm: str | None) -> bool:
        """Return True if the policy allows the algorithm (None: not used)."""
        return algorithm is None or policy.check(kind, algorithm).allowed

    default = discovery.default() if discovery else None
    kexes = _quickest(dims, "kex", lambda k, a: True)
    any_key, any_note = _hostkey(dims, default, lambda k, a: True, margin)
    policy_key, policy_note = _hostkey(dims, default, ok, margin)
    allowed_combos = [c for c in combos if ok("cipher", c.cipher) and ok("mac", c.mac)]
    base = _Baseline(default, _find_default(combos, default), kexes, ok, margin)
    handshake = None
    if kexes:
        handshake = _choice(
            f"Fastest handshake within {policy.name}", [], _quickest(dims, "kex", ok), policy_key, True, base
        )
    overall = _choice("Fastest overall (any algorithm)", combos, kexes, any_key, False, base)
    within = _choice(
        f"Fastest within {policy.name}", allowed_combos, _quickest(dims, "kex", ok), policy_key, True, base
    )
    notes = caveats(excluded, combos, allowed_combos, directions, margin)
    notes += [any_note] if any_note else []
    notes += [policy_note] if policy_note and policy_key != any_key else []
    losses = sorted({loss for c in (overall, within) if c and (loss := pq_loss(default, c.kex))})
    notes += [Claim(ClaimKind.CAVEAT, "kex", loss) for loss in losses]
    picks = dict.fromkeys(c.kex for c in (within, handshake) if c and c.kex and is_post_quantum(c.kex))
    notes += [Claim(ClaimKind.CAVEAT, "kex", pick_cost(stored, pick)) for pick in picks if pick]
    return Recommendation(overall, within, handshake, policy.to_dict(), excluded, [*notes, *caveats_more])


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
    return next((c for c in combos if c.cipher == cipher and c.mac == mac and not c.predicted), None)
