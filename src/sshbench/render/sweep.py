"""Terminal presentation of a sweep: per-dimension aggregates, top combinations, and recommendations."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape

from sshbench import hints
from sshbench.analyse import sweep
from sshbench.analyse.claims.caveats import measured_under
from sshbench.analyse.claims.collect import run_recommendation
from sshbench.analyse.claims.core import names
from sshbench.analyse.policy import Policy
from sshbench.analyse.recommend import Choice, Recommendation
from sshbench.analyse.sweep import Combo, DimensionRow, Estimate
from sshbench.model import METRICS, Kind, Metric
from sshbench.records import RunRecord, StoredScenario
from sshbench.render import screen
from sshbench.render.console import (
    inline_bar,
    policy_of,
    print_bounds,
    print_claims,
    print_table,
)
from sshbench.render.header import print_unfinished
from sshbench.render.layout import Column, build, fit, hidden_note
from sshbench.render.snippets import host_for, ssh_config, sshd_config
from sshbench.samples import SKIPPED
from sshbench.units import symbol


def _est(e: Estimate | None, metric: Metric = METRICS[Kind.THROUGHPUT], failure: str | None = None) -> str:
    """Format an estimate as `median (low-high)` in the metric's unit (`failed` when its scenario failed)."""
    if e is None:
        if failure and failure.startswith(SKIPPED):
            return "[dim]skipped[/]"
        return "[red]failed[/]" if failure else "-"
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
    longest = max((r.estimate.median for r in mine if r.estimate), default=0.0)
    return [
        Column("key exchange" if kind == "kex" else "host key", tuple(r.algorithm for r in mine), fold=True),
        Column("ms (95% CI)", tuple(_est(r.estimate, METRICS[Kind.LATENCY], r.failure) for r in mine), right=True),
        Column("n", tuple(str(r.estimate.n) if r.estimate else "0" for r in mine), right=True),
        Column(
            "",
            tuple(inline_bar(r.estimate.median, longest) if r.estimate else "" for r in mine),
            shed=1,
            hidden_as="bar",
        ),
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
        return tuple(
            _est(by_name[n][direction].estimate, failure=by_name[n][direction].failure)
            if direction in by_name[n]
            else "-"
            for n in names
        )

    basis = [by_name[n].get("down") or by_name[n].get("up") for n in names]
    ways = [d for d in ("down", "up") if any(d in by_name[n] for n in names)]  # a way not measured has no column
    return [
        Column(kind if kind == "cipher" else "MAC", tuple(names), fold=True),
        *(Column(sweep.WAYS[d], way(d), right=True) for d in ways),
        Column("measured", tuple(b.basis if b else "" for b in basis), shed=3, hidden_as="how measured"),
        Column("policy", tuple(_verdict(policy, kind, n) for n in names)),
    ]


def top_columns(
    combos: Sequence[Combo], policy: Policy, top: int, ways: Sequence[str] = ("down", "up")
) -> list[Column]:
    """Return the N fastest cipher (+ MAC) combinations: each way measured, and both ways combined when both were."""
    shown = combos[:top]
    best = max((c.combined.median for c in shown), default=0.0)

    def allowed(c: Combo) -> bool:
        """Return True when the policy allows the cipher and the MAC."""
        return policy.check("cipher", c.cipher).allowed and (c.mac is None or policy.check("mac", c.mac).allowed)

    def rate(c: Combo, direction: str) -> str:
        """Return one direction's median."""
        e = c.rates.get(direction)
        return "-" if e is None else METRICS[Kind.THROUGHPUT].format(e.median)

    each = [Column(d, tuple(rate(c, d) for c in shown), right=True) for d in ways] if len(ways) > 1 else []
    return [
        Column("#", tuple(str(i) for i in range(1, len(shown) + 1)), right=True),
        Column("cipher + MAC", tuple(c.label + (" [yellow]p[/]" if c.predicted else "") for c in shown), fold=True),
        *each,
        Column(f"{sweep.ways_text(ways)} (CI)", tuple(_est(c.combined) for c in shown), right=True),
        Column("", tuple(inline_bar(c.combined.median, best) for c in shown), shed=1, hidden_as="bar"),
        Column("policy", tuple("[green]allowed[/]" if allowed(c) else "[red]excluded[/]" for c in shown)),
    ]


def failure_lines(rows: Sequence[DimensionRow], kind: str) -> list[str]:
    """Return one line per row of a dimension that was not measured, with its reason."""
    out = []
    for r in rows:
        if r.kind != kind or r.estimate is not None:
            continue
        why = r.failure or ""
        word = "[dim]skipped[/]" if why.startswith(SKIPPED) else "[red]failed[/]"
        where = f" {r.direction}" if r.direction else ""
        out.append(f"  {word} {escape(r.algorithm)}{where}: {escape(why.removeprefix(SKIPPED))}")
    return out


def _print_fitted(console: Console, title: str, columns: list[Column], lines: Sequence[str] = ()) -> None:
    """Print one sweep table fitted to the console."""
    shown, shed = fit(columns, console.width)
    print_table(console, title, build(shown), hidden_note(shed, columns), lines)


def print_choice(console: Console, choice: Choice, host: str, source: str, conditions: str | None = None) -> None:
    """Print one recommendation: what it claims, then its ssh_config and sshd_config snippets."""
    console.print(f"\n[bold]{choice.title}[/]", highlight=False)
    for claim in choice.claims():
        screen.say(console, f"  {claim.text}")
    # soft_wrap: long algorithm lists must stay on one line to be pasted
    console.print("  ~/.ssh/config:", style="dim")
    console.print(ssh_config(choice, host, source, conditions), highlight=False, markup=False, end="", soft_wrap=True)
    console.print("  sshd_config:", style="dim")
    console.print(sshd_config(choice, source, conditions), highlight=False, markup=False, end="", soft_wrap=True)


def print_recommendation(
    console: Console,
    rec: Recommendation,
    host: str,
    source: str,
    conditions: str | None = None,
    run_id: int | None = None,
) -> None:
    """Print the three recommendations, what the policy excluded and why, and the caveats (a sweep's brief screen,
    `run_id` given: the policy's pick alone, the others and the reasons left to `recommend RUN`)."""
    if run_id is not None and screen.brief() and rec.within_policy is not None:
        print_choice(console, rec.within_policy, host, source, conditions)
        whole = hints.sshbench("recommend", str(run_id))
        others = (
            f"the fastest overall and the fastest handshake, and why {len(rec.excluded)} algorithm(s) were excluded"
        )
        screen.say(console, f"  `{whole}` prints {others}")
        return
    for choice in (rec.overall, rec.within_policy, rec.handshake):
        if choice is not None:
            print_choice(console, choice, host, source, conditions)
    if rec.excluded:
        console.print(f"\n[bold]Excluded by {rec.policy['name']}[/] (every reason):", highlight=False)
        for kind, algorithm, reason in rec.excluded:
            screen.say(console, f"  {kind:8} {algorithm}: {reason}")
    if rec.caveats:
        console.print()
        print_claims(console, "Caveats", rec.caveats)


def print_sweep(console: Console, run: RunRecord, stored: Sequence[StoredScenario], top: int = 10) -> None:
    """Print a sweep: per-dimension aggregates, top combinations, recommendation under the run's policy."""
    pol = policy_of(run)
    full = run.options.full_latency
    dims = sweep.dimensions(stored, full)
    for kind in ("kex", "hostkey"):
        if any(r.kind == kind for r in dims):
            title = f"Connection time per {'key exchange' if kind == 'kex' else 'host key'}, lower is better"
            _print_fitted(console, title, latency_dimension_columns(dims, kind, pol), failure_lines(dims, kind))
    for kind in ("cipher", "mac"):
        if any(r.kind == kind for r in dims):
            title = (
                f"Throughput per {'cipher' if kind == 'cipher' else 'MAC'}, {symbol('MB/s')}: median (95% CI), "
                "higher is better"
            )
            _print_fitted(console, title, transfer_dimension_columns(dims, kind, pol), failure_lines(dims, kind))
    combos = sweep.combinations(stored)
    ways = sweep.measured_directions(stored)
    if combos:
        what = "both ways = harmonic mean of down and up" if len(ways) > 1 else f"{sweep.ways_text(ways)} only"
        title = f"Top {min(top, len(combos))} combinations, {symbol('MB/s')}, {what}"
        notes = ["  p = predicted from per-byte costs, not measured together; combined intervals are conservative"]
        notes = notes if any(c.predicted for c in combos[:top]) else []
        missing = sweep.predictions(stored)[1]
        if missing:
            notes.append(
                f"  not predicted ({len(missing)}): the model's interval would reach beyond +-50 % or it "
                f"broke down: {names(missing)}"
            )
        _print_fitted(console, title, top_columns(combos, pol, top, ways), notes)
    rec = run_recommendation(run, stored, pol)
    print_recommendation(console, rec, host_for(run), run.source, measured_under(run.environment), run.id)
    print_bounds(console, run, stored)
    print_unfinished(console, run)
