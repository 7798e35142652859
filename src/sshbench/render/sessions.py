"""A run of sessions held (`load --job session`, kind `sessions`) as a table per step, its memory per session by
process role, sentences, and its part of the JSON document (analyse/sessions.py computes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from sshbench.analyse.sessions import Held, held_steps, idle_pss, server_label
from sshbench.joboptions import LoadOptions
from sshbench.records import StoredRun
from sshbench.render import screen
from sshbench.render.header import print_page, print_unfinished
from sshbench.render.layout import Column, ms_cell, print_fitted

HOW = (
    "  Sessions held: each one logs in with a key and runs `cat`, whose input stays open and empty, so the session "
    "lasts with nothing sent; they are opened 8 at a time (so that MaxStartups and per-address limits are not what "
    "is measured) and read once all are open. Memory: PSS, which splits a shared page between the processes mapping "
    "it (so one more session costs its PSS), above the idle server's; RSS counts shared pages in full. CPU at rest: "
    "the server's over 2 s with every session open (its cgroup's; without root, its live processes' own)."
)


BRIEF_HOW = "  sessions: each logs in and runs `cat` that waits; memory is PSS above the idle server (--details)"


def _mib(n: float | None) -> str:
    """Return bytes as MiB with two decimals ('' when unknown)."""
    return "" if n is None else f"{n / 2**20:.2f}"


def _cpu(h: Held) -> str:
    """Return the CPU at rest as a percentage of one CPU."""
    return "" if h.cpu_share is None else f"{h.cpu_share * 100:.2f}"


def _columns(rows: list[Held]) -> list[Column]:
    """Return the step table's columns."""
    return [
        Column("sessions", tuple(str(h.n) for h in rows), right=True),
        Column("held", tuple("" if h.held is None else str(h.held) for h in rows), right=True),
        Column("failed", tuple(f"[red]{h.failed}[/red]" if h.failed else "0" for h in rows), right=True),
        Column("open p50 ms", tuple(ms_cell(h.p50) for h in rows), right=True, shed=1),
        Column("open p99 ms", tuple(ms_cell(h.p99) for h in rows), right=True, shed=1),
        Column("server processes", tuple("" if h.processes is None else str(h.processes) for h in rows), right=True),
        Column("server PSS MiB", tuple(_mib(h.pss) for h in rows), right=True),
        Column("PSS MiB /session", tuple(_mib(h.per_session) for h in rows), right=True),
        Column("RSS MiB /session", tuple(_mib(h.rss_per_session) for h in rows), right=True, shed=0),
        Column("CPU at rest %", tuple(_cpu(h) for h in rows), right=True, shed=2),
    ]


def _role_columns(rows: list[Held]) -> list[Column]:
    """Return the per-role table's columns: PSS per session by role (with its processes)."""
    names = list(dict.fromkeys(r.role for h in rows for r in h.roles))
    cells = []
    for name in names:
        out = []
        for h in rows:
            found = {r.role: r for r in h.roles}.get(name)
            out.append("" if found is None else f"{found.per_session / 2**10:.0f} ({found.processes})")
        cells.append(Column(name, tuple(out), right=True))
    listener = Column("listener MiB", tuple(_mib(h.listener) for h in rows), right=True)
    return [Column("sessions", tuple(str(h.n) for h in rows), right=True), *cells, listener]


def sentence(rows: list[Held], product: str) -> str:
    """Return what the largest step read says, in one sentence."""
    done = [h for h in rows if h.per_session is not None and h.held]
    if not done:
        return "No step reached its reading at rest: nothing to say of the memory per session."
    top = done[-1]
    assert top.per_session is not None and top.held is not None
    roles = ", ".join(f"{r.role} {r.per_session / 2**20:.2f}" for r in sorted(top.roles, key=lambda r: -r.per_session))
    how = " (its processes' own, from /proc: no cgroup)" if top.cpu_by == "processes" else ""
    cpu = "" if top.cpu_share is None else f"; at rest the server used {top.cpu_share * 100:.2f} % of a CPU{how}"
    pss = top.pss or 0
    whole = f"{pss / 2**30:.2f} GiB" if pss >= 2**30 else f"{pss / 2**20:.0f} MiB"
    rest = (top.per_session - sum(r.per_session for r in top.roles)) / 2**20
    why = "its shared pages split more ways" if rest < 0 else "what it keeps per session"
    listener = f", the listener {rest:+.2f} MiB: {why}" if abs(rest) >= 0.01 else " MiB"
    where = f" ({roles}{listener})" if roles else " (all of it in its listener)"
    return (
        f"{product} held {top.held:,} sessions in {whole} of PSS: {top.per_session / 2**20:.2f} MiB a session "
        f"above the idle server{where}{cpu}."
    )


def print_sessions(console: Console, stored: StoredRun) -> None:
    """Print the steps of sessions held, the memory per session by role, why steps were not run, and how."""
    rows = held_steps(stored)
    run = [h for h in rows if h.not_run is None]
    product = server_label(stored.run.environment)
    idle = idle_pss(stored)
    title = (
        f"Sessions held on {product}: opened 8 at a time by one Go x/crypto/ssh process; the idle server's PSS "
        f"{_mib(idle)} MiB"
    )
    print_fitted(console, title, _columns(run))
    if any(h.roles for h in run):
        print_fitted(
            console,
            "PSS per session by process role, KiB (processes in the role); the listener's whole PSS",
            _role_columns(run),
        )
    for h in rows:
        if h.not_run is not None:
            screen.say(console, f"  {h.n} sessions: {h.not_run.removeprefix('skipped: ')}")
        for message, count in h.causes:
            screen.say(console, f"  {h.n} sessions: {count} failed: {message}")
    files = next((h.files for h in rows if h.files is not None), None)
    if files is not None and files[0] != files[1]:
        screen.say(
            console,
            f"  Open files: the soft limit was raised from {files[0]} to {files[1]} (the hard limit) for every "
            "process this run started.",
        )
    screen.say(console, f"  {sentence(rows, product)}")
    screen.say(console, BRIEF_HOW if screen.brief() else HOW, style="dim")


def print_sessions_run(console: Console, stored: StoredRun, db: Path, discovery_only: bool = False) -> None:
    """Print a run of sessions held: its header, the steps, then where it is stored."""
    print_page(console, stored, db, print_sessions, lambda c, s: print_unfinished(c, s.run))


def sessions_document(stored: StoredRun) -> dict[str, Any]:
    """Return a session run's part of the JSON document (bytes, seconds, shares of one CPU)."""
    own = stored.run.options.own_as(LoadOptions)
    return {
        "job": own.job,
        "generator": own.generator,
        "sources": own.sources,
        "idle_pss": idle_pss(stored),
        "held": [
            {
                "sessions": h.n,
                "held": h.held,
                "opened": h.opened,
                "failed": h.failed,
                "open_p50": h.p50,
                "open_p99": h.p99,
                "server_processes": h.processes,
                "server_pss": h.pss,
                "pss_per_session": h.per_session,
                "rss_per_session": h.rss_per_session,
                "pss_per_session_by_role": {r.role: r.per_session for r in h.roles} or None,
                "processes_by_role": {r.role: r.processes for r in h.roles} or None,
                "server_cpu_share_at_rest": h.cpu_share,
                "server_cpu_read_from": h.cpu_by,
                "open_files_soft_limit": list(h.files) if h.files else None,
                "not_run": h.not_run,
                "causes": [{"message": m, "count": n} for m, n in h.causes],
            }
            for h in held_steps(stored)
        ],
    }
