"""Turn stored samples into ranked result rows per result group (pure: no I/O, no printing)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from sshbench.model import GROUP_ORDER, PHASES, Scenario
from sshbench.records import StoredScenario
from sshbench.stats import Summary, instability, rank_with_ties, summarize


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


GIB = 2**30


@dataclass(frozen=True)
class Costs:
    """Median resource costs of a scenario's samples (None where not measured)."""

    client_cpu_gib: float | None  # client CPU seconds per GiB moved
    server_cpu_gib: float | None  # server CPU seconds per GiB moved (every server process, cgroup)
    server_cpu: float | None  # server CPU seconds per sample (latency: per connection)
    client_rss: int | None  # peak RSS of the client, bytes
    server_rss: int | None  # peak RSS of the server's per-connection processes, bytes


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
        client_cpu_gib=_median([s.client_cpu / g for s, g in per_gib if s.client_cpu is not None]),
        server_cpu_gib=_median([s.server_cpu / g for s, g in per_gib if s.server_cpu is not None]),
        server_cpu=_median([s.server_cpu for s in good]),
        client_rss=None if crss is None else int(crss),
        server_rss=None if srss is None else int(srss),
    )


def _phase_medians(stored: StoredScenario) -> tuple[tuple[str, float], ...]:
    """Return the median duration of each connection phase over successful samples."""
    per_phase: dict[str, list[float]] = {}
    for s in stored.samples:
        if s.ok and not s.warmup:
            for name, seconds in s.phases:
                per_phase.setdefault(name, []).append(seconds)
    return tuple((p, statistics.median(per_phase[p])) for p in PHASES if p in per_phase)


def build_rows(stored: Sequence[StoredScenario], ci_target: float) -> list[Row]:
    """Summarize and rank scenarios of one kind and direction: ranked rows best first, then rows with too few
    samples to rank (rank 0), then rows with no samples."""
    prepared = []
    for st in stored:
        values = st.values()
        cpu = [s.client_cpu for s in st.samples if s.measured and s.client_cpu is not None]
        failed = sum(1 for s in st.samples if not s.ok)
        summary = summarize(values) if values else None
        prepared.append((st, summary, failed, statistics.median(cpu) if cpu else None))
    measured = [p for p in prepared if p[1] is not None and p[1].rankable]
    higher = bool(stored) and stored[0].scenario.metric.higher_is_better
    ranks = rank_with_ties([p[1] for p in measured if p[1] is not None], higher_is_better=higher)

    def row(p: tuple[StoredScenario, Summary | None, int, float | None], rank: int = 0, tied: bool = False) -> Row:
        """Return the result row of one prepared scenario."""
        st, summary, failed, cpu = p
        warning = instability(summary, ci_target) if summary else None
        return Row(st.scenario, summary, rank, tied, failed, st.failure, warning, _phase_medians(st), cpu, costs(st))

    def order(r: Row) -> tuple[int, float]:
        """Sort key: rank, then the better median first within a tie."""
        median = r.summary.median if r.summary else 0.0
        return (r.rank, -median if higher else median)

    rows = sorted((row(p, rank, tied) for p, (rank, tied) in zip(measured, ranks, strict=True)), key=order)
    few = [p for p in prepared if p[1] is not None and not p[1].rankable]
    few.sort(key=lambda p: -p[1].median if higher and p[1] else (p[1].median if p[1] else 0.0))
    rows += [row(p) for p in few]
    rows += [Row(p[0].scenario, None, 0, False, p[2], p[0].failure, None, (), None) for p in prepared if p[1] is None]
    return rows


def groups(stored: Sequence[StoredScenario]) -> dict[str, list[StoredScenario]]:
    """Split a run's scenarios into their result groups (latency, download, upload: in that order)."""
    out: dict[str, list[StoredScenario]] = {name: [] for name in GROUP_ORDER}
    for st in stored:
        out[st.scenario.metric.group(st.scenario).name].append(st)
    return {k: v for k, v in out.items() if v}


def ranked(stored: Sequence[StoredScenario], ci_target: float) -> dict[str, list[Row]]:
    """Return each result group's ranked rows."""
    return {name: build_rows(members, ci_target) for name, members in groups(stored).items()}
