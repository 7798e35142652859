"""Terminal presentation of a `servers` run: overview, latency, throughput with CPU/memory, memory per role."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from sshbench.model import Direction, Kind, MemoryRecord
from sshbench.render import cost_columns, fmt_mib, fmt_num, inline_bar
from sshbench.results import Row, build_rows
from sshbench.stats import REMEDY
from sshbench.store import RunRecord, StoredScenario

STATE_ORDER = ("idle", "session", "transfer")
ROLE_ORDER = ("listener", "monitor", "pre-auth", "session", "command", "client")


def _negotiated(profile: dict[str, Any]) -> str:
    """Return one profile's negotiation as a short multi-line cell."""
    n = profile.get("negotiated")
    if n is None:
        return f"[red]fails to connect[/]: {profile.get('failure')}"
    return f"{n['kex']}\n{n['hostkey']}\n{n['cipher']}\n{n['mac'] or '(AEAD)'}"


def overview_table(servers: dict[str, dict[str, Any]]) -> Table:
    """Return one row per server: software, settings, CPU accounting, offer size, negotiation."""
    table = Table(title="Servers (kex / host key / cipher / MAC negotiated)", title_justify="left", show_lines=True)
    for col in ("server", "software", "settings used", "offers", "default profile", "strict profile"):
        table.add_column(col)
    for name, info in servers.items():
        if "skipped" in info or "failed" in info:
            why = info.get("skipped") or info.get("failed")
            table.add_row(name, "[yellow]skipped[/]" if "skipped" in info else "[red]did not start[/]", why, "", "", "")
            continue
        disc = info["discovery"]
        offer = disc.get("server") or {}
        counts = ", ".join(f"{len(offer.get(k, []))} {k}" for k in ("kex", "hostkey", "cipher", "mac"))
        accounting = info.get("server_cpu_accounting")
        cpu = accounting.split(" (")[0] if accounting else f"not measured: {info.get('server_cpu_unavailable')}"
        profiles = {p["name"]: p for p in disc["profiles"]}
        table.add_row(
            name,
            offer.get("banner", "?"),
            "\n".join([*info.get("server_settings", []), f"server CPU: {cpu}"]),
            counts,
            _negotiated(profiles.get("default", {})),
            _negotiated(profiles.get("strict", {})),
        )
    return table


def _cell(row: Row | None, failure: str | None) -> str:
    """Return a latency cell: median ms with CI, or why it is missing."""
    if row is None or row.summary is None:
        reason = failure or (row.failure if row else None)
        return "[dim]unsupported[/]" if reason and reason.startswith("unsupported") else (reason or "-")
    s = row.summary
    flag = " [yellow]![/]" if row.warning else ""
    return f"{s.median * 1000:.1f}{flag} ({s.ci_low * 1000:.1f}-{s.ci_high * 1000:.1f}) n={s.n}"


def _cpu_ms(row: Row | None) -> str:
    """Return a row's median server CPU per connection in ms, or '-'."""
    cpu = row.costs.server_cpu if row and row.costs else None
    return fmt_num(None if cpu is None else cpu * 1000, ".1f")


def latency_table(rows: Sequence[Row], order: Sequence[str]) -> Table:
    """Return connection time per server x host key, default and strict profile side by side."""
    table = Table(title="Connection time per host key, ms: median (95% CI), lower is better", title_justify="left")
    for col in ("server", "host key", "default profile", "strict profile", "server CPU ms (default/strict)"):
        table.add_column(col, justify="left" if col in ("server", "host key") else "right")
    cells: dict[tuple[str, str], dict[str, Row]] = {}

    def position(r: Row) -> tuple[int, int, str]:
        """Sort key: server in run order, then ed25519, ecdsa, rsa."""
        sc = r.scenario
        family = next((i for i, f in enumerate(("ed25519", "ecdsa", "rsa")) if f in (sc.hostkey or "")), 3)
        return (order.index(sc.server) if sc.server in order else 99, family, sc.hostkey or "")

    for row in sorted(rows, key=position):
        sc = row.scenario
        cells.setdefault((sc.server or "", sc.hostkey or ""), {})[sc.profile or "default"] = row
    for (server, hostkey), by_profile in cells.items():
        default, strict = by_profile.get("default"), by_profile.get("strict")
        table.add_row(
            server,
            hostkey,
            _cell(default, default.failure if default else None),
            _cell(strict, strict.failure if strict else None),
            f"{_cpu_ms(default)} / {_cpu_ms(strict)}",
        )
    return table


