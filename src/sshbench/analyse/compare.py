"""Compare runs (pure): per scenario the change in %, and the verdict on the ratio B/A in the claims vocabulary.

Scenarios are matched on what they measure (`Scenario.match_key`: kind, server, profile, algorithms and
direction; fields a metric marks as untimed, like the kex a sweep pins for transfers, are ignored). The samples of
one side are pooled when several runs are given for it. The ratio of B to A and its interval are the Hodges-Lehmann
estimate and Moses interval of `sshbench.ratios` (unpaired: the runs' rounds are not the same rounds). That
interval holds the noise inside the runs only: drift between runs (5-28 % on a shared machine) is not in it, which
is why several runs per side can be given and their spread is reported. Verdicts: equivalent (inside the margin),
faster, slower (the interval excludes 1), inconclusive (neither), with too few samples (fewer than
`stats.MIN_RANKED` on a side) no verdict at all. Environment differences that make a comparison doubtful (CPU,
crypto flags, versions, emulation, pinning) are listed.

A row of the client's own algorithms (`tune`'s default, a `run`'s "default kex / default host key") is read under
the names its run's discovery saw negotiated (`named`), so it meets the same measurement stored under those names
(a `sweep` row) in another run, in runs stored before this rule too. `matched` counts the scenarios measured on
both sides: a `--fail-if` over none checked nothing.

A load step (a rate, a burst, sessions held) is compared at its p50 and its p99, from the logins of its latest
attempt: each side's percentile with its distribution-free interval, B/A's interval from the two (`ratios.
percentile_ratio`); a side with too few logins for the interval's ends gets no verdict, and the row says how many
logins it needs (`needs`): 435 a side for a p99, the CI capacity gate `--fail-if` reads.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sshbench.discovery import Negotiated
from sshbench.environment import Environment
from sshbench.exact import samples_for_quantile
from sshbench.loadwords import latest
from sshbench.model import Kind, Scenario
from sshbench.ratios import MARGIN, SIDE_CONFIDENCE, Verdict, judge, percentile, percentile_ratio, speed, unpaired_ratio
from sshbench.records import StoredScenario
from sshbench.stats import MIN_RANKED, Summary, summarize

# What is compared between two runs' environments: (name shown, how to read it).
ENVIRONMENT_FIELDS: tuple[tuple[str, Callable[[Environment], object]], ...] = (
    ("CPU", lambda e: e.cpu_model),
    ("CPU crypto flags", lambda e: ", ".join(e.flags_on()) if e.cpu_flags else None),
    ("CPU count", lambda e: e.cpus),
    ("kernel", lambda e: e.kernel),
    ("OpenSSH client", lambda e: e.openssh_client),
    ("OpenSSL", lambda e: e.openssl),
    ("server software", lambda e: e.server_banner),
    ("emulation", lambda e: e.emulation.name if e.emulation else None),
    ("CPU pinning", lambda e: e.pinning.to_json() if e.pinning else None),
    ("server settings", lambda e: list(e.embedded.settings) if e.embedded else None),
    ("client CPU limit", lambda e: e.client_limit),
    ("emulated link", lambda e: e.link.name if e.link else None),
)
DRIFT = "drift between runs (5-28 % on a shared machine) is not inside these intervals"
ONLY_A, ONLY_B, TOO_FEW = "only in A", "only in B", "too few samples"
STEP_PERCENTILES = (50.0, 99.0)  # what a load step is compared at


@dataclass(frozen=True)
class Change:
    """One scenario in both sides (or one of them) and what changed."""

    scenario: Scenario
    a: Summary | None
    b: Summary | None
    percent: float | None  # change of the median (pooled), B against A
    verdict: str  # equivalent | faster | slower | inconclusive | too few samples | only in A | only in B
    judged: Verdict | None = None  # the ratio B/A of the values, its interval and word
    spread_a: float | None = None  # several runs on side A: (max / min of their medians) - 1
    spread_b: float | None = None
    percentile: float | None = None  # a load step's row: which percentile (a and b hold it, with its interval)
    needs: int | None = None  # too few samples: how many a side needs for a verdict on this row

    @property
    def label(self) -> str:
        """Return the row's name: the scenario's, a load step's as `20/s: p99` (with its pinned key exchange)."""
        if self.percentile is None or self.scenario.load is None:
            return self.scenario.label
        pinned = f" ({self.scenario.kex})" if self.scenario.kex else ""
        return f"{self.scenario.load}: p{self.percentile:g}{pinned}"

    @property
    def speed(self) -> tuple[float, float] | None:
        """Return the interval of B's speed relative to A's (time ratios inverted), or None without a verdict."""
        if self.judged is None:
            return None
        r = speed(self.judged.ratio, self.scenario.metric.higher_is_better)
        return r.low, r.high

    @property
    def slower_by(self) -> float:
        """Return how much slower B is at least, in % of A's speed (0 unless significantly slower)."""
        interval = self.speed
        if self.verdict != "slower" or interval is None:
            return 0.0
        return 100 * (1 - interval[1])


