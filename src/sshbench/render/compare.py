"""Presentation of `compare`: environment warnings, per-scenario changes, a summary line; and its JSON."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from sshbench.analyse.compare import Change
from sshbench.model import Metric
from sshbench.records import RunRecord
from sshbench.stats import Summary

VERDICT_STYLE = {"faster": "green", "slower": "red", "no change": "dim"}


def format_value(metric: Metric, s: Summary | None) -> str:
    """Format a median with its CI in the metric's unit."""
    if s is None:
        return "-"
    return f"{metric.format(s.median)} {metric.unit} ({metric.format(s.ci_low)}-{metric.format(s.ci_high)})"


def compare_table(changes: Sequence[Change], a: int, b: int) -> Table:
    """Return one row per scenario: A, B, change and verdict."""
    table = Table(title=f"Run {b} against run {a} (overlapping 95% CIs = no change)", title_justify="left")
    for col in ("scenario", f"run {a}", f"run {b}", "change", "verdict"):
        table.add_column(col, justify="right" if col in ("change",) else "left")
    for c in changes:
        metric = c.scenario.metric
        change = "" if c.percent is None else f"{c.percent:+.1f}%"
        style = VERDICT_STYLE.get(c.verdict, "yellow")
        table.add_row(
            c.scenario.label, format_value(metric, c.a), format_value(metric, c.b), change, f"[{style}]{c.verdict}[/]"
        )
    return table


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
    console.print(compare_table(changes, a.id, b.id))
    counts = {v: sum(1 for c in changes if c.verdict == v) for v in ("faster", "slower", "no change")}
    others = len(changes) - sum(counts.values())
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
                "a_median": c.a.median if c.a else None,
                "b_median": c.b.median if c.b else None,
                "percent": c.percent,
                "verdict": c.verdict,
            }
            for c in changes
        ],
        "failing": None if failing is None else [c.scenario.label for c in failing],
    }
