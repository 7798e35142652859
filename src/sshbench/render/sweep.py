"""Terminal presentation of a sweep: per-dimension aggregates, top combinations, and recommendations."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console

from sshbench.analyse import policy as policies
from sshbench.analyse import sweep
from sshbench.analyse.policy import Policy
from sshbench.analyse.sweep import Choice, Combo, DimensionRow, Estimate, Recommendation
from sshbench.model import METRICS, Kind, Metric
from sshbench.records import RunRecord, StoredScenario
from sshbench.render.console import hidden_note, inline_bar, print_bounds, print_table, print_unfinished
from sshbench.render.layout import Column, build, fit
from sshbench.render.snippets import gain_text, host_for, ssh_config, sshd_config


def _est(e: Estimate | None, metric: Metric = METRICS[Kind.THROUGHPUT]) -> str:
    """Format an estimate as `median (low-high)` in the metric's unit."""
    if e is None:
        return "-"
    flag = " [yellow]![/]" if e.rel_halfwidth > 0.05 else ""
    return f"{metric.format(e.median)}{flag} ({metric.format(e.low)}-{metric.format(e.high)})"


def _verdict(policy: Policy, kind: str, algorithm: str | None) -> str:
    """Return a short policy cell (the reasons are listed under the recommendations)."""
    if algorithm is None:
        return ""
    return "[green]allowed[/]" if policy.check(kind, algorithm).allowed else "[red]excluded[/]"


def latency_dimension_columns(rows: Sequence[DimensionRow], kind: str, policy: Policy) -> list[Column]:
    """Return connection time per kex or per host key."""
    mine = [r for r in rows if r.kind == kind]
    longest = max((r.estimate.median for r in mine), default=0.0)
    return [
        Column("key exchange" if kind == "kex" else "host key", tuple(r.algorithm for r in mine), fold=True),
        Column("ms (95% CI)", tuple(_est(r.estimate, METRICS[Kind.LATENCY]) for r in mine), right=True),
        Column("n", tuple(str(r.estimate.n) for r in mine), right=True),
        Column("", tuple(inline_bar(r.estimate.median, longest) for r in mine), shed=1, hidden_as="bar"),
        Column("measured", tuple(r.basis for r in mine), shed=3, hidden_as="how measured"),
        Column("policy", tuple(_verdict(policy, kind, r.algorithm) for r in mine)),
    ]


def transfer_dimension_columns(rows: Sequence[DimensionRow], kind: str, policy: Policy) -> list[Column]:
    """Return MB/s per cipher or per MAC, download and upload side by side."""
    by_name: dict[str, dict[str, DimensionRow]] = {}
    for r in rows:
        if r.kind == kind and r.direction:
            by_name.setdefault(r.algorithm, {})[r.direction] = r
    names = list(by_name)

    def way(direction: str) -> tuple[str, ...]:
        """Return one direction's cells."""
        return tuple(_est(by_name[n][direction].estimate if direction in by_name[n] else None) for n in names)

    basis = [by_name[n].get("down") or by_name[n].get("up") for n in names]
    return [
        Column(kind if kind == "cipher" else "MAC", tuple(names), fold=True),
        Column("download", way("down"), right=True),
        Column("upload", way("up"), right=True),
        Column("measured", tuple(b.basis if b else "" for b in basis), shed=3, hidden_as="how measured"),
        Column("policy", tuple(_verdict(policy, kind, n) for n in names)),
    ]


def top_columns(combos: Sequence[Combo], policy: Policy, top: int) -> list[Column]:
    """Return the N fastest cipher (+ MAC) combinations, both ways combined."""
    shown = combos[:top]
    best = max((c.combined.median for c in shown), default=0.0)

    def allowed(c: Combo) -> bool:
        """Return True when the policy allows the cipher and the MAC."""
        return policy.check("cipher", c.cipher).allowed and (c.mac is None or policy.check("mac", c.mac).allowed)

    def rate(c: Combo, direction: str) -> str:
        """Return one direction's median."""
        e = c.rates.get(direction)
        return "-" if e is None else METRICS[Kind.THROUGHPUT].format(e.median)

    return [
        Column("#", tuple(str(i) for i in range(1, len(shown) + 1)), right=True),
        Column("cipher + MAC", tuple(c.label + (" [yellow]p[/]" if c.predicted else "") for c in shown), fold=True),
        Column("down", tuple(rate(c, "down") for c in shown), right=True),
        Column("up", tuple(rate(c, "up") for c in shown), right=True),
        Column("both ways (CI)", tuple(_est(c.combined) for c in shown), right=True),
        Column("", tuple(inline_bar(c.combined.median, best) for c in shown), shed=1, hidden_as="bar"),
        Column("policy", tuple("[green]allowed[/]" if allowed(c) else "[red]excluded[/]" for c in shown)),
    ]


def _print_fitted(console: Console, title: str, columns: list[Column], lines: Sequence[str] = ()) -> None:
    """Print one sweep table fitted to the console."""
    shown, shed = fit(columns, console.width)
    print_table(console, title, build(shown), hidden_note(shed, columns), lines)


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
    for what, tied in (("combinations", choice.tied), ("key exchanges", choice.tied_kex)):
        if tied:
            console.print(
                f"  {len(tied)} {what} are statistically tied for fastest ({', '.join(tied)}): picked within the "
                "tie by the policy (allowed first, then what the client uses today, then post-quantum)",
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
            title = f"Connection time per {'key exchange' if kind == 'kex' else 'host key'}, lower is better"
            _print_fitted(console, title, latency_dimension_columns(dims, kind, pol))
    for kind in ("cipher", "mac"):
        if any(r.kind == kind for r in dims):
            title = f"Throughput per {'cipher' if kind == 'cipher' else 'MAC'}, MB/s: median (95% CI), higher is better"
            _print_fitted(console, title, transfer_dimension_columns(dims, kind, pol))
    combos = sweep.combinations(stored)
    if combos:
        title = f"Top {min(top, len(combos))} combinations, MB/s, both ways = harmonic mean of down and up"
        note = "  p = predicted from per-byte costs, not measured together; combined intervals are conservative"
        _print_fitted(
            console, title, top_columns(combos, pol, top), [note] if any(c.predicted for c in combos[:top]) else []
        )
    rec = sweep.recommend(stored, run.discovery, pol, full)
    print_recommendation(console, rec, host_for(run), run.source)
    print_bounds(console, run, stored)
    print_unfinished(console, run)
