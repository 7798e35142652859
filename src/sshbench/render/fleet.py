"""A fleet on the terminal: a row per host, the hosts not measured and why, groups, outliers, and the one
configuration for every host as ssh_config and sshd_config lines."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from sshbench import hints
from sshbench.analyse.fleet import FleetChoice, HostRow, group_rows, host_rows, outliers, recommend
from sshbench.analyse.policy import resolve
from sshbench.joboptions import FleetOptions
from sshbench.model import Direction
from sshbench.records import StoredRun
from sshbench.render.console import ci_cell, print_table
from sshbench.render.layout import Column, build, fit, total_width
from sshbench.render.snippets import valid_host
from sshbench.stats import Summary
from sshbench.units import format_value, symbol

STATUS = {"complete": "", "incomplete": "[yellow]incomplete[/]", "interrupted": "[yellow]interrupted[/]"}


def ms(value: float) -> str:
    """Format seconds as milliseconds."""
    return format_value("ms", value)


def server(row: HostRow) -> str:
    """Return the server's software from its banner."""
    offer = row.discovery.server if row.discovery else None
    return offer.banner.removeprefix("SSH-2.0-") if offer and offer.banner else "-"


def _rate(row: HostRow, way: Direction) -> str:
    """Return the host's rate with the cipher it negotiates today (else the first one measured)."""
    cipher = row.negotiated("cipher")
    found: Summary | None = row.rates.get((cipher or "", way)) or next(
        (s for (c, w), s in row.rates.items() if w is way), None
    )
    return format_value("MB/s", found.median if found else None)


def _strict(row: HostRow) -> str:
    """Return whether the strict client profile connects to the host."""
    profile = row.discovery.profile("strict") if row.discovery else None
    return "-" if profile is None else ("ok" if profile.negotiated else "[red]fails[/]")


def host_columns(rows: Sequence[HostRow], stacked: bool = False) -> list[Column]:
    """Return the host table's columns (throughput only when it was measured; stacked: an interval's coverage
    under it, for narrow terminals)."""
    measured = [r for r in rows if r.discovery is not None]
    connect = tuple(ms(r.connect.median) if r.connect else "[red]failed[/]" for r in measured)
    interval = tuple(
        ci_cell(r.connect, ms).replace(" (", "\n(" if stacked else " (") if r.connect else "" for r in measured
    )
    columns = [
        Column("host", tuple(r.host.name for r in measured), fold=True),
        Column("groups", tuple(",".join(r.host.groups) for r in measured), shed=2, fold=True),
        Column("server", tuple(server(r) for r in measured), shed=1, fold=True),
        Column("kex (default)", tuple(r.negotiated("kex") or "-" for r in measured), fold=True),
        Column("cipher (default)", tuple(r.negotiated("cipher") or "-" for r in measured), fold=True),
        Column("strict", tuple(_strict(r) for r in measured), shed=0, hidden_as="strict profile"),
        Column("weak", tuple(str(len(r.weak)) for r in measured), right=True),
        Column(f"connect {symbol('ms')}", connect, right=True),
        Column("95% CI", interval, right=True),
    ]
    if any(r.rates for r in measured):
        rates = tuple(f"{_rate(r, Direction.DOWN)}/{_rate(r, Direction.UP)}" for r in measured)
        columns.append(Column(f"{symbol('MB/s')} down/up", rates, right=True))
    return columns


def print_fleet_run(console: Console, stored: StoredRun, db: Path, discovery_only: bool = False) -> None:
    """Print a fleet run (its kind's printer: a fleet has its own header)."""
    print_fleet(console, stored, db)


def print_fleet(console: Console, stored: StoredRun, db: Path) -> None:
    """Print a fleet run: hosts, the ones not measured, groups, outliers, and the configuration for all."""
    run, fleet = stored.run, stored.run.fleet
    assert fleet is not None
    policy = resolve(run.options.policy)
    rows = host_rows(stored, policy)
    measured = sum(r.measured for r in rows)
    forks = run.options.own_as(FleetOptions).forks
    client = f", ssh client {run.options.ssh} (--ssh)" if run.options.ssh else ""
    console.print(
        f"Fleet run {run.id} ({run.status}): {len(rows)} hosts from {fleet.source}, {measured} measured; "
        f"{policy.name}; --forks {forks} at once from {run.environment.client_host or '?'} "
        f"({run.environment.cpus} CPUs, {run.environment.openssh_client}{client})",
        highlight=False,
        markup=False,
    )
    if any(r.discovery is not None for r in rows):
        columns = host_columns(rows)
        shown, shed = fit(columns, console.width)
        if total_width(shown) > console.width:
            columns = host_columns(rows, stacked=True)
            shown, shed = fit(columns, console.width)
        note = f"(narrow terminal: {', '.join(c.hidden_as or c.title for c in shed)} hidden; --wide shows them)"
        lines = [
            f"connect: today's connection (default kex and host key), median of n={_samples(rows)} per host; "
            f"strict: the strict client profile connects; weak: algorithms the host offers that {policy.name} rejects"
            + (f"; {symbol('MB/s')}: with the cipher the host negotiates today" if any(r.rates for r in rows) else "")
        ]
        print_table(console, "Hosts", build(shown), note if shed else None, lines)
    _print_failures(console, rows)
    _print_groups(console, rows)
    for o in outliers(rows):
        console.print(
            f"[yellow]Outlier[/]: {o.host} connects in {ms(o.connect.median)} ms, {o.ratio:.1f}x the median of the "
            f"other hosts of {o.group} ({ms(o.group_median)} ms; its 95% CI starts at {ms(o.connect.ci_low)} ms)",
            highlight=False,
        )
    choice = recommend(rows, policy)
    if choice is not None:
        print_choice(console, choice, rows)
    how = hints.sshbench("show", "RUN")
    console.print(f"Stored as fleet run {run.id} in {db} (each host's own run: `{how}`)", style="dim", highlight=False)


