"""Turn stored samples into ranked result rows per result group (pure: no I/O, no printing)."""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sshbench.model import GROUP_ORDER, PHASES, Scenario
from sshbench.ratios import MARGIN, Ratio, Standing, Verdict, Word, judge, paired_ratio, unpaired_ratio
from sshbench.records import StoredScenario
from sshbench.samples import Sample
from sshbench.stats import Summary, instability, summarize


@dataclass(frozen=True)
class Row:
    """One scenario's result: statistics, rank, and anything the user should know."""

    scenario: Scenario
    summary: Summary | None
    rank: int
    tied: bool
    failed_samples: int
    failure: str | None
    warning: str | None
    phases: tuple[tuple[str, float], ...]  # median seconds per phase
    client_cpu: float | None  # median client CPU seconds per sample
    costs: Costs | None = None  # CPU and memory medians (throughput: per GiB; latency: per connection)
    standing: Standing | None = None  # against the group's leader (None: not ranked)
    against_leader: Verdict | None = None  # the row / leader ratio and its verdict (None for the leader itself)
    rounds: tuple[tuple[int, float], ...] = ()  # (round, value) of its measured samples, for paired ratios
    tcp: Mapping[str, Mapping[str, Any]] | None = None  # per side: the median of each kernel figure (tcp_evidence)


GIB = 2**30


@dataclass(frozen=True)
class Costs:
    """Median resource costs of a scenario's samples (None where not measured)."""

    client_cpu_gib: float | None  # client CPU seconds per GiB moved
    server_cpu_gib: float | None  # server CPU seconds per GiB moved (every server process, cgroup)
    server_cpu: float | None  # server CPU seconds per sample (latency: per connection)
    client_rss: int | None  # peak RSS of the client, bytes
    server_rss: int | None  # peak RSS of the server's per-connection processes, bytes
    client_busy: float | None = None  # CPUs the client used while the payload moved (its login's CPU left out)
    server_busy: float | None = None  # the same for the server (None where the login's CPU was not read apart)


def _median(values: Sequence[float | int | None]) -> float | None:
    """Return the median of the known values, or None."""
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def costs(stored: StoredScenario) -> Costs | None:
    """Return the medians of a scenario's CPU and memory figures over successful measured samples."""
    good = [s for s in stored.samples if s.ok and not s.warmup]
    if not good:
        return None
    per_gib = [(s, s.nbytes / GIB) for s in good if s.nbytes]
    crss, srss = _median([s.client_rss for s in good]), _median([s.server_rss for s in good])
    return Costs(
        client_cpu_gib=_median([_per_gib(s, g, s.client_cpu, s.client_cpu_setup) for s, g in per_gib]),
        server_cpu_gib=_median([_per_gib(s, g, s.server_cpu, s.server_cpu_setup) for s, g in per_gib]),
        server_cpu=_median([s.server_cpu for s in good]),
        client_rss=None if crss is None else int(crss),
        server_rss=None if srss is None else int(srss),
        client_busy=_median([_busy(s, s.client_cpu, s.client_cpu_setup) for s, _ in per_gib]),
        server_busy=_median([_busy(s, s.server_cpu, s.server_cpu_setup) for s, _ in per_gib]),
    )


def _per_gib(s: Sample, gib: float, cpu: float | None, setup: float | None) -> float | None:
    """Return a side's CPU seconds per GiB of a transfer: a `clients` row's from its command on (a library's
    interpreter start, import and login are its connection table's), every other row's whole, as stored runs have
    always read (None: not counted)."""
    if cpu is None:
        return None
    return (cpu - setup if setup is not None and s.scenario.client is not None else cpu) / gib


def _busy(s: Sample, cpu: float | None, setup: float | None) -> float | None:
    """Return the CPUs a side used while a transfer's payload moved: its CPU after the login over the time from the
    command to exit (None where the login's CPU or time was not read apart)."""
    login = dict(s.phases).get("login")
    if cpu is None or setup is None or login is None or s.wall - login <= 0:
        return None
    return max(cpu - setup, 0.0) / (s.wall - login)


def tcp_evidence(stored: StoredScenario) -> dict[str, dict[str, Any]] | None:
    """Return, per socket side (client, server), the median of each kernel figure over measured samples (the
    congestion control as seen last); None when no sample holds evidence."""
    per: dict[str, dict[str, list[Any]]] = {}
    for s in stored.samples:
        if s.measured and s.tcp:
            for side, figures in s.tcp.items():
                if isinstance(figures, Mapping):
                    for key, value in figures.items():
                        if key != "series":  # a sample's readings over time (the report draws one sample's)
                            per.setdefault(side, {}).setdefault(key, []).append(value)
    if not per:
        return None
    out: dict[str, dict[str, Any]] = {}
    for side, figures in per.items():
        out[side] = {"samples": max(len(v) for v in figures.values())}
        for key, values in figures.items():
            numbers = [v for v in values if isinstance(v, int | float)]
            out[side][key] = statistics.median(numbers) if numbers else values[-1]
    return out


def _phase_medians(stored: StoredScenario) -> tuple[tuple[str, float], ...]:
    """Return the median duration of each connection phase over successful samples."""
    per_phase: dict[str, list[float]] = {}
    for s in stored.samples:
        if s.ok and not s.warmup:
            for name, seconds in s.phases:
                per_phase.setdefault(name, []).append(seconds)
    return tuple((p, statistics.median(per_phase[p])) for p in PHASES if p in per_phase)


