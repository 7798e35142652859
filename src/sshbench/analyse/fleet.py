"""A fleet read as a whole: one row per host, summaries per inventory group, hosts far slower to connect than
their group, and one configuration for every host: the fastest key exchange and cipher within the policy
that the hosts offer, measured on each host, with the hosts that would need a change to accept it.

Speed is compared within each host (a host's fastest algorithm is its own reference), so a slow host does not
outweigh a fast one: an algorithm's score is how often it is fastest or statistically tied for fastest, then
the geometric mean of its ratio to each host's fastest. Algorithms every host offers come first.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from sshbench.analyse.claims.fastest import pq_loss
from sshbench.analyse.policy import Policy
from sshbench.discovery import Discovery
from sshbench.model import Direction, Kind, is_aead
from sshbench.records import FleetHost, StoredRun
from sshbench.samples import RunStatus
from sshbench.stats import MIN_RANKED, Summary, summarize

OUTLIER_FACTOR = 1.5  # a host is an outlier when even its CI's low end is this far above its group's median
MIN_GROUP = 3  # hosts measured in a group before outliers are named
KEYWORDS = {"kex": "KexAlgorithms", "cipher": "Ciphers", "mac": "MACs"}


@dataclass(frozen=True)
class HostRow:
    """One host as the fleet table shows it."""

    host: FleetHost
    discovery: Discovery | None
    status: RunStatus | None
    connect: Summary | None  # today's connection time: the default kex and host key
    connects: dict[str, Summary] = field(default_factory=dict)  # connection time per kex
    rates: dict[tuple[str, Direction], Summary] = field(default_factory=dict)  # throughput per cipher and way
    weak: tuple[str, ...] = ()  # offered algorithms the policy rejects, as "kind name"

    @property
    def measured(self) -> bool:
        """Return True when the host's connection time was measured."""
        return self.connect is not None and self.host.failure is None

    def negotiated(self, kind: str) -> str | None:
        """Return what the default client profile negotiated with this host."""
        default = self.discovery.default() if self.discovery else None
        return None if default is None else getattr(default, kind)

    def offers(self, kind: str, name: str) -> bool:
        """Return True when the host offers the algorithm (its KEXINIT, else what the client could share)."""
        if self.discovery is None:
            return False
        return name in (self.discovery.server_lists().get(kind) or self.discovery.shared(kind))


def host_rows(stored: StoredRun, policy: Policy) -> list[HostRow]:
    """Return one row per host of a fleet run, in inventory order."""
    rows = []
    for host, run in stored.hosts:
        disc = run.run.discovery if run else None
        connects: dict[str, Summary] = {}
        rates: dict[tuple[str, Direction], Summary] = {}
        for st in run.scenarios if run else ():
            values, sc = st.values(), st.scenario
            if not values:
                continue
            if sc.kind is Kind.LATENCY and sc.kex:
                connects[sc.kex] = summarize(values)
            elif sc.kind is Kind.THROUGHPUT and sc.cipher and sc.direction:
                rates[(sc.cipher, sc.direction)] = summarize(values)
        default = disc.default() if disc else None
        connect = connects.get(default.kex) if default and default.kex else None
        weak = tuple(
            f"{kind} {name}"
            for kind, names in (disc.server_lists() if disc else {}).items()
            for name in names
            if kind in KEYWORDS and not policy.check(kind, name).allowed
        )
        rows.append(HostRow(host, disc, run.run.status if run else None, connect, connects, rates, weak))
    return rows


@dataclass(frozen=True)
class GroupRow:
    """One inventory group: its hosts, how many were measured, their connection times, weak offers."""

    name: str
    hosts: int
    measured: int
    connect: float | None  # median of its hosts' median connection times, seconds
    fastest: float | None
    slowest: float | None
    weak_hosts: int


def group_rows(rows: Sequence[HostRow]) -> list[GroupRow]:
    """Return a row per inventory group, in the order groups first appear."""
    groups: dict[str, list[HostRow]] = {}
    for row in rows:
        for g in row.host.groups:
            groups.setdefault(g, []).append(row)
    out = []
    for name, members in groups.items():
        times = [r.connect.median for r in members if r.measured and r.connect]
        out.append(
            GroupRow(
                name,
                len(members),
                len(times),
                statistics.median(times) if times else None,
                min(times, default=None),
                max(times, default=None),
                sum(1 for r in members if r.weak),
            )
        )
    return out


@dataclass(frozen=True)
class Outlier:
    """A host far slower to connect than the other hosts of its group."""

    host: str
    group: str
    connect: Summary
    group_median: float  # median of the other hosts' medians

    @property
    def ratio(self) -> float:
        """Return how many times its group's median the host's median is."""
        return self.connect.median / self.group_median


def outliers(rows: Sequence[HostRow]) -> list[Outlier]:
    """Return hosts whose connection time, even at its CI's low end, is far above their group's median."""
    found: dict[str, Outlier] = {}
    for g in group_rows(rows):
        members = [r for r in rows if g.name in r.host.groups and r.measured and r.connect]
        if len(members) < MIN_GROUP:
            continue
        for r in members:
            assert r.connect is not None
            others = statistics.median(o.connect.median for o in members if o is not r and o.connect)
            if r.connect.ci_low > OUTLIER_FACTOR * others and r.host.name not in found:
                found[r.host.name] = Outlier(r.host.name, g.name, r.connect, others)
    return list(found.values())


