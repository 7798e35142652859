"""A remote server's session reports itself over the same login: the sshd session process's CPU seconds, peak
RSS and its cgroup's CPU quota, printed on stderr around the payload command (Linux hosts; elsewhere nothing is
reported and nothing is guessed)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

SESSION_MARK = "sshbench-session:"
# Around a remote command, on stderr: the sshd session process's CPU ticks before and after (fields 14, 15 of
# /proc/PPID/stat, counted after the `(comm)` field), the clock tick, its peak RSS, the CPU quota of its cgroup
# (cpu.max of v2, or cpu.cfs_quota_us and cpu.cfs_period_us of v1's cpu controller) and that cgroup's throttled
# time before and after (cpu.stat: v2 in microseconds, v1 in nanoseconds, marked `ns`). `exec sh -c` makes sh the
# child of sshd whatever the login shell is; `"$0"` is the payload command. Every field is `?` where unreadable.
SESSION_REPORT = (
    "exec sh -c '"
    "t() { sed \"s/.*) //\" /proc/$PPID/stat 2>/dev/null | cut -d\" \" -f12,13; }; "
    "g=$(sed -n \"s/^0:://p\" /proc/$PPID/cgroup 2>/dev/null); "
    "c=$(sed -n \"s/^[0-9]*:cpu,cpuacct:\\(.*\\)/\\1/p;s/^[0-9]*:cpu:\\(.*\\)/\\1/p\" /proc/$PPID/cgroup "
    "2>/dev/null | head -n 1); d=; qa=; qp=; "
    "for x in \"/sys/fs/cgroup$g\" \"/sys/fs/cgroup/unified$g\"; do "
    "if [ -z \"$d\" ] && [ -r \"$x/cpu.max\" ] && ! grep -q ^max \"$x/cpu.max\"; then d=$x; "
    "read qa qp < \"$x/cpu.max\"; fi; done; "
    "if [ -z \"$d\" ] && [ -n \"$c\" ] && [ -r \"/sys/fs/cgroup/cpu$c/cpu.cfs_quota_us\" ]; then "
    "d=/sys/fs/cgroup/cpu$c; qa=$(cat $d/cpu.cfs_quota_us); qp=$(cat $d/cpu.cfs_period_us); fi; "
    "h() { sed -n \"s/^throttled_usec //p;s/^throttled_time \\([0-9]*\\)$/\\1ns/p\" "
    "\"$d/cpu.stat\" 2>/dev/null | head -n 1; }; "
    "b=$(t); hb=$(h); sh -c \"$0\"; s=$?; e=$(t); he=$(h); "
    "m=$(sed -n \"s/^VmHWM:[^0-9]*\\([0-9]*\\).*/\\1/p\" /proc/$PPID/status 2>/dev/null); "
    f"echo \"{SESSION_MARK} ${{b:-? ?}} ${{e:-? ?}} $(getconf CLK_TCK 2>/dev/null || echo ?) ${{m:-?}} "
    "${qa:-?} ${qp:-?} ${hb:-?} ${he:-?}\" >&2; exit $s' "
)


@dataclass(frozen=True)
class Session:
    """What a remote server's session process reported of itself over the login: CPU seconds, peak RSS, its
    cgroup's quota and how long that cgroup was throttled during the command."""

    cpu: float | None
    rss: int | None  # bytes
    quota: float | None  # CPUs its cgroup may use (None: no quota, or not readable)
    throttled: float | None = None  # seconds the cgroup was held back by its quota during the command


def with_session_report(command: str) -> str:
    """Return a fixed remote command that runs `command` and reports the sshd session's own CPU and memory."""
    if "'" in command or '"' in command:
        raise ValueError(f"remote command {command!r} cannot be wrapped")
    return SESSION_REPORT + shlex.quote(command)


def _int(word: str) -> int | None:
    """Return a report field as an integer (None for `?`, `max`, -1 or anything else)."""
    return int(word) if word.isdigit() else None


def _usec(word: str) -> int | None:
    """Return a throttled time in microseconds (v1 reports nanoseconds, marked `ns`)."""
    return int(word[:-2]) // 1000 if word.endswith("ns") and word[:-2].isdigit() else _int(word)


def session_report(texts: Sequence[str]) -> Session | None:
    """Return the session report a wrapped remote command printed (None when it did not)."""
    line = next((t for t in texts if t.startswith(SESSION_MARK)), None)
    if line is None:
        return None
    words = (line[len(SESSION_MARK) :].split() + ["?"] * 11)[:11]
    u0, s0, u1, s1, tck, rss, qa, qp = (_int(w) for w in words[:8])
    hb, he = (_usec(w) for w in words[8:10])
    cpu = None
    if None not in (u0, s0, u1, s1) and tck:
        cpu = ((u1 or 0) + (s1 or 0) - (u0 or 0) - (s0 or 0)) / tck
    quota = qa / qp if qa and qp else None
    throttled = (he - hb) / 1e6 if he is not None and hb is not None and he >= hb else None
    return Session(cpu, None if rss is None else rss * 1024, quota, throttled)
