"""A `load` run's server CPU per login by process role, per step (analyse/load.py reads it from each login's role
phases), or why it was not measured."""

from __future__ import annotations

from rich.console import Console

from sshbench import products
from sshbench.analyse.load import Step
from sshbench.render import screen
from sshbench.render.layout import Column, ms_cell, print_fitted


def _role_columns(rows: list[Step], roles: list[str]) -> list[Column]:
    """Return the role table's columns: each role's ms per login, what they sum to and the cgroup's total."""
    counted = [sum(v for _, v in s.roles) for s in rows]
    kexes = len({s.kex for s in rows}) > 1  # a run that compares key exchanges: each row's named
    return [
        *([Column("kex", tuple(s.kex or "" for s in rows))] if kexes else []),
        Column("offered /s", tuple(f"{s.rate:g}" for s in rows), right=True),
        *(Column(r, tuple(ms_cell(dict(s.roles).get(r)) for s in rows), right=True) for r in roles),
        Column("in records", tuple(ms_cell(c) for c in counted), right=True),
        Column("server", tuple(ms_cell(s.server_cpu) for s in rows), right=True),
        Column(
            "in no record",
            tuple(
                "" if not s.server_cpu else f"{(s.server_cpu - c) / s.server_cpu * 100:.0f} %"
                for s, c in zip(rows, counted, strict=True)
            ),
            right=True,
            shed=0,
        ),
    ]


def print_roles(console: Console, rows: list[Step]) -> None:
    """Print the server's CPU per login by process role per step, where the kernel's exit records were read; how
    it was counted without a cgroup."""
    if any(s.server_cpu_by == "reaped" for s in rows):
        screen.say(
            console,
            "  server CPU without a cgroup: the listener's own and its reaped children's (/proc), so a connection "
            "still open when a step ends is not counted in it; by process role: not measured (the kernel's "
            "per-process exit records, taskstats, need root)",
        )
    elif any(s.server_cpu_by == "cgroup" and not s.roles for s in rows):
        screen.say(
            console,
            "  server CPU by process role: not measured for every step (the kernel's per-process exit records, "
            "taskstats, could not be read here, or came faster than they were read)",
        )
    rows = [s for s in rows if s.roles]
    if not rows:
        return
    seen = [r for r in products.ROLES if any(dict(s.roles).get(r) for s in rows)]
    title = (
        "Server CPU per login by process role, ms, at least: the kernel's record of each process as it ended (the "
        "listener's own from /proc)"
    )
    print_fitted(console, title, _role_columns(rows, seen))
    if screen.brief():
        screen.say(
            console, "  each role's figure is a lower bound: --details says what each role is and why", style="dim"
        )
        return
    for r in seen:
        screen.say(console, f"  {r}: {products.ROLES[r]}", style="dim")
    idle = [r for r in products.ROLES if r not in seen]
    if idle:
        screen.say(console, f"  no CPU recorded in: {', '.join(idle)}", style="dim")
    screen.say(
        console,
        "  in no record: the server's total (its cgroup's) less the records. The kernel writes a process's record as "
        "it begins to exit, holding its CPU up to its last return to the CPU: that last stretch (most of a short "
        "process's life) and its exit are in the total only, so each role's figure is a lower bound",
        style="dim",
    )