@dataclass(frozen=True)
class Ranked:
    """One algorithm across the fleet: who offers it and how fast it was on each host that measured it."""

    name: str
    offered_by: tuple[str, ...]
    lacking: tuple[str, ...]
    fastest_on: int  # hosts (host-ways for ciphers) where it was fastest or tied for fastest
    measured_on: int
    ratio: float | None  # geometric mean of (its time / that host's fastest), >= 1; None when not measured


@dataclass(frozen=True)
class KindChoice:
    """The ordered algorithms of one kind for the fleet's configuration, and what the order rests on."""

    kind: str
    ordered: tuple[Ranked, ...]
    basis: str

    @property
    def pick(self) -> Ranked | None:
        """Return the first choice."""
        return self.ordered[0] if self.ordered else None


@dataclass(frozen=True)
class FleetChoice:
    """One configuration for every reached host, and the hosts that would need a change to accept it."""

    hosts: tuple[str, ...]
    kinds: tuple[KindChoice, ...]
    policy: str
    needs_change: dict[str, tuple[str, ...]]  # host -> what it lacks (it still connects, with a fallback)
    refuses: dict[str, tuple[str, ...]]  # host -> kinds of which it offers none of the listed algorithms
    connect_change: float | None = None  # median over hosts of (connection with the picks / today's) - 1
    loses: tuple[str, ...] = ()  # what the kex pick gives up against the hosts' post-quantum defaults

    def lists(self) -> dict[str, list[str]]:
        """Return the config keywords with their algorithms, fastest first."""
        return {KEYWORDS[k.kind]: [r.name for r in k.ordered] for k in self.kinds if k.ordered}


Units = list[Mapping[str, Summary]]  # per host (or host and way): algorithm -> its summary there


def rank(
    kind: str, rows: Sequence[HostRow], allowed: Callable[[str], bool], units: Units, lower_better: bool
) -> list[Ranked]:
    """Rank the allowed algorithms of a kind that any host offers: offered by every host first, then fastest."""
    client = next((r.discovery.client.get(kind, ()) for r in rows if r.discovery), ())
    names = [n for n in client if allowed(n) and any(r.offers(kind, n) for r in rows)]
    scores: dict[str, list[float]] = {n: [] for n in names}
    fastest: dict[str, int] = dict.fromkeys(names, 0)
    for unit in units:
        ranked = {n: s for n, s in unit.items() if n in scores and s.n >= MIN_RANKED}
        if not ranked:
            continue
        best = (min if lower_better else max)(ranked.values(), key=lambda s: s.median)
        for n, s in ranked.items():
            scores[n].append(s.median / best.median if lower_better else best.median / s.median)
            fastest[n] += s.overlaps(best)
    out = [
        Ranked(
            n,
            tuple(r.host.name for r in rows if r.offers(kind, n)),
            tuple(r.host.name for r in rows if not r.offers(kind, n)),
            fastest[n],
            len(scores[n]),
            math.exp(statistics.fmean(map(math.log, scores[n]))) if scores[n] else None,
        )
        for n in names
    ]
    order = {n: i for i, n in enumerate(names)}
    return sorted(out, key=lambda r: (len(r.lacking), -r.fastest_on, r.ratio or math.inf, order[r.name]))


def recommend(rows: Sequence[HostRow], policy: Policy) -> FleetChoice | None:
    """Return the fleet's configuration over the reached hosts (None when no host was reached)."""
    reached = [r for r in rows if r.discovery is not None and r.discovery.default() is not None]
    if not reached:
        return None
    kex_units: Units = [r.connects for r in reached]
    cipher_units: Units = [
        {c: s for (c, w), s in r.rates.items() if w is way} for r in reached for way in Direction if r.rates
    ]
    kinds = []
    for kind, units, lower in (("kex", kex_units, True), ("cipher", cipher_units, False), ("mac", [], False)):
        ranked = rank(kind, reached, lambda n, k=kind: policy.check(k, n).allowed, units, lower)  # type: ignore[misc]
        kinds.append(KindChoice(kind, tuple(ranked), _basis(kind, ranked, len(units))))
    return FleetChoice(
        hosts=tuple(r.host.name for r in reached),
        kinds=tuple(kinds),
        policy=policy.name,
        needs_change=_needs_change(reached, kinds),
        refuses=_refuses(reached, kinds),
        connect_change=_connect_change(reached, kinds[0].pick),
        loses=_losses(reached, kinds[0].pick),
    )


def _losses(reached: Sequence[HostRow], pick: Ranked | None) -> tuple[str, ...]:
    """Return what the kex pick loses against each post-quantum default the hosts negotiate today, with the hosts."""
    by_loss: dict[str, list[str]] = {}
    for r in reached:
        loss = pq_loss(r.discovery.default() if r.discovery else None, pick.name if pick else None)
        if loss:
            by_loss.setdefault(loss, []).append(r.host.name)
    return tuple(f"{loss} (on {', '.join(hosts)})" for loss, hosts in by_loss.items())


