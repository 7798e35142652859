"""A server's CPU without a cgroup (a normal user's): its listener's own and every descendant's it reaped, from /proc.

A connection's processes count once the listener has reaped them (their times become its children's), so a
sample's reading waits for that (`LocalServer.wait_idle`); one still running at the sample's end is not
counted. /proc gives the times in the kernel's clock ticks: a login's figure is rough, a sum of many exact
(benchmarks/bench_reaped_cpu.py --per-sample: 0.97-1.00 of the cgroup's, per server and command).
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import psutil

REAPED = "/proc"  # what reads it: the first words of the accounting, all a brief screen shows
TICK_MS = 1000 // os.sysconf("SC_CLK_TCK")
UNSEEN = (
    f"a connection's process still running at a sample's end is not counted; read in the kernel's {TICK_MS} ms "
    "ticks, a login's figure is rough and a sum of many exact; as root a cgroup counts all"
)


def accounting(why_no_cgroup: str) -> str:
    """Return how the server's CPU is read without a cgroup, with why there is none and what it cannot see."""
    return f"{REAPED} (the listener's own CPU and its reaped children's; {why_no_cgroup}; {UNSEEN})"


def times(pid: int | None) -> Any:
    """Return a listener's CPU times from /proc (psutil's, with its children's), or None once it is gone."""
    with contextlib.suppress(psutil.Error):
        return None if pid is None else psutil.Process(pid).cpu_times()
    return None


def unreaped(pid: int | None, standing: frozenset[int]) -> list[int]:
    """Return the PIDs of a listener's children that exited and are not reaped yet (outside `standing`)."""
    kids: list[psutil.Process] = []
    with contextlib.suppress(psutil.Error):
        kids = psutil.Process(pid).children() if pid is not None else []
    return [k.pid for k in kids if k.pid not in standing and _zombie(k)]


def _zombie(proc: psutil.Process) -> bool:
    """Return whether a process has exited and is not reaped yet (False once it is gone)."""
    try:
        return bool(proc.status() == psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False
