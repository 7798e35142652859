"""Terminal presentation of a `servers` run: overview, latency, throughput with CPU/memory, memory per role."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from sshbench.analyse.claims.collect import bound_claims
from sshbench.analyse.results import Row, build_rows
from sshbench.discovery import Profile
from sshbench.joboptions import JobOptions
from sshbench.model import Direction, Kind
from sshbench.records import MemoryRecord, RunRecord, ServerReport, StoredScenario
from sshbench.render import screen
from sshbench.render.console import (
    ci_cell,
    print_claims,
    print_table,
    result_columns,
)
from sshbench.render.header import print_unfinished
from sshbench.render.layout import Column, build, fit, hidden_note, print_fitted, total_width
from sshbench.render.notes import decided_early, row_notes, warned
from sshbench.units import format_value, symbol

STATE_ORDER = ("idle", "session", "transfer")
ROLE_ORDER = ("listener", "monitor", "pre-auth", "session", "command", "client")


PLAIN: dict[str, Any] = {"box": box.SIMPLE_HEAD, "show_edge": False, "pad_edge": False}  # as every other table


def _negotiated(profile: Profile | None) -> str:
    """Return one profile's negotiation as a short multi-line cell."""
    n = None if profile is None else profile.negotiated
    if n is None:
        return f"[red]fails to connect[/]: {None if profile is None else profile.failure}"
    if screen.brief():
        return f"{n.kex}\n{n.cipher}" + (f"\n{n.mac}" if n.mac else "")
    return f"{n.kex}\n{n.hostkey}\n{n.cipher}\n{n.mac or '(AEAD)'}"


def overview_table(servers: Sequence[ServerReport], opts: JobOptions | None = None) -> Table:
    """Return one row per server: software, settings, CPU accounting, offer size, negotiation (a host of the
    user's: measured as it is, with what the embedded servers' limits left alone; the brief screen: settings
    counted, offers as numbers, the default profile's kex and cipher only)."""
    brief = screen.brief()
    said = "kex / cipher (+ MAC) of the default profile" if brief else "kex / host key / cipher / MAC negotiated"
    table = Table(title=f"Servers ({said})", title_justify="left", show_lines=True, **PLAIN)
    titles = ["server", "software", "settings used", "offers", "default profile", "strict profile"]
    if brief:
        titles[3:] = ["offers kex/host key/cipher/MAC", "negotiated"]
    for col in titles:
        table.add_column(col, overflow="fold")  # a narrow terminal folds a name, never cuts it
    for report in servers:
        disc = report.discovery
        if report.skipped or report.failed or disc is None:
            state = "[yellow]skipped[/]" if report.skipped else "[red]did not start[/]"
            table.add_row(report.name, state, report.skipped or report.failed, *[""] * (len(titles) - 3))
            continue
        profiles = ("default",) if brief else ("default", "strict")
        cells = [_offers(disc.server_lists(), brief), *(_negotiated(disc.profile(p)) for p in profiles)]
        software = (disc.server.banner if disc.server else "?").removeprefix("SSH-2.0-")
        table.add_row(report.name, software, "\n".join(_settings(report, opts, brief)), *cells)
    return table


def _offers(offers: Mapping[str, Sequence[str]], brief: bool) -> str:
    """Return how many algorithms of each kind a server offers (`15 kex, 5 hostkey, ...`; brief: `15/5/10/16`)."""
    kinds = ("kex", "hostkey", "cipher", "mac")
    if brief:
        return "/".join(str(len(offers.get(k, ()))) for k in kinds)
    return ", ".join(f"{len(offers.get(k, ()))} {k}" for k in kinds)


def _settings(report: ServerReport, opts: JobOptions | None, brief: bool) -> list[str]:
    """Return a server's settings and how its CPU was read (brief: the settings counted)."""
    info = report.embedded
    accounting = info.cpu_accounting if info else None
    cpu = accounting.split(" (")[0] if accounting else f"not measured: {info.cpu_unavailable if info else None}"
    settings = [*(info.settings if info else ()), f"server CPU: {cpu}"]
    if report.remote:
        settings = [*_remote_settings(opts), "server CPU: its session's own, reported over the login"]
    made = len(settings) - 1
    return [f"{made} setting{'s' if made != 1 else ''} (--details)", settings[-1]] if brief else settings


def _remote_settings(opts: JobOptions | None) -> list[str]:
    """Return how a host of the user's was measured: as it is, and which of the run's limits it was not given."""
    left = [
        name
        for name, given in (
            ("--link", opts and opts.link),
            ("--server-cpu", opts and opts.server_cpu),
            ("--emulate", opts and opts.emulate),
        )
        if given
    ]
    out = ["a host of yours, as it is (your ssh configuration)"]
    if left:
        out.append(f"{', '.join(left)}: applied to the embedded servers only")
    return out


