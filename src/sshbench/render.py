"""Terminal presentation with rich: discovery, result tables, and the one-line answer. Never computes stats."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from sshbench.model import Kind
from sshbench.results import Row, build_rows, groups
from sshbench.stats import REMEDY
from sshbench.store import RunRecord, StoredScenario

TITLES = {
    "latency": "Connection time (spawn -> authenticated -> `true` -> exit), lower is better",
    "download": "Throughput, download (server -> client), handshake excluded, higher is better",
    "upload": "Throughput, upload (client -> server), handshake excluded, higher is better",
}
RATING_STYLE = {"ok": "green", "ok, not post-quantum": "cyan", "warn": "yellow", "fail": "red", "unknown": "dim"}


def _rank(row: Row) -> str:
    """Return the rank cell, `=2` for statistically tied ranks."""
    return f"={row.rank}" if row.tied else str(row.rank)


def _fmt(kind: Kind, value: float) -> str:
    """Format a latency (ms) or throughput (MB/s) value."""
    return f"{value * 1000:.1f}" if kind is Kind.LATENCY else f"{value:.0f}"


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
    kind = rows[0].scenario.kind
    cols: list[tuple[str, Callable[[Row], str]]] = []
    if kind is Kind.THROUGHPUT:
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


def result_table(name: str, rows: Sequence[Row]) -> Table:
    """Return the table of one result group."""
    kind = rows[0].scenario.kind
    u = "ms" if kind is Kind.LATENCY else "MB/s"
    table = Table(title=TITLES[name], title_justify="left", expand=False)
    table.add_column("#", justify="right")
    first, second = ("key exchange", "host key") if kind is Kind.LATENCY else ("cipher", "MAC")
    for col, field in (
        (first, "kex" if kind is Kind.LATENCY else "cipher"),
        (second, "hostkey" if kind is Kind.LATENCY else "mac"),
    ):
        longest = max((len(getattr(r.scenario, field) or "") for r in rows), default=8)
        table.add_column(col, no_wrap=True, min_width=min(max(longest, len(col)), 40))
    for col in (f"median {u}", "95% CI", "IQR", "n"):
        table.add_column(col, justify="right")
    extra = cost_columns(rows)
    for title, _ in extra:
        table.add_column(title, justify="right")
    table.add_column("", no_wrap=True)  # inline bar: the ranking at a glance
    best = max((r.summary.median for r in rows if r.summary), default=0.0)
    if kind is Kind.LATENCY:
        table.add_column("phases: tcp/ver/kex/auth/session ms")
    notes = any(r.summary is None for r in rows)
    if notes:
        table.add_column("notes")
    for row in rows:
        sc = row.scenario
        names = [sc.kex or "", sc.hostkey or ""] if kind is Kind.LATENCY else [sc.cipher or "", sc.mac or "(AEAD)"]
        s = row.summary
        if s is None:
            status = "[red]failed[/]" if row.failure else "[dim]pending[/]"
            blanks = ["" for _ in extra] + [""] + ([""] if kind is Kind.LATENCY else [])
            table.add_row("-", *names, status, "", "", "", *blanks, row.failure or "not measured yet")
            continue
        cells = [cell(row) for _, cell in extra] + [inline_bar(s.median, best)]
        if kind is Kind.LATENCY:
            cells.append("/".join(f"{v * 1000:.0f}" for k, v in row.phases if k != "startup"))
        ci = f"{_fmt(kind, s.ci_low)}-{_fmt(kind, s.ci_high)}"
        iqr = f"{_fmt(kind, s.q1)}-{_fmt(kind, s.q3)}"
        flag = " [yellow]![/]" if row.warning else ""
        cells += [""] if notes else []
        table.add_row(_rank(row), *names, _fmt(kind, s.median) + flag, ci, iqr, str(s.n), *cells)
    return table


def print_results(console: Console, run: RunRecord, stored: list[StoredScenario]) -> None:
    """Print every result group of a run, its warnings, and the one-line answer."""
    ci_target = float(run.options.get("plan", {}).get("ci_target", 0.05))
    ranked = {name: build_rows(members, ci_target) for name, members in groups(stored).items()}
    for name, rows in ranked.items():
        console.print(result_table(name, rows))
        for row in rows:
            if row.warning:
                console.print(f"  [yellow]![/] {row.scenario.label}: {row.warning}", highlight=False)
        if any(row.warning for row in rows):
            console.print(f"  [yellow]![/] {REMEDY}", highlight=False)
        failed = sum(r.failed_samples for r in rows)
        if failed:
            console.print(f"  {failed} failed sample(s) kept in the database (`sshbench export {run.id}`)")
    answer = fastest_line(ranked, run.discovery)
    if answer:
        console.print(answer, highlight=False)
    if run.status != "complete":
        console.print(f"[yellow]Run {run.id} is {run.status}[/]: finish it with `sshbench run --resume {run.id}`")


def _leaders(rows: Sequence[Row]) -> list[Row]:
    """Return the best row and every row tied with it (tied rows share rank 1)."""
    return [r for r in rows if r.summary is not None and r.rank == 1]


def fastest_line(ranked: dict[str, list[Row]], discovery: dict[str, Any] | None) -> str:
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


def _rating_note(discovery: dict[str, Any] | None, kind: str, name: str | None) -> str:
    """Return ' (ssh-audit: fail)' when the algorithm is rated fail or warn, else ''."""
    rating = ((discovery or {}).get("ratings", {}).get(kind, {}).get(name or "") or {}).get("rating")
    return f" (ssh-audit: {rating})" if rating in ("fail", "warn") else ""


def print_discovery(console: Console, disc: dict[str, Any]) -> None:
    """Print client/server algorithm lists with ratings, and what each profile negotiated."""
    server = disc.get("server") or {}
    if disc.get("server_error"):
        console.print(f"[yellow]Server lists unavailable:[/] {disc['server_error']}")
    for kind, title in (("kex", "Key exchange"), ("hostkey", "Host key"), ("cipher", "Cipher"), ("mac", "MAC")):
        table = Table(title=f"{title} algorithms", title_justify="left")
        table.add_column("algorithm", no_wrap=True)
        for col in ("client", "server", "both", "rating", "notes"):
            table.add_column(col)
        client, offered = disc["client"][kind], server.get(kind)
        for name, r in disc["ratings"][kind].items():
            in_c, in_s = name in client, (offered is not None and name in offered)
            style = RATING_STYLE.get(r["rating"], "")
            table.add_row(
                name,
                "yes" if in_c else "",
                "?" if offered is None else ("yes" if in_s else ""),
                "yes" if in_c and in_s else "",
                f"[{style}]{r['rating']}[/]",
                "; ".join(r["reasons"]),
            )
        console.print(table)
    print_negotiation(console, disc)
    console.print(
        f"Ratings: ssh-audit {disc.get('ssh_audit_version', '')} algorithm database "
        "(github.com/jtesta/ssh-audit, MIT).",
        highlight=False,
    )


def print_negotiation(console: Console, disc: dict[str, Any]) -> None:
    """Print what the default and strict client profiles negotiated."""
    server = disc.get("server") or {}
    if server.get("banner"):
        console.print(f"Server: {server['banner']}", highlight=False)
    for p in disc["profiles"]:
        n = p["negotiated"]
        if n is None:
            console.print(f"{p['name']:>8} profile: [red]fails to connect[/]: {p['failure']}", highlight=False)
        else:
            console.print(
                f"{p['name']:>8} profile: kex {n['kex']}, host key {n['hostkey']}, cipher {n['cipher']}, "
                f"MAC {n['mac'] or '(implicit, AEAD)'}",
                highlight=False,
            )


def print_history(console: Console, runs: Sequence[tuple[RunRecord, int]]) -> None:
    """Print one line per stored run."""
    table = Table(title="Stored runs", title_justify="left")
    for col in ("run", "started (UTC)", "command", "target", "status", "samples"):
        table.add_column(col)
    for run, n in runs:
        style = {"complete": "green", "interrupted": "yellow", "failed": "red"}.get(run.status, "")
        table.add_row(
            str(run.id),
            run.started_at[:19].replace("T", " "),
            run.command,
            run.target,
            f"[{style}]{run.status}[/]",
            str(n),
        )
    console.print(table)


def print_environment(console: Console, run: RunRecord) -> None:
    """Print the run header: target, CPU, versions."""
    env = run.environment
    flags = ", ".join(f for f, on in env.get("cpu_flags", {}).items() if on) or "none"
    server = f"; server {env['server_banner']}" if env.get("server_banner") else ""
    lines = [
        f"Run {run.id} ({run.command}, {run.status}) on {env.get('target', run.target)}",
        f"  {env.get('cpu_model')} x{env.get('cpus')} [crypto flags: {flags}], Linux {env.get('kernel')}",
        f"  {env.get('openssh_client')}, {env.get('openssl')}{server}",
    ]
    if env.get("server_settings"):
        lines.append(f"  server settings: {'; '.join(env['server_settings'])}")
    if env.get("server_cpu_accounting") or env.get("server_cpu_unavailable"):
        cpu = env.get("server_cpu_accounting") or f"not measured ({env.get('server_cpu_unavailable')})"
        lines.append(f"  server CPU: {cpu}")
    pin = env.get("pinning")
    if isinstance(pin, dict):
        lines.append(f"  CPU pinning: ssh client on CPU {pin['client_cpu']}, server on CPU {pin['server_cpu']}")
    elif pin:
        lines.append(f"  CPU pinning: {pin}")
    emu = env.get("emulation")
    if emu:
        ev = emu.get("evidence", {})
        variables = " ".join(f"{k}={v}" for k, v in emu["variables"].items())
        lines.append(
            f"  emulation: {emu['name']} ({variables}) in {' and '.join(emu['applies_to'])}; "
            f"{ev.get('tool')}: native {ev.get('native_MBps') or 0:.0f} MB/s, "
            f"emulated {ev.get('emulated_MBps') or 0:.0f} MB/s; not affected: {emu['not_affected']}"
        )
    console.print("\n".join(lines), highlight=False, markup=False)
