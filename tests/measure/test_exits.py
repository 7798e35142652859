"""The kernel's exit records read back (taskstats messages built as the kernel lays them out) and a server's
processes told apart by role: OpenSSH 9.2 and 10, Dropbear, the Go server."""

from __future__ import annotations

import os
import struct
import subprocess
import time

import pytest

from sshbench.measure import exits
from sshbench.measure.exits import Exit, ExitWatch, Roles, parse

L = 100  # the listener's pid


def message(pid: int, ppid: int, comm: str, ran_ns: int, user_us: int = 0) -> bytes:
    """Return one taskstats message for a task's exit, laid out as linux/taskstats.h has it."""
    stats = bytearray(exits.STATS_LEN)
    struct.pack_into("H", stats, 0, 16)
    exits.RAN.pack_into(stats, 72, ran_ns)
    stats[exits.COMM : exits.COMM + len(comm)] = comm.encode()
    exits.IDS.pack_into(stats, 120, 0, 0, pid, ppid)
    exits.TIMES.pack_into(stats, 152, user_us, 0)
    inner = exits._attr(exits.TASKSTATS_TYPE_PID, struct.pack("I", pid)) + exits._attr(3, bytes(stats))
    body = struct.pack("BBH", 3, 1, 0) + exits._attr(exits.TASKSTATS_TYPE_AGGR_PID, inner)
    return exits.HEADER.pack(exits.HEADER.size + len(body), 31, 0, 0, 0) + body


def test_a_record_reads_back_its_pid_parent_name_and_cpu() -> None:
    assert parse(message(7, 3, "sshd-auth", 2_500_000)) == [Exit(7, 3, "sshd-auth", 0.0025)]
    assert parse(message(7, 3, "sh", 0, user_us=4000)) == [Exit(7, 3, "sh", 0.004)]  # no runtime: the times


def test_a_connection_is_counted_by_role_once_its_first_process_ended() -> None:
    r = Roles(L)
    r.add([Exit(11, 10, "sshd", 0.003), Exit(13, 12, "bash", 0.001), Exit(12, 10, "sshd", 0.002)])  # 9.2, a user
    r.add([Exit(99, 1, "ssh", 0.5)])  # not the server's
    assert sum(r.totals.values()) == 0  # the monitor (10) still runs
    r.add([Exit(10, L, "sshd", 0.010)])
    assert r.totals == pytest.approx({"connection": 0.010, "pre-auth": 0.003, "post-auth": 0.002, "command": 0.001})
    r.add([Exit(21, 20, "sshd-auth", 0.007), Exit(20, L, "sshd-session", 0.008)])  # 10.0
    r.add([Exit(31, 30, "bash", 0.002), Exit(30, L, "dropbear", 0.006), Exit(40, L, "bash", 0.001)])  # Dropbear, Go
    assert r.totals == pytest.approx({"connection": 0.024, "pre-auth": 0.010, "post-auth": 0.002, "command": 0.004})


def test_a_watch_reads_a_childs_exit_or_says_why_it_cannot() -> None:
    watch = ExitWatch.open()
    if os.geteuid() != 0:
        assert isinstance(watch, str) and "root" in watch
        return
    assert isinstance(watch, ExitWatch), watch
    try:
        child = subprocess.Popen(["sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"])
        child.wait()
        deadline = time.monotonic() + 5
        seen: list[Exit] = []
        while time.monotonic() < deadline and not [e for e in seen if e.pid == child.pid]:
            seen += watch.exits()
            time.sleep(0.05)
        (mine,) = [e for e in seen if e.pid == child.pid]
        assert mine.ppid == os.getpid() and mine.comm == "sh" and 0 < mine.cpu < 5
    finally:
        watch.close()