def _cell(row: Row | None, failure: str | None, stacked: bool = False) -> str:
    """Return a latency cell: median ms with CI and n (`stacked`: the interval on a line of its own), or why it is
    missing."""
    if row is None or row.summary is None:
        reason = failure or (row.failure if row else None)
        return "[dim]unsupported[/]" if reason and reason.startswith("unsupported") else ("failed" if reason else "-")
    s, fmt = row.summary, row.scenario.metric.format
    flag = " ~" if decided_early(row) else (" [yellow]![/]" if row.warning and warned(row) else "")
    interval = ci_cell(s, fmt, labelled=not (screen.brief() and decided_early(row)))  # ~: the legend says it
    return f"{fmt(s.median)}{flag} n={s.n}\n({interval})" if stacked else f"{fmt(s.median)}{flag} ({interval}) n={s.n}"


def _cpu_ms(row: Row | None) -> str:
    """Return a row's median server CPU per connection in ms, or '-'."""
    cpu = row.costs.server_cpu if row and row.costs else None
    return format_value("ms", cpu)


def _family(hostkey: str) -> int:
    """Return a host key's family position: ed25519, ecdsa, rsa, other."""
    return next((i for i, f in enumerate(("ed25519", "ecdsa", "rsa")) if f in hostkey), 3)


def latency_columns(rows: Sequence[Row], order: Sequence[str], width: int | None = None) -> list[Column]:
    """Return connection time per server x host key, default and strict profile side by side (each interval on a
    line of its own where the table would not fit in `width` otherwise)."""
    flat = _latency_columns(rows, order, stacked=False)
    if width is None or total_width([c for c in flat if c.shed is None]) <= width:
        return flat
    return _latency_columns(rows, order, stacked=True)


def _latency_columns(rows: Sequence[Row], order: Sequence[str], stacked: bool) -> list[Column]:
    """Return the latency table's columns, each interval beside its median or under it (`stacked`)."""
    cells: dict[tuple[str, str], dict[str, Row]] = {}

    def position(r: Row) -> tuple[int, int, str]:
        """Sort key: server in run order, then ed25519, ecdsa, rsa."""
        sc = r.scenario
        return (order.index(sc.server) if sc.server in order else 99, _family(sc.hostkey or ""), sc.hostkey or "")

    for row in sorted(rows, key=position):
        sc = row.scenario
        cells.setdefault((sc.server or "", sc.hostkey or ""), {})[sc.profile or "default"] = row
    keys = list(cells)
    pairs = [(cells[k].get("default"), cells[k].get("strict")) for k in keys]
    ms = symbol("ms")
    return [
        Column("server", tuple(k[0] for k in keys)),
        Column("host key", tuple(k[1] for k in keys), fold=True),
        Column(f"default profile {ms}", tuple(_cell(d, d.failure if d else None, stacked) for d, _ in pairs), True),
        Column(f"strict profile {ms}", tuple(_cell(s, s.failure if s else None, stacked) for _, s in pairs), True),
        Column(
            f"server CPU {ms} default / strict",
            tuple(f"{_cpu_ms(d)} / {_cpu_ms(s)}" for d, s in pairs),
            right=True,
            shed=2,
            hidden_as="CPU and memory",
        ),
    ]


def _cipher_cell(row: Row, defaults: dict[str, str]) -> str:
    """Return the cipher, starred when it is what the server's default profile negotiates."""
    sc = row.scenario
    return f"{sc.cipher} *" if defaults.get(sc.server or "") == sc.cipher else sc.cipher or ""


def throughput_columns(rows: Sequence[Row], defaults: dict[str, str]) -> list[Column]:
    """Return MB/s per server x cipher with CPU per GiB and peak RSS, in rank order; * marks the negotiated
    cipher."""
    names = [
        Column("server", tuple(r.scenario.server or "" for r in rows)),
        Column("cipher", tuple(_cipher_cell(r, defaults) for r in rows), fold=True),
        Column("MAC", tuple(r.scenario.mac or "(AEAD)" for r in rows), fold=True),
    ]
    return result_columns(rows, names)


