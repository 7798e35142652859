"""Terminal presentation of `compare`: environment warnings, per-scenario changes, a summary line."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from sshbench.compare import Change
from sshbench.model import Kind
from sshbench.stats import Summary
from sshbench.store import RunRecord

VERDICT_STYLE = {"faster": "green", "slower": "red", "no change": "dim"}


def format_value(kind: Kind, s: Summary | None) -> str:
    """Format a median with its CI in the scenario's unit."""
    if s is None:
        return "-"
    if kind is Kind.LATENCY:
        return f"{s.median * 1000:.1f} ms ({s.ci_low * 1000:.1f}-{s.ci_high * 1000:.1f})"
    return f"{s.median:.0f} MB/s ({s.ci_low:.0f}-{s.ci_high:.0f})"


def compare_table(changes: Sequence[Change], a: int, b: int) -> Table:
    """Return one row per scenario: A, B, change and verdict."""
    table = Table(title=f"Run {b} against run {a} (overlapping 95% CIs = no change)", title_justify="left")
    for col in ("scenario", f"run {a}", f"run {b}", "change", "verdict"):
        table.add_column(col, justify="right" if col in ("change",) else "left")
    for c in changes:
        kind = c.scenario.kind
        change = "" if c.percent is None else f"{c.percent:+.1f}%"
        style = VERDICT_STYLE.get(c.verdict, "yellow")
        table.add_row(
            c.scenario.label, format_value(kind, c.a), format_value(kind, c.b), change, f"[{style}]{c.verdict}[/]"
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
    console.print(f"Run {a.id} ({a.command}, {a.target}) -> run {b.id} ({b.command}, {b.target})", highlight=False)
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