def throughput_table(direction: str, rows: Sequence[Row], defaults: dict[str, str]) -> Table:
    """Return MB/s per server x cipher with CPU per GiB and peak RSS; * marks the negotiated cipher."""
    title = "download (server -> client)" if direction == "down" else "upload (client -> server)"
    table = Table(
        title=f"Throughput, {title}, MB/s, higher is better (* = what the default profile negotiates)",
        title_justify="left",
    )
    table.add_column("#", justify="right")
    for col in ("server", "cipher", "MAC"):
        table.add_column(col)
    for col in ("median MB/s", "95% CI", "n"):
        table.add_column(col, justify="right")
    extra = cost_columns(rows) if any(r.summary for r in rows) else []
    for title_, _ in extra:
        table.add_column(title_, justify="right")
    table.add_column("", no_wrap=True)
    best = max((r.summary.median for r in rows if r.summary), default=0.0)
    order = list(dict.fromkeys(r.scenario.server for r in rows))
    for server in order:
        for row in (r for r in rows if r.scenario.server == server):
            sc = row.scenario
            mark = " *" if defaults.get(server or "") == sc.cipher else ""
            names = [server or "", f"{sc.cipher}{mark}", sc.mac or "(AEAD)"]
            s = row.summary
            if s is None:
                reason = row.failure or "not measured yet"
                table.add_row(
                    "-",
                    *names,
                    "[dim]unsupported[/]" if reason.startswith("unsupported") else reason,
                    "",
                    "",
                    *("" for _ in extra),
                    "",
                )
                continue
            flag = " [yellow]![/]" if row.warning else ""
            rank = f"={row.rank}" if row.tied else str(row.rank)
            table.add_row(
                rank,
                *names,
                f"{s.median:.0f}{flag}",
                f"{s.ci_low:.0f}-{s.ci_high:.0f}",
                str(s.n),
                *(cell(row) for _, cell in extra),
                inline_bar(s.median, best),
            )
    return table


def memory_table(records: Sequence[MemoryRecord]) -> Table:
    """Return memory per server, state and process role."""
    table = Table(
        title="Memory per process role (PSS shares common pages fairly; RSS counts them in full)",
        title_justify="left",
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
            table.add_row(server, m.state, m.role, str(m.processes), fmt_mib(m.vsz), fmt_mib(m.rss), fmt_mib(m.pss))
        table.add_section()
    return table


def print_servers(
    console: Console, run: RunRecord, stored: list[StoredScenario], memory: Sequence[MemoryRecord]
) -> None:
    """Print a servers run: overview, latency, throughput both ways, memory, warnings."""
    servers: dict[str, dict[str, Any]] = (run.discovery or {}).get("servers", {})
    console.print(overview_table(servers))
    ci_target = float(run.options.get("plan", {}).get("ci_target", 0.05))
    lat = [st for st in stored if st.scenario.kind is Kind.LATENCY]
    warnings: list[Row] = []
    if lat:
        rows = build_rows(lat, ci_target)
        console.print(latency_table(rows, list(servers)))
        warnings += [r for r in rows if r.warning]
    defaults = {
        name: p["negotiated"]["cipher"]
        for name, info in servers.items()
        for p in (info.get("discovery") or {}).get("profiles", [])
        if p["name"] == "default" and p.get("negotiated")
    }
    for direction in (Direction.DOWN, Direction.UP):
        members = [st for st in stored if st.scenario.direction is direction]
        if members:
            rows = build_rows(members, ci_target)
            console.print(throughput_table(direction.value, rows, defaults))
            warnings += [r for r in rows if r.warning]
    if memory:
        console.print(memory_table(memory))
    for info in servers.values():
        for problem in info.get("memory_problems", []):
            console.print(f"  [yellow]![/] {problem}", highlight=False)
    for row in warnings:
        console.print(f"  [yellow]![/] {row.scenario.label}: {row.warning}", highlight=False)
    if warnings:
        console.print(f"  [yellow]![/] {REMEDY}", highlight=False)
    if run.status != "complete":
        console.print(f"[yellow]Run {run.id} is {run.status}[/]: finish it with `sshbench servers --resume {run.id}`")