def print_server_table(
    console: Console, title: str, columns: list[Column], rows: Sequence[Row] = (), listed: Sequence[Row] | None = None
) -> None:
    """Print one servers table fitted to the console, then the lines under it as under any result table: its
    warnings, why rows have no rank, where CPU per GiB at a rate reads as more than one CPU (`listed`: the rows
    the table lists, when not all)."""
    shown, shed = fit(columns, console.width)
    costs_shown = not any(c.hidden_as == "CPU and memory" for c in shed)
    print_table(console, title, build(shown), hidden_note(shed, columns), row_notes(rows, None, costs_shown, listed))


def memory_table(records: Sequence[MemoryRecord]) -> Table:
    """Return memory per server, state and process role."""
    table = Table(
        title="Memory per process role (PSS shares common pages fairly; RSS counts them in full)",
        title_justify="left",
        **PLAIN,
    )
    for col in ("server", "state", "role", "processes", "VSZ MiB", "RSS MiB", "PSS MiB"):
        table.add_column(col, justify="right" if col.endswith("MiB") or col == "processes" else "left")

    def order(m: MemoryRecord) -> tuple[int, int]:
        """Sort key: state, then role."""
        role = ROLE_ORDER.index(m.role) if m.role in ROLE_ORDER else len(ROLE_ORDER)
        return (STATE_ORDER.index(m.state) if m.state in STATE_ORDER else 9, role)

    servers = list(dict.fromkeys(m.server for m in records))
    for server in servers:
        for m in sorted((m for m in records if m.server == server), key=order):
            sizes = (format_value("MiB", v) for v in (m.vsz, m.rss, m.pss))
            table.add_row(server, m.state, m.role, str(m.processes), *sizes)
        table.add_section()
    return table


def _default_ciphers(servers: Sequence[ServerReport]) -> dict[str, str]:
    """Return the cipher each server's default profile negotiates."""
    out = {}
    for report in servers:
        default = report.discovery.default() if report.discovery else None
        if default is not None and default.cipher:
            out[report.name] = default.cipher
    return out


def print_servers(
    console: Console, run: RunRecord, stored: Sequence[StoredScenario], memory: Sequence[MemoryRecord]
) -> None:
    """Print a servers run: overview, latency, throughput both ways, memory, warnings."""
    console.print(overview_table(run.servers, run.options))
    ci_target = run.options.plan.ci_target
    lat = [st for st in stored if st.scenario.kind is Kind.LATENCY]
    if lat:
        rows = build_rows(lat, ci_target, run.options.margin)
        title = "Connection time per host key, ms: median (95% CI) n, lower is better"
        print_server_table(console, title, latency_columns(rows, [r.name for r in run.servers], console.width), rows)
    defaults = _default_ciphers(run.servers)
    for direction in (Direction.DOWN, Direction.UP):
        members = [st for st in stored if st.scenario.direction is direction]
        if members:
            rows = build_rows(members, ci_target, run.options.margin)
            listed = _listed(rows, defaults)
            way = "download (server -> client)" if direction is Direction.DOWN else "upload (client -> server)"
            title = f"Throughput, {way}, {symbol('MB/s')}, higher is better (* = what the default profile negotiates)"
            print_server_table(console, title, throughput_columns(listed, defaults), rows, listed)
    print_claims(console, "What bounds these rates:", bound_claims(run, stored))
    if memory and screen.brief():
        print_fitted(
            console,
            "Memory per server, PSS MiB, its processes summed (--details: per role, and the ssh client's)",
            _pss(memory),
        )
    elif memory:
        console.print(memory_table(memory))
    for report in run.servers:
        for problem in report.memory_problems:
            screen.say(console, f"  [yellow]![/] {problem}", markup=True)
    print_unfinished(console, run)


def _listed(rows: Sequence[Row], defaults: dict[str, str]) -> list[Row]:
    """Return the rows a throughput table lists: on the brief screen not those racing stopped early, but for what
    each server's default profile negotiates (starred)."""
    if not screen.brief():
        return list(rows)
    return [r for r in rows if not decided_early(r) or defaults.get(r.scenario.server or "") == r.scenario.cipher]


def _pss(memory: Sequence[MemoryRecord]) -> list[Column]:
    """Return memory per server and state, summed over its processes (PSS shares common pages, so it adds up)."""
    servers = list(dict.fromkeys(m.server for m in memory))
    states = [s for s in STATE_ORDER if any(m.state == s for m in memory)]

    def total(server: str, state: str) -> str:
        """Return one server's PSS in one state, summed over its processes."""
        found = [
            m.pss
            for m in memory
            if m.server == server and m.state == state and m.pss is not None and m.role != "client"
        ]
        return format_value("MiB", sum(found)) if found else "-"

    return [
        Column("server", tuple(servers)),
        *(Column(state, tuple(total(sv, state) for sv in servers), right=True) for state in states),
    ]