def by_round(st: StoredScenario) -> dict[int, float]:
    """Return a scenario's measured value per round (the median when a round has several)."""
    per: dict[int, list[float]] = {}
    for s in st.samples:
        if s.measured and s.value is not None:
            per.setdefault(s.round, []).append(s.value)
    return {r: statistics.median(v) for r, v in per.items()}


def ratio_of(b: Row, a: Row) -> Ratio | None:
    """Return b / a of two rows of one run: paired per round where they share enough rounds, else unpaired."""
    ra, rb = dict(a.rounds), dict(b.rounds)
    return paired_ratio(ra, rb) or unpaired_ratio(list(ra.values()), list(rb.values()))


def _standing(row: Row, leader: Row, margin: float) -> tuple[Standing, Verdict | None]:
    """Return a row's standing against its group's leader, and the verdict it rests on."""
    if row is leader:
        return Standing.LEADER, None
    ratio = ratio_of(row, leader)
    if ratio is None:
        return Standing.INCONCLUSIVE, None
    verdict = judge(ratio, row.scenario.metric.higher_is_better, margin)
    word = {Word.EQUIVALENT: Standing.EQUIVALENT, Word.SLOWER: Standing.SLOWER}.get(verdict.word)
    return word or Standing.INCONCLUSIVE, verdict  # "faster" than the best median: the data cannot tell


def _rank(rows: list[Row], margin: float) -> list[Row]:
    """Rank rows given best median first, as the paired verdicts read (docs/CLAIMS.md), so that ranks follow the
    medians: the group's first row and the rows after it that are equivalent to it share rank 1; the next row
    starts the next rank with the rows after it equivalent to it, and so on (a row not equivalent ends its head's
    rank: no rank holds a row above or beside one whose median is higher and whose verdict is known). A row not
    told apart from the first (inconclusive: too few samples, or too close for its noise) is undecided: listed after
    the ranked rows, unranked (rank 0). Standings are against the first row."""
    judged = [(row, *_standing(row, rows[0], margin)) for row in rows]  # each row against the leader, once
    undecided = [j for j in judged if j[1] is Standing.INCONCLUSIVE]
    judged = [j for j in judged if j[1] is not Standing.INCONCLUSIVE]
    out: list[Row] = []
    while judged:
        head = judged[0][0]
        members = [judged[0]]
        for j in judged[1:]:
            if not _tied(j[0], j[1], head, head is rows[0], margin):
                break
            members.append(j)
        rank, tied = len(out) + 1, len(members) > 1
        out += [
            dataclasses.replace(row, rank=rank, tied=tied, standing=standing, against_leader=verdict)
            for row, standing, verdict in members
        ]
        judged = judged[len(members) :]
    return out + [
        dataclasses.replace(row, rank=0, standing=standing, against_leader=verdict)
        for row, standing, verdict in undecided
    ]


def _tied(row: Row, standing: Standing, head: Row, leads: bool, margin: float) -> bool:
    """Return True when a row is equivalent to the head of its rank (its standing says so when the head is the
    leader: judged once)."""
    return standing is Standing.EQUIVALENT if leads else _word(row, head, margin) is Word.EQUIVALENT


def _word(row: Row, head: Row, margin: float) -> Word:
    """Return the verdict word on row / head (inconclusive when no ratio can be made)."""
    ratio = ratio_of(row, head)
    return Word.INCONCLUSIVE if ratio is None else judge(ratio, row.scenario.metric.higher_is_better, margin).word


def build_rows(stored: Sequence[StoredScenario], ci_target: float, margin: float = MARGIN) -> list[Row]:
    """Summarize and rank scenarios of one kind and direction: ranked rows in rank order (a rank is shared by rows
    not significantly slower than the first row of their group, by the ratio verdicts of ratios.py; see `_rank`),
    then rows with too few samples to rank (rank 0), then rows with no samples."""
    higher = bool(stored) and stored[0].scenario.metric.higher_is_better
    rows = []
    for st in stored:
        values = st.values()
        cpu = [s.client_cpu for s in st.samples if s.measured and s.client_cpu is not None]
        summary = summarize(values) if values else None
        rows.append(
            Row(
                st.scenario,
                summary,
                0,
                False,
                sum(1 for s in st.samples if not s.ok),
                st.failure,
                instability(summary, ci_target) if summary else None,
                _phase_medians(st),
                statistics.median(cpu) if cpu else None,
                costs(st) if summary else None,
                rounds=tuple(sorted(by_round(st).items())),
                tcp=tcp_evidence(st),
            )
        )

    def better_first(r: Row) -> float:
        """Sort key: the better median first."""
        median = r.summary.median if r.summary else 0.0
        return -median if higher else median

    rankable = sorted((r for r in rows if r.summary is not None and r.summary.rankable), key=better_first)
    few = sorted((r for r in rows if r.summary is not None and not r.summary.rankable), key=better_first)
    return _rank(rankable, margin) + few + [r for r in rows if r.summary is None]


def groups(stored: Sequence[StoredScenario]) -> dict[str, list[StoredScenario]]:
    """Split a run's scenarios into their result groups (latency, download, upload: in that order)."""
    out: dict[str, list[StoredScenario]] = {name: [] for name in GROUP_ORDER}
    for st in stored:
        out[st.scenario.metric.group(st.scenario).name].append(st)
    return {k: v for k, v in out.items() if v}


def ranked(stored: Sequence[StoredScenario], ci_target: float, margin: float = MARGIN) -> dict[str, list[Row]]:
    """Return each result group's ranked rows."""
    return {name: build_rows(members, ci_target, margin) for name, members in groups(stored).items()}