def _basis(kind: str, ranked: Sequence[Ranked], units: int) -> str:
    """Say what a kind's order rests on."""
    pick = ranked[0] if ranked else None
    if pick is None:
        return "no host offers one the policy allows"
    what = {"kex": "hosts", "cipher": "host-directions"}.get(kind)
    if what is None or not pick.measured_on:
        source = {"cipher": "not measured (add --throughput)", "mac": "not measured"}.get(kind, "not measured")
        return f"{source}: ordered as your client prefers"
    tied = f"fastest or tied for fastest on {pick.fastest_on} of {units} {what}"
    return f"{tied}; its median is {pick.ratio:.2f}x each {what[:-1]}'s fastest (geometric mean)"


def _needs_change(reached: Sequence[HostRow], kinds: Sequence[KindChoice]) -> dict[str, tuple[str, ...]]:
    """Return the hosts that do not offer a first choice, and what to add to their sshd_config."""
    out: dict[str, tuple[str, ...]] = {}
    for r in reached:
        lacks = tuple(
            f"{KEYWORDS[k.kind]} {k.pick.name}"
            for k in kinds
            if k.pick is not None and r.host.name in k.pick.lacking and not (k.kind == "mac" and _aead_first(kinds))
        )
        if lacks:
            out[r.host.name] = lacks
    return out


def _aead_first(kinds: Sequence[KindChoice]) -> bool:
    """Return True when the first cipher authenticates itself (its MAC line only serves fallbacks: OpenSSH
    negotiates no MAC with an AEAD cipher)."""
    cipher = next((k.pick for k in kinds if k.kind == "cipher"), None)
    return cipher is not None and is_aead(cipher.name)


def _refuses(reached: Sequence[HostRow], kinds: Sequence[KindChoice]) -> dict[str, tuple[str, ...]]:
    """Return the hosts that would fail to negotiate with the listed algorithms, and the keywords that fail: no
    listed kex or cipher they offer, or no listed MAC for the non-AEAD cipher they would negotiate."""
    lists = {k.kind: [r.name for r in k.ordered] for k in kinds}
    out: dict[str, tuple[str, ...]] = {}
    for r in reached:
        missing = [KEYWORDS["kex"]] if not any(r.offers("kex", n) for n in lists.get("kex", ())) else []
        cipher = next((c for c in lists.get("cipher", ()) if r.offers("cipher", c)), None)
        if cipher is None:
            missing.append(KEYWORDS["cipher"])
        elif not is_aead(cipher) and not any(r.offers("mac", m) for m in lists.get("mac", ())):
            missing.append(KEYWORDS["mac"])
        if missing:
            out[r.host.name] = tuple(missing)
    return out


def _connect_change(reached: Sequence[HostRow], pick: Ranked | None) -> float | None:
    """Return the median over hosts of (connection time with the first kex / today's) - 1."""
    if pick is None:
        return None
    ratios = [
        r.connects[pick.name].median / r.connect.median
        for r in reached
        if r.connect and pick.name in r.connects and r.connects[pick.name].n >= MIN_RANKED
    ]
    return statistics.median(ratios) - 1 if ratios else None


def _summary(s: Summary | None) -> dict[str, float | int] | None:
    """Return a summary's median and interval (seconds or MB/s)."""
    return None if s is None else {"median": s.median, "ci_low": s.ci_low, "ci_high": s.ci_high, "n": s.n}


def to_document(stored: StoredRun, policy: Policy) -> dict[str, object]:
    """Return the fleet's derived results (computed on read): hosts, groups, outliers, the configuration for all."""
    rows = host_rows(stored, policy)
    choice = recommend(rows, policy)
    return {
        "policy": policy.to_dict(),
        "hosts": [
            {
                "name": r.host.name,
                "groups": list(r.host.groups),
                "run": r.host.run,
                "failure": r.host.failure,
                "measured": r.measured,
                "connect_s": _summary(r.connect),
                "connect_s_per_kex": {k: _summary(s) for k, s in r.connects.items()},
                "throughput_mbps": {f"{c} {w}": _summary(s) for (c, w), s in r.rates.items()},
                "negotiated": {k: r.negotiated(k) for k in ("kex", "hostkey", "cipher", "mac")},
                "weak_offered": list(r.weak),
            }
            for r in rows
        ],
        "groups": [vars(g) for g in group_rows(rows)],
        "outliers": [
            {
                "host": o.host,
                "group": o.group,
                "connect_s": o.connect.median,
                "group_median_s": o.group_median,
                "ratio": o.ratio,
            }
            for o in outliers(rows)
        ],
        "recommendation": None
        if choice is None
        else {
            "hosts": list(choice.hosts),
            "lists": choice.lists(),
            "basis": {k.kind: k.basis for k in choice.kinds},
            "needs_change": {h: list(v) for h, v in choice.needs_change.items()},
            "refuses": {h: list(v) for h, v in choice.refuses.items()},
            "connect_change": choice.connect_change,
        },
    }
