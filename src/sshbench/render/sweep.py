"""Terminal presentation of a sweep: per-dimension aggregates, top combinations, and recommendations."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from sshbench.analyse import policy as policies
from sshbench.analyse import sweep
from sshbench.analyse.policy import Policy
from sshbench.analyse.sweep import Choice, Combo, DimensionRow, Estimate, Recommendation
from sshbench.model import METRICS, Kind, Metric
from sshbench.records import RunRecord, StoredScenario
from sshbench.render.console import inline_bar, print_unfinished
from sshbench.render.snippets import gain_text, host_for, ssh_config, sshd_config


def _est(e: Estimate | None, metric: Metric = METRICS[Kind.THROUGHPUT]) -> str:
    """Format an estimate as `median (low-high)` in the metric's unit."""
    if e is None:
        return "-"
    flag = " [yellow]![/]" if e.rel_halfwidth > 0.05 else ""
    return f"{metric.format(e.median)}{flag} ({metric.format(e.low)}-{metric.format(e.high)})"


def _verdict(policy: Policy, kind: str, algorithm: str | None) -> str:
    """Return a short policy cell."""
    if algorithm is None:
        return ""
    v = policy.check(kind, algorithm)
    if v.allowed:
        return "[green]allowed[/]"
    short = v.reason.split(";")[0].split(" (allowed by")[0]
    return f"[red]excluded[/]: {short}"


def latency_dimension_table(rows: Sequence[DimensionRow], kind: str, policy: Policy) -> Table:
    """Return connection time per kex or per host key."""
    title = "key exchange" if kind == "kex" else "host key"
    table = Table(title=f"Connection time per {title}, ms: median (95% CI), lower is better", title_justify="left")
    for col in (title, "ms", "n", "", "measured", "policy"):
        table.add_column(col, justify="right" if col in ("ms", "n") else "left")
    longest = max((r.estimate.median for r in rows if r.kind == kind), default=0.0)
    for r in rows:
        if r.kind == kind:
            table.add_row(
                r.algorithm,
                _est(r.estimate, METRICS[Kind.LATENCY]),
                str(r.estimate.n),
                inline_bar(r.estimate.median, longest),
                r.basis,
                _verdict(policy, kind, r.algorithm),
            )
    return table


def transfer_dimension_table(rows: Sequence[DimensionRow], kind: str, policy: Policy) -> Table:
    """Return MB/s per cipher or per MAC, download and upload side by side."""
    table = Table(
        title=f"Throughput per {'cipher' if kind == 'cipher' else 'MAC'}, MB/s: median (95% CI), higher is better",
        title_justify="left",
    )
    for col in (kind, "download", "upload", "measured", "policy"):
        table.add_column(col, justify="right" if col in ("download", "upload") else "left")
    by_name: dict[str, dict[str, DimensionRow]] = {}
    for r in rows:
        if r.kind == kind and r.direction:
            by_name.setdefault(r.algorithm, {})[r.direction] = r
    for name, per in by_name.items():
        basis = per.get("down") or per.get("up")
        table.add_row(
            name,
            _est(per["down"].estimate if "down" in per else None),
            _est(per["up"].estimate if "up" in per else None),
            basis.basis if basis else "",
            _verdict(policy, kind, name),
        )
    return table


def top_table(combos: Sequence[Combo], policy: Policy, top: int) -> Table:
    """Return the N fastest cipher (+ MAC) combinations, both ways combined."""
    table = Table(
        title=f"Top {min(top, len(combos))} combinations, MB/s (both ways = harmonic mean of down and up; "
        "intervals of predicted and combined values are conservative)",
        title_justify="left",
    )
    for col in ("#", "cipher + MAC", "download", "upload", "both ways", "", "how", "policy"):
        table.add_column(col, justify="right" if col in ("#", "download", "upload", "both ways") else "left")
    best = max((c.combined.median for c in combos[:top]), default=0.0)
    for i, c in enumerate(combos[:top], 1):
        ok = policy.check("cipher", c.cipher).allowed and (c.mac is None or policy.check("mac", c.mac).allowed)
        table.add_row(
            str(i),
            c.label,
            _est(c.rates.get("down")),
            _est(c.rates.get("up")),
            _est(c.combined),
            inline_bar(c.combined.median, best),
            "[yellow]predicted[/]" if c.predicted else "measured",
            "[green]allowed[/]" if ok else "[red]excluded[/]",
        )
    return table


def print_choice(console: Console, choice: Choice, host: str, source: str) -> None:
    """Print one recommendation with its ssh_config and sshd_config snippets."""
    console.print(f"\n[bold]{choice.title}[/]", highlight=False)
    if choice.cipher:
        what = choice.cipher if choice.mac is None else f"{choice.cipher} + {choice.mac}"
        predicted = " [yellow](predicted)[/]" if choice.predicted else ""
        console.print(f"  cipher: {what}{predicted}; {gain_text(choice.gain, 'throughput')}", highlight=False)
    if choice.kex:
        hostkey = f" / {choice.hostkey}" if choice.hostkey else " (keep your host key)"
        console.print(
            f"  handshake: {choice.kex}{hostkey}; {gain_text(choice.latency_gain, 'connection time')}",
            highlight=False,
        )
    # soft_wrap: long algorithm lists must stay on one line to be pasted
    console.print("  ~/.ssh/config:", style="dim")
    console.print(ssh_config(choice, host, source), highlight=False, markup=False, end="", soft_wrap=True)
    console.print("  sshd_config:", style="dim")
    console.print(sshd_config(choice, source), highlight=False, markup=False, end="", soft_wrap=True)


def print_recommendation(console: Console, rec: Recommendation, host: str, source: str) -> None:
    """Print the three recommendations, what the policy excluded and why, and the caveats."""
    for choice in (rec.overall, rec.within_policy, rec.handshake):
        if choice is not None:
            print_choice(console, choice, host, source)
    if rec.excluded:
        console.print(f"\n[bold]Excluded by {rec.policy['name']}[/] (every reason):", highlight=False)
        for kind, algorithm, reason in rec.excluded:
            console.print(f"  {kind:8} {algorithm}: {reason}", highlight=False, markup=False)
    if rec.caveats:
        console.print("\n[bold]Caveats[/]")
        for caveat in rec.caveats:
            console.print(f"  - {caveat}", highlight=False, markup=False)


def print_sweep(console: Console, run: RunRecord, stored: Sequence[StoredScenario], top: int = 10) -> None:
    """Print a sweep: per-dimension aggregates, top combinations, recommendation under the run's policy."""
    pol = policies.resolve(run.options.policy)
    full = run.options.full_latency
    dims = sweep.dimensions(stored, full)
    for kind in ("kex", "hostkey"):
        if any(r.kind == kind for r in dims):
            console.print(latency_dimension_table(dims, kind, pol))
    for kind in ("cipher", "mac"):
        if any(r.kind == kind for r in dims):
            console.print(transfer_dimension_table(dims, kind, pol))
    combos = sweep.combinations(stored)
    if combos:
        console.print(top_table(combos, pol, top))
    rec = sweep.recommend(stored, run.discovery, pol, full)
    print_recommendation(console, rec, host_for(run), run.source)
    print_unfinished(console, run)
