"""Presentation of `compare`: environment warnings, per-scenario changes, a summary line; and its JSON."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from sshbench.analyse.compare import Change
from sshbench.model import Metric
from sshbench.records import RunRecord
from sshbench.render.console import ci_cell
from sshbench.render.layout import Column, build, fit
from sshbench.stats import MIN_RANKED, Summary

VERDICT_STYLE = {"faster": "green", "slower": "red", "no change": "dim"}


def format_value(metric: Metric, s: Summary | None) -> str:
    """Format a median with its CI (and the CI's real coverage when below 95 %), without the unit."""
    if s is None:
        return "-"
    return f"{metric.format(s.median)} ({ci_cell(s, metric.format)})"


def compare_columns(changes: Sequence[Change], a: int, b: int) -> list[Column]:
    """Return the comparison's columns: scenario, unit, A, B, change and verdict."""
    return [
        Column("scenario", tuple(c.scenario.label for c in changes), fold=True),
        Column("unit", tuple(c.scenario.metric.unit for c in changes)),
        Column(f"run {a} median (CI)", tuple(format_value(c.scenario.metric, c.a) for c in changes), right=True),
        Column(f"run {b} median (CI)", tuple(format_value(c.scenario.metric, c.b) for c in changes), right=True),
        Column("change", tuple("" if c.percent is None else f"{c.percent:+.1f}%" for c in changes), right=True),
        Column("verdict", tuple(f"[{VERDICT_STYLE.get(c.verdict, 'yellow')}]{c.verdict}[/]" for c in changes)),
    ]


def compare_table(changes: Sequence[Change], a: int, b: int, width: int | None = None) -> Table:
    """Return one row per scenario, fitted to `width`."""
    shown, _ = fit(compare_columns(changes, a, b), width)
    return build(shown)


def print_compare(
    console: Console,
    a: RunRecord,
    b: RunRecord,
    changes: Sequence[Change],
    env_diffs: Sequence[str],
    failing: Sequence[Change] | None,
    threshold: float | None,
) -> None:
    """Print the comparison, then the --fail-if verdict when one was asked for."""
    console.print(f"Run {a.id} ({a.kind}, {a.target}) -> run {b.id} ({b.kind}, {b.target})", highlight=False)
    for line in env_diffs:
        console.print(f"[yellow]! environment {line}[/]: the change may come from this, not from SSH", highlight=False)
    console.print(f"Run {b.id} against run {a.id} (overlapping 95% CIs = no change)", style="bold", highlight=False)
    console.print(compare_table(changes, a.id, b.id, console.width))
    counts = {v: sum(1 for c in changes if c.verdict == v) for v in ("faster", "slower", "no change")}
    few = sum(1 for c in changes if c.verdict == "too few samples")
    if few:
        console.print(f"  no verdict for {few} scenario(s) with fewer than {MIN_RANKED} samples in a run")
    others = len(changes) - sum(counts.values()) - few
    summary = f"{counts['faster']} faster, {counts['slower']} slower, {counts['no change']} no change"
    console.print(summary + (f", {others} in one run only" if others else ""), highlight=False)
    if threshold is not None and failing is not None:
        if failing:
            names = "; ".join(f"{c.scenario.label} {c.slower_by:.1f}% slower" for c in failing)
            console.print(f"[red]FAIL[/]: slower than {threshold:g}%: {names}", highlight=False)
        else:
            console.print(f"[green]PASS[/]: nothing significantly slower than {threshold:g}%", highlight=False)


def compare_document(
    a: RunRecord, b: RunRecord, changes: Sequence[Change], diffs: Sequence[str], failing: Sequence[Change] | None
) -> dict[str, Any]:
    """Return the comparison as JSON-ready data."""
    return {
        "run_a": a.id,
        "run_b": b.id,
        "environment_differences": list(diffs),
        "changes": [
            {
                "scenario": c.scenario.to_dict(),
                "label": c.scenario.label,
                "unit": c.scenario.metric.stored_unit,
                "a_median": c.a.median if c.a else None,
                "b_median": c.b.median if c.b else None,
                "a_n": c.a.n if c.a else None,
                "b_n": c.b.n if c.b else None,
                "percent": c.percent,
                "verdict": c.verdict,
            }
            for c in changes
        ],
        "failing": None if failing is None else [c.scenario.label for c in failing],
    }
