"""Terminal presentation with rich: run headers, result tables, history, the one-line answer. Never computes.

Every table reads its units, labels and columns from the scenarios' `Metric`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.console import Console
from rich.table import Table

from sshbench.analyse.results import Row, ranked
from sshbench.model import RunStatus
from sshbench.records import Discovery, RunRecord, StoredScenario
from sshbench.stats import REMEDY

STATUS_STYLE = {RunStatus.COMPLETE: "green", RunStatus.INTERRUPTED: "yellow", RunStatus.FAILED: "red"}


def rank_cell(row: Row) -> str:
    """Return the rank cell, `=2` for statistically tied ranks."""
    return f"={row.rank}" if row.tied else str(row.rank)


def fmt_num(value: float | None, fmt: str) -> str:
    """Format an optional number ('-' when not measured)."""
    return "-" if value is None else format(value, fmt)


def _ms(seconds: float | None) -> float | None:
    """Convert optional seconds to milliseconds."""
    return None if seconds is None else seconds * 1000


def fmt_mib(value: int | None) -> str:
    """Format optional bytes as MiB."""
    return "-" if value is None else f"{value / 2**20:.1f}"


def _pair(row: Row, client: str, server: str, fmt: Callable[[float | None, str], str] | None) -> str:
    """Format a client / server pair of cost medians ('-' when neither was measured)."""
    if row.costs is None:
        return "-"
    a, b = getattr(row.costs, client), getattr(row.costs, server)
    if a is None and b is None:
        return "-"
    if fmt is None:
        return f"{fmt_mib(a)} / {fmt_mib(b)}"
    return f"{fmt(a, '.2f')} / {fmt(b, '.2f')}"


def cost_columns(rows: Sequence[Row]) -> list[tuple[str, Callable[[Row], str]]]:
    """Return the CPU/memory columns that have data in these rows, as (title, cell) pairs."""
    cols: list[tuple[str, Callable[[Row], str]]] = []
    if rows[0].scenario.metric.costs_per_gib:
        cols = [
            ("CPU s/GiB client / server", lambda r: _pair(r, "client_cpu_gib", "server_cpu_gib", fmt_num)),
            ("peak RSS MiB client / server", lambda r: _pair(r, "client_rss", "server_rss", None)),
        ]
    else:
        cols = [("server CPU ms", lambda r: fmt_num(_ms(r.costs.server_cpu if r.costs else None), ".1f"))]
    return [(title, cell) for title, cell in cols if any(cell(r) != "-" for r in rows if r.summary is not None)]


def inline_bar(value: float, best: float, width: int = 16) -> str:
    """Return a bar of block characters proportional to value / best."""
    if best <= 0:
        return ""
    eighths = round(max(0.0, min(value / best, 1.0)) * width * 8)
    return "█" * (eighths // 8) + ("", "▏", "▎", "▍", "▌", "▋", "▊", "▉")[eighths % 8]


def result_table(title: str, rows: Sequence[Row]) -> Table:
    """Return the table of one result group."""
    metric = rows[0].scenario.metric
    table = Table(title=title, title_justify="left", expand=False)
    table.add_column("#", justify="right")
    for col, field in zip(metric.labels.titles, metric.labels.fields, strict=True):
        longest = max((len(getattr(r.scenario, field) or "") for r in rows), default=8)
        table.add_column(col, no_wrap=True, min_width=min(max(longest, len(col)), 40))
    for col in (f"median {metric.unit}", "95% CI", "IQR", "n"):
        table.add_column(col, justify="right")
    extra = cost_columns(rows)
    for col, _ in extra:
        table.add_column(col, justify="right")
    table.add_column("", no_wrap=True)  # inline bar: the ranking at a glance
    best = max((r.summary.median for r in rows if r.summary), default=0.0)
    if metric.phases:
        table.add_column("phases: tcp/ver/kex/auth/session ms")
    notes = any(r.summary is None for r in rows)
    if notes:
        table.add_column("notes")
    for row in rows:
        names = metric.labels.cells(row.scenario)
        s = row.summary
        if s is None:
            status = "[red]failed[/]" if row.failure else "[dim]pending[/]"
            blanks = ["" for _ in extra] + [""] + ([""] if metric.phases else [])
            table.add_row("-", *names, status, "", "", "", *blanks, row.failure or "not measured yet")
            continue
        cells = [cell(row) for _, cell in extra] + [inline_bar(s.median, best)]
        if metric.phases:
            cells.append("/".join(f"{v * 1000:.0f}" for k, v in row.phases if k != "startup"))
        ci = f"{metric.format(s.ci_low)}-{metric.format(s.ci_high)}"
        iqr = f"{metric.format(s.q1)}-{metric.format(s.q3)}"
        flag = " [yellow]![/]" if row.warning else ""
        cells += [""] if notes else []
        table.add_row(rank_cell(row), *names, metric.format(s.median) + flag, ci, iqr, str(s.n), *cells)
    return table


def print_results(console: Console, run: RunRecord, stored: Sequence[StoredScenario]) -> None:
    """Print every result group of a run, its warnings, and the one-line answer."""
    by_group = ranked(stored, run.options.plan.ci_target)
    for rows in by_group.values():
        sc = rows[0].scenario
        console.print(result_table(sc.metric.group(sc).title, rows))
        for row in rows:
            if row.warning:
                console.print(f"  [yellow]![/] {row.scenario.label}: {row.warning}", highlight=False)
        if any(row.warning for row in rows):
            console.print(f"  [yellow]![/] {REMEDY}", highlight=False)
        failed = sum(r.failed_samples for r in rows)
        if failed:
            console.print(f"  {failed} failed sample(s) kept in the database (`sshbench export {run.id}`)")
    answer = fastest_line(by_group, run.discovery)
    if answer:
        console.print(answer, highlight=False)
    print_unfinished(console, run)


def print_unfinished(console: Console, run: RunRecord) -> None:
    """Say how to finish a run that did not complete."""
    if run.status is not RunStatus.COMPLETE:
        how = f"sshbench {run.kind.resume_command} --resume {run.id}"
        console.print(f"[yellow]Run {run.id} is {run.status}[/]: finish it with `{how}`")


def _leaders(rows: Sequence[Row]) -> list[Row]:
    """Return the best row and every row tied with it (tied rows share rank 1)."""
    return [r for r in rows if r.summary is not None and r.rank == 1]


def fastest_line(ranked: dict[str, list[Row]], discovery: Discovery | None) -> str:
    """Return the one-line 'fastest here' answer."""
    parts = []
    for name in ("download", "upload"):
        best = _leaders(ranked.get(name, []))
        if best and best[0].summary:
            names = " = ".join(
                f"{r.scenario.cipher}{'' if r.scenario.mac is None else '+' + r.scenario.mac}" for r in best
            )
            parts.append(f"{name} {names} ({best[0].summary.median:.0f} MB/s{', tied' if len(best) > 1 else ''})")
    best_lat = _leaders(ranked.get("latency", []))
    if best_lat and best_lat[0].summary:
        r = best_lat[0]
        assert r.summary is not None
        parts.append(
            f"quickest connection {r.scenario.kex} / {r.scenario.hostkey} ({r.summary.median * 1000:.0f} ms"
            f"{', tied with ' + str(len(best_lat) - 1) + ' more' if len(best_lat) > 1 else ''})"
            + _rating_note(discovery, "kex", r.scenario.kex)
        )
    if not parts:
        return ""
    return "[bold]Fastest here:[/] " + "; ".join(parts) + " - `sshbench recommend` applies a security policy"


def _rating_note(discovery: Discovery | None, kind: str, name: str | None) -> str:
    """Return ' (ssh-audit: fail)' when the algorithm is rated fail or warn, else ''."""
    rating = discovery.rating(kind, name) if discovery else None
    return f" (ssh-audit: {rating})" if rating in ("fail", "warn") else ""


def print_history(console: Console, runs: Sequence[tuple[RunRecord, int]]) -> None:
    """Print one line per stored run."""
    table = Table(title="Stored runs", title_justify="left")
    for col in ("run", "started (UTC)", "command", "target", "status", "samples"):
        table.add_column(col)
    for run, n in runs:
        style = STATUS_STYLE.get(run.status, "")
        table.add_row(
            str(run.id),
            run.started_at[:19].replace("T", " "),
            run.kind.value,
            run.target,
            f"[{style}]{run.status}[/]",
            str(n),
        )
    console.print(table)


def print_environment(console: Console, run: RunRecord) -> None:
    """Print the run header: target, CPU, versions, server settings, pinning, emulation."""
    env = run.environment
    server = f"; server {env.server_banner}" if env.server_banner else ""
    lines = [
        f"Run {run.id} ({run.kind}, {run.status}) on {env.target or run.target}",
        f"  {env.cpu_model} x{env.cpus} [crypto flags: {', '.join(env.flags_on()) or 'none'}], Linux {env.kernel}",
        f"  {env.openssh_client}, {env.openssl}{server}",
    ]
    embedded = env.embedded
    if embedded and embedded.settings:
        lines.append(f"  server settings: {'; '.join(embedded.settings)}")
    if embedded and (embedded.cpu_accounting or embedded.cpu_unavailable):
        lines.append(f"  server CPU: {embedded.cpu_accounting or f'not measured ({embedded.cpu_unavailable})'}")
    pin = env.pinning
    if pin and pin.client_cpu is not None:
        lines.append(f"  CPU pinning: ssh client on CPU {pin.client_cpu}, server on CPU {pin.server_cpu}")
    elif pin:
        lines.append(f"  CPU pinning: {pin.note}")
    emu = env.emulation
    if emu:
        variables = " ".join(f"{k}={v}" for k, v in emu.variables.items())
        lines.append(
            f"  emulation: {emu.name} ({variables}) in {' and '.join(emu.applies_to)}; "
            f"{emu.evidence_tool}: native {emu.native_mbps or 0:.0f} MB/s, "
            f"emulated {emu.emulated_mbps or 0:.0f} MB/s; not affected: {emu.not_affected}"
        )
    console.print("\n".join(lines), highlight=False, markup=False)
