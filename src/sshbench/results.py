"""Turn stored samples into ranked result rows (pure: no I/O, no printing)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from sshbench.model import PHASES, Direction, Kind, Scenario
from sshbench.stats import Summary, instability, rank_with_ties, summarize
from sshbench.store import StoredScenario


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


def _phase_medians(stored: StoredScenario) -> tuple[tuple[str, float], ...]:
    """Return the median duration of each connection phase over successful samples."""
    per_phase: dict[str, list[float]] = {}
    for s in stored.samples:
        if s.ok and not s.warmup:
            for name, seconds in s.phases:
                per_phase.setdefault(name, []).append(seconds)
    return tuple((p, statistics.median(per_phase[p])) for p in PHASES if p in per_phase)


def build_rows(stored: Sequence[StoredScenario], ci_target: float) -> list[Row]:
    """Summarize and rank scenarios of one kind and direction (best first, failures last)."""
    prepared = []
    for st in stored:
        values = [s.value for s in st.samples if s.ok and not s.warmup and s.value is not None]
        cpu = [s.client_cpu for s in st.samples if s.ok and not s.warmup and s.client_cpu is not None]
        failed = sum(1 for s in st.samples if not s.ok)
        summary = summarize(values) if values else None
        prepared.append((st, summary, failed, statistics.median(cpu) if cpu else None))
    measured = [p for p in prepared if p[1] is not None]
    higher = bool(stored) and stored[0].scenario.kind is Kind.THROUGHPUT
    ranks = rank_with_ties([p[1] for p in measured if p[1] is not None], higher_is_better=higher)
    rows = [
        Row(
            st.scenario,
            summary,
            rank,
            tied,
            failed,
            st.failure,
            instability(summary, ci_target) if summary else None,
            _phase_medians(st),
            cpu,
        )
        for (st, summary, failed, cpu), (rank, tied) in zip(measured, ranks, strict=True)
    ]
    rows.sort(key=lambda r: r.rank)
    rows += [
        Row(st.scenario, None, 0, False, failed, st.failure, None, (), None)
        for st, summary, failed, _ in prepared
        if summary is None
    ]
    return rows


def groups(stored: Sequence[StoredScenario]) -> dict[str, list[StoredScenario]]:
    """Split a run's scenarios into latency, download and upload groups (in that order)."""
    out: dict[str, list[StoredScenario]] = {"latency": [], "download": [], "upload": []}
    for st in stored:
        sc = st.scenario
        if sc.kind is Kind.LATENCY:
            out["latency"].append(st)
        else:
            out["download" if sc.direction is Direction.DOWN else "upload"].append(st)
    return {k: v for k, v in out.items() if v}