def named(stored: Sequence[StoredScenario], default: Negotiated | None) -> list[StoredScenario]:
    """Return a run's rows with the client's own algorithms named as its discovery saw them negotiated (a
    connection's key exchange and host key; a transfer's cipher, and its MAC when the cipher was the default's too);
    rows pinned otherwise, rows of other clients or tools, and a row whose name another row of the run already
    has, keep theirs."""
    if default is None:
        return list(stored)
    taken = {st.scenario.match_key() for st in stored}
    out = []
    for st in stored:
        sc = _negotiated(st.scenario, default)
        if sc != st.scenario and sc.match_key() not in taken:
            st = dataclasses.replace(st, scenario=sc)
        out.append(st)
    return out


def _negotiated(sc: Scenario, default: Negotiated) -> Scenario:
    """Return a scenario with its unpinned algorithms filled in from what the default profile negotiated."""
    if sc.client is not None or sc.tool is not None or sc.profile is not None:
        return sc
    if sc.kind is Kind.LATENCY:
        return dataclasses.replace(sc, kex=sc.kex or default.kex, hostkey=sc.hostkey or default.hostkey)
    if sc.kind is Kind.THROUGHPUT and sc.cipher is None:
        return dataclasses.replace(sc, cipher=default.cipher, mac=sc.mac or default.mac)
    return sc


def matched(changes: Sequence[Change]) -> int:
    """Return how many scenarios were measured on both sides (a verdict, or too few samples for one)."""
    return sum(1 for c in changes if c.verdict not in (ONLY_A, ONLY_B))


def _pooled(sides: Sequence[Sequence[StoredScenario]]) -> dict[tuple[object, ...], list[StoredScenario]]:
    """Return each scenario's stored rows from every run of one side, matched on what they measure."""
    out: dict[tuple[object, ...], list[StoredScenario]] = {}
    for run in sides:
        for st in run:
            out.setdefault(st.scenario.match_key(), []).append(st)
    return out


def _spread(members: Sequence[StoredScenario]) -> float | None:
    """Return how far apart several runs' medians of one scenario are, (max / min) - 1 (None for one run)."""
    medians = [statistics.median(v) for st in members if (v := st.values())]
    if len(medians) < 2 or min(medians) <= 0:
        return None
    return max(medians) / min(medians) - 1


def _change(scenario: Scenario, a: list[StoredScenario], b: list[StoredScenario], margin: float) -> Change:
    """Return the change of one scenario measured on both sides."""
    va = [v for st in a for v in st.values()]
    vb = [v for st in b for v in st.values()]
    sa, sb = summarize(va), summarize(vb)
    percent = 100 * (sb.median / sa.median - 1)
    spread = (_spread(a), _spread(b))
    if len(va) < MIN_RANKED or len(vb) < MIN_RANKED:
        return Change(scenario, sa, sb, percent, TOO_FEW, None, *spread)
    ratio = unpaired_ratio(va, vb)
    if ratio is None:
        return Change(scenario, sa, sb, percent, TOO_FEW, None, *spread)
    verdict = judge(ratio, scenario.metric.higher_is_better, margin)
    return Change(scenario, sa, sb, percent, verdict.word.value, verdict, *spread)


def _step_values(members: Sequence[StoredScenario]) -> list[float]:
    """Return a load step's login times from each run's latest attempt at it (an attempt cut short is not read)."""
    return [s.value for st in members for s in latest(st.samples) if s.measured and s.value is not None]


def _at(values: Sequence[float], q: float) -> Summary:
    """Return one side's percentile as a Summary: its value and interval where enough values give both ends (else
    the value alone, with coverage 0)."""
    whole = summarize(values)
    found = percentile(values, q)
    if found is None:
        at = sorted(values)[max(math.ceil(q * len(values)), 1) - 1]
        return dataclasses.replace(whole, median=at, ci_low=at, ci_high=at, coverage=0.0)
    value, low, high, coverage = found
    return dataclasses.replace(whole, median=value, ci_low=low, ci_high=high, coverage=coverage)