def _samples(rows: Sequence[HostRow]) -> str:
    """Return the sample counts behind the connection times (e.g. `5` or `3-5`)."""
    counts = sorted({r.connect.n for r in rows if r.connect})
    return "-".join(map(str, sorted({counts[0], counts[-1]}))) if counts else "0"


def _print_failures(console: Console, rows: Sequence[HostRow]) -> None:
    """List the hosts that were not measured, with their reasons."""
    failed = [r for r in rows if not r.measured]
    if failed:
        console.print("Not measured", style="bold")
        for r in failed:
            why = r.host.failure or (f"its run is {r.status}" if r.status else "not reached yet")
            console.print(f"  {r.host.name}: {why}", highlight=False, markup=False)


def _print_groups(console: Console, rows: Sequence[HostRow]) -> None:
    """Print a row per inventory group."""
    groups = group_rows(rows)
    if len(groups) < 2 and all(g.name == "ungrouped" for g in groups):
        return
    columns = [
        Column("group", tuple(g.name for g in groups), fold=True),
        Column("hosts", tuple(str(g.hosts) for g in groups), right=True),
        Column("measured", tuple(str(g.measured) for g in groups), right=True),
        Column(f"connect {symbol('ms')}", tuple(format_value("ms", g.connect) for g in groups), right=True),
        Column("range", tuple(ms_range(g.fastest, g.slowest) for g in groups), right=True),
        Column("hosts offering weak", tuple(str(g.weak_hosts) for g in groups), right=True),
    ]
    shown, _ = fit(columns, console.width)
    print_table(console, "Groups (connect: median of the hosts' medians)", build(shown), None)


def ms_range(low: float | None, high: float | None) -> str:
    """Return a range of connection times in ms."""
    return "-" if low is None or high is None else f"{ms(low)}-{ms(high)}"


def print_choice(console: Console, choice: FleetChoice, rows: Sequence[HostRow]) -> None:
    """Print the configuration for every reached host, what it rests on, and who would need a change."""
    console.print(f"One configuration for all {len(choice.hosts)} reached hosts ({choice.policy})", style="bold")
    for k in choice.kinds:
        name = k.pick.name if k.pick else "none"
        console.print(f"  {k.kind}: {name}: {k.basis}", highlight=False, markup=False)
    console.print("  host keys: left as they are (each host's key in your known_hosts decides)", highlight=False)
    if choice.connect_change is not None:
        console.print(
            f"  connection with this kex vs today's default: {choice.connect_change:+.0%} (median over hosts)",
            highlight=False,
        )
    for loss in choice.loses:
        console.print(f"  note: {loss}", highlight=False, markup=False)
    console.print(ssh_config_block(choice), highlight=False, markup=False, soft_wrap=True)
    console.print(sshd_config_lines(choice), highlight=False, markup=False, soft_wrap=True)
    for host, lacks in choice.needs_change.items():
        console.print(
            f"  {host} needs a change for the first choice: add {'; '.join(lacks)} to its sshd_config "
            "(meanwhile it connects with the next one listed)",
            highlight=False,
            markup=False,
        )
    for host, kinds in choice.refuses.items():
        console.print(
            f"  [red]{host} would refuse this configuration[/]: it offers none of the listed {', '.join(kinds)}",
            highlight=False,
        )


def ssh_config_block(choice: FleetChoice) -> str:
    """Return the ssh_config Host block for the reached hosts (the client's order decides: fastest first)."""
    hosts = [h for h in choice.hosts if valid_host(h)]
    body = [f"    {key} {','.join(names)}" for key, names in choice.lists().items()]
    return "\n".join(["# ~/.ssh/config", f"Host {' '.join(hosts)}", *body])


def sshd_config_lines(choice: FleetChoice) -> str:
    """Return sshd_config lines that allow only the listed algorithms (OpenSSH servers)."""
    lines = ["# sshd_config (OpenSSH servers: allows only these; Dropbear and TinySSH take no such lines)"]
    return "\n".join(lines + [f"{key} {','.join(names)}" for key, names in choice.lists().items()])
