"""Print what each key exchange of a `load --kex A,B,...` run costs the server in logins a second (analyse/capacity
computes), and its part of the JSON document."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console

from sshbench.analyse.capacity import KexCapacity, Mean, capacities
from sshbench.analyse.load import Step
from sshbench.joboptions import LoadOptions
from sshbench.records import StoredRun
from sshbench.render.layout import Column, print_fitted


def ms_interval(m: Mean | None, signed: bool = False) -> str:
    """Return a mean in ms with its interval: 19.2 (18.1 .. 20.3), or +0.4 (-0.5 .. +1.2)."""
    if m is None:
        return ""
    f = "+.1f" if signed else ".1f"
    interval = f" ({m.low * 1e3:{f}} .. {m.high * 1e3:{f}})" if m.low is not None and m.high is not None else ""
    return f"{m.value * 1e3:{f}}{interval}"


def _verdict(row: KexCapacity, base: KexCapacity) -> str:
    """Return what a key exchange's difference from the baseline says: no measurable loss, or the change a core."""
    d = row.diff
    if row is base or d is None:
        return "the baseline" if row is base else ""
    if d.low is None or d.high is None:
        return "one rate in common: no interval"
    change = row.change(base)
    per_core = f"{change * 100:+.0f} % logins a second a core" if change is not None else ""
    if d.low <= 0 <= d.high:
        return f"no measurable difference ({per_core})" if per_core else "no measurable difference"
    return per_core


def _knee(row: KexCapacity) -> str:
    """Return the knee's cell: the rate, or at least the highest rate kept when no step read broke the SLO."""
    if row.knee.rate is None:
        return ""
    return f"{row.knee.rate:g}" if row.knee.broken is not None else f">= {row.knee.rate:g}"


def print_capacity(console: Console, rows: Sequence[KexCapacity]) -> None:
    """Print the capacity table: per key exchange, the server's CPU a login, what one core serves, the knee, and the
    difference from the first."""
    if not rows:
        return
    base = rows[0]
    columns = [
        Column("kex", tuple(r.kex or "the client's own" for r in rows)),
        Column("server CPU ms/login (95 %)", tuple(ms_interval(r.cpu) for r in rows), right=True),
        Column("logins/s a core", tuple("" if r.per_core is None else f"{r.per_core:.0f}" for r in rows), right=True),
        Column("knee /s", tuple(_knee(r) for r in rows), right=True),
        Column("vs first, ms/login (95 %)", tuple(ms_interval(r.diff, signed=True) for r in rows), right=True),
        Column("so", tuple(_verdict(r, base) for r in rows)),
    ]
    title = (
        "What each key exchange costs the server (same server, same steps, interleaved): its CPU a login over its "
        "steps, a generator-bound one's too (mean, t-interval), the logins a second one core serves at that cost, "
        f"the knee found; against the first, {base.kex or 'the client own'}: the difference a login, paired per "
        "offered rate"
    )
    print_fitted(console, title, columns)


def capacity_document(stored: StoredRun, rows: Sequence[Step]) -> dict[str, Any]:
    """Return the capacity table's part of the JSON document, for a run that compares key exchanges ({} else)."""
    kexes = stored.run.options.kex
    if len(kexes) < 2:
        return {}
    table = capacities(rows, kexes, stored.run.options.own_as(LoadOptions).slo)
    return {"capacity": [r.to_dict(table[0]) for r in table], "knees": {r.kex: r.knee.rate for r in table}}