def _step_changes(
    scenario: Scenario, a: Sequence[StoredScenario], b: Sequence[StoredScenario], margin: float
) -> list[Change]:
    """Return a load step's changes at its p50 and p99 (see the module docstring)."""
    va, vb = _step_values(a), _step_values(b)
    spread = (_spread(a), _spread(b))
    out = []
    for p in STEP_PERCENTILES:
        q = p / 100
        sa, sb = _at(va, q), _at(vb, q)
        percent = 100 * (sb.median / sa.median - 1)
        ratio = percentile_ratio(va, vb, q)
        if ratio is None:
            need = samples_for_quantile(q, SIDE_CONFIDENCE)
            out.append(Change(scenario, sa, sb, percent, TOO_FEW, None, *spread, percentile=p, needs=need))
            continue
        verdict = judge(ratio, scenario.metric.higher_is_better, margin)
        out.append(Change(scenario, sa, sb, percent, verdict.word.value, verdict, *spread, percentile=p))
    return out


def compare(
    run_a: Sequence[StoredScenario] | Sequence[Sequence[StoredScenario]],
    run_b: Sequence[StoredScenario] | Sequence[Sequence[StoredScenario]],
    margin: float = MARGIN,
) -> list[Change]:
    """Return one Change per scenario measured on either side (a side: one run's scenarios, or several runs'),
    in A's order then B's extras."""
    a_by, b_by = _pooled(_runs(run_a)), _pooled(_runs(run_b))
    changes = []
    for key in [*a_by, *(k for k in b_by if k not in a_by)]:
        has_a = any(st.values() for st in a_by.get(key, []))
        has_b = any(st.values() for st in b_by.get(key, []))
        scenario = (a_by.get(key) or b_by[key])[0].scenario
        if has_a and has_b and scenario.load is not None:
            changes.extend(_step_changes(scenario, a_by[key], b_by[key], margin))
        elif has_a and has_b:
            changes.append(_change(scenario, a_by[key], b_by[key], margin))
        elif has_a or has_b:
            one = summarize([v for st in (a_by if has_a else b_by)[key] for v in st.values()])
            changes.append(
                Change(scenario, one if has_a else None, None if has_a else one, None, ONLY_A if has_a else ONLY_B)
            )
    return changes


def _runs(side: Sequence[StoredScenario] | Sequence[Sequence[StoredScenario]]) -> list[Sequence[StoredScenario]]:
    """Return a side as a list of runs (one run's scenarios are one run)."""
    if side and isinstance(side[0], StoredScenario):
        return [side]  # type: ignore[list-item]
    return list(side)  # type: ignore[arg-type]


def environment_differences(env_a: Environment, env_b: Environment) -> list[str]:
    """Return one line per environment property that differs between the runs."""
    out = []
    for name, read in ENVIRONMENT_FIELDS:
        va, vb = read(env_a), read(env_b)
        if va != vb:
            out.append(f"{name} differs: {_short(va)} -> {_short(vb)}")
    return out


def _short(value: object) -> str:
    """Render an environment value briefly."""
    return "none" if value is None else str(value)


@dataclass(frozen=True)
class FailIf:
    """What `--fail-if slower:PCT` found: scenarios surely slower than allowed, and those it cannot tell."""

    threshold: float  # percent
    failing: tuple[Change, ...]  # B's speed is below 1 - PCT even at the interval's upper end
    unsure: tuple[Change, ...]  # the interval reaches below 1 - PCT but not entirely: inconclusive
    unjudged: tuple[Change, ...] = ()  # in both runs, with too few samples (or logins, for a p99) for a verdict
    checked: int = 0  # rows with a verdict, which the gate read


def fail_if(changes: Sequence[Change], threshold: float) -> FailIf:
    """Judge `--fail-if slower:PCT`: fail only when B's speed interval lies entirely below 1 - PCT; a scenario
    whose interval straddles it is inconclusive (no failure, a warning)."""
    limit = 1 - threshold / 100
    failing, unsure = [], []
    unjudged = tuple(c for c in changes if c.verdict == TOO_FEW)
    for c in changes:
        interval = c.speed
        if interval is None:
            continue
        if interval[1] < limit:
            failing.append(c)
        elif interval[0] < limit:
            unsure.append(c)
    checked = sum(1 for c in changes if c.speed is not None)
    return FailIf(threshold, tuple(failing), tuple(unsure), unjudged, checked)
