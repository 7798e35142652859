"""A remote server's session reports itself over the same login: the sshd session process's CPU seconds, peak
RSS and its cgroup's CPU quota, printed on stderr around the payload command, and its own TCP socket as `ss -tin`
shows it while the command runs (every 0.1 s for 0.5 s, then every 0.5 s; Linux hosts with `ss` and `mktemp`;
elsewhere nothing is reported and nothing is guessed). The socket is the one `SSH_CONNECTION` names; the readings
go to a temporary file there, so no poll holds the channel open, and are printed after the command with the file
removed; `ss` runs at the lowest priority, so a session held to a small CPU quota yields little of it to the polls."""

from __future__ import annotations

import itertools
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sshbench.measure.tcpseries import Reading, Series

SESSION_MARK = "sshbench-session:"
SS_MARK = "sshbench-ss:"
SS_FIRST, SS_QUICK = 0.1, 5  # the first polls of the session's socket come this quickly (a 0.3 s sample gets 3)
SS_SECONDS = 0.5  # then this far apart: ss and sleep cost ~4.5 ms of the session's CPU each (docs/BENCHMARKS.md)
# Around a remote command, on stderr: the sshd session process's CPU ticks before and after (fields 14, 15 of
# /proc/PPID/stat, counted after the `(comm)` field), the clock tick, its peak RSS, the CPU quota of its cgroup
# (cpu.max of v2, or cpu.cfs_quota_us and cpu.cfs_period_us of v1's cpu controller) and that cgroup's throttled
# time before and after (cpu.stat: v2 in microseconds, v1 in nanoseconds, marked `ns`). `exec sh -c` makes sh the
# child of sshd whatever the login shell is; `"$0"` is the payload command. Every field is `?` where unreadable.
# Before them, the `sshbench-ss:` lines of the polls of the session's socket (`ss -tinH`), an empty one after each.
SESSION_REPORT = (
    "exec sh -c '"
    't() { sed "s/.*) //" /proc/$PPID/stat 2>/dev/null | cut -d" " -f12,13; }; '
    'g=$(sed -n "s/^0:://p" /proc/$PPID/cgroup 2>/dev/null); '
    'c=$(sed -n "s/^[0-9]*:cpu,cpuacct:\\(.*\\)/\\1/p;s/^[0-9]*:cpu:\\(.*\\)/\\1/p" /proc/$PPID/cgroup '
    "2>/dev/null | head -n 1); d=; qa=; qp=; "
    'for x in "/sys/fs/cgroup$g" "/sys/fs/cgroup/unified$g"; do '
    'if [ -z "$d" ] && [ -r "$x/cpu.max" ] && ! grep -q ^max "$x/cpu.max"; then d=$x; '
    'read qa qp < "$x/cpu.max"; fi; done; '
    'if [ -z "$d" ] && [ -n "$c" ] && [ -r "/sys/fs/cgroup/cpu$c/cpu.cfs_quota_us" ]; then '
    "d=/sys/fs/cgroup/cpu$c; qa=$(cat $d/cpu.cfs_quota_us); qp=$(cat $d/cpu.cfs_period_us); fi; "
    'h() { sed -n "s/^throttled_usec //p;s/^throttled_time \\([0-9]*\\)$/\\1ns/p" '
    '"$d/cpu.stat" 2>/dev/null | head -n 1; }; '
    'f=; w=; if command -v ss >/dev/null 2>&1 && [ -n "$SSH_CONNECTION" ] && f=$(mktemp 2>/dev/null); then '
    "set -- $SSH_CONNECTION; (n=0; while :; do nice -n 19 ss -tinH state established "
    '"( sport = :$4 and dport = :$2 )"; '
    f"echo; n=$((n+1)); s={SS_FIRST}; [ $n -gt {SS_QUICK} ] && s={SS_SECONDS}; sleep $s 2>/dev/null || sleep 1; done) "
    '>"$f" 2>/dev/null & '
    "w=$!; fi; "
    'b=$(t); hb=$(h); sh -c "$0"; s=$?; e=$(t); he=$(h); '
    f'if [ -n "$w" ]; then kill $w 2>/dev/null; sed "s/^/{SS_MARK} /" "$f" >&2; rm -f "$f"; fi; '
    'm=$(sed -n "s/^VmHWM:[^0-9]*\\([0-9]*\\).*/\\1/p" /proc/$PPID/status 2>/dev/null); '
    f'echo "{SESSION_MARK} ${{b:-? ?}} ${{e:-? ?}} $(getconf CLK_TCK 2>/dev/null || echo ?) ${{m:-?}} '
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


_SS_TIMES = {"rtt": "rtt_us", "minrtt": "min_rtt_us", "rcv_rtt": "rcv_rtt_us"}  # milliseconds in ss's output
_SS_COUNTS = {
    "cwnd": "snd_cwnd",
    "mss": "snd_mss",
    "bytes_acked": "bytes_acked",
    "bytes_received": "bytes_received",
    "rcv_space": "rcv_space",
    "snd_wnd": "snd_wnd",
}
_SS_LIMITS = {"busy": "busy_us", "rwnd_limited": "rwnd_limited_us", "sndbuf_limited": "sndbuf_limited_us"}
_SS_FLAGS = {"ts", "sack", "ecn", "ecnseen", "fastopen", "noqueue", "orphaned"}
_RATE = re.compile(r"^([0-9.]+)([KMGT]?)bps$")
_SCALE = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def parse_ss(line: str) -> Reading | None:
    """Return one `ss -tinH` reading of a socket (its two lines joined) as tcp_info fields, None when empty."""
    words = line.split()
    if len(words) < 5 or ":" not in words[2]:
        return None
    info: dict[str, int] = {"app_limited": int("app_limited" in words)}
    lead = itertools.takewhile(lambda w: ":" not in w, words[4:])  # the options, then the congestion control
    cc = next((w for w in lead if w.isalpha() and w not in _SS_FLAGS), "")
    for i, word in enumerate(words[4:], 4):
        key, _, value = word.partition(":")
        number = value.split("/")[0].split("(")[0].removesuffix("ms")
        if key in _SS_TIMES and _is_number(number):
            info[_SS_TIMES[key]] = int(float(number) * 1000)
        elif key in _SS_COUNTS and number.isdigit():
            info[_SS_COUNTS[key]] = int(number)
        elif key in _SS_LIMITS and _is_number(number):
            info[_SS_LIMITS[key]] = int(float(number) * 1000)
        elif key == "retrans" and "/" in value and value.split("/")[1].isdigit():
            info["total_retrans"] = int(value.split("/")[1])
        elif word == "delivery_rate" and i + 1 < len(words) and (rate := _RATE.match(words[i + 1])):
            info["delivery_rate"] = int(float(rate.group(1)) * _SCALE[rate.group(2)] / 8)
    local, peer = words[2].rpartition(":")[2], words[3].rpartition(":")[2]
    return Reading(int(local) if local.isdigit() else 0, int(peer) if peer.isdigit() else 0, 0, cc, info)


def _is_number(text: str) -> bool:
    """Return True for a decimal number as ss prints one."""
    return text.replace(".", "", 1).isdigit()


def socket_report(texts: Sequence[str]) -> dict[str, Any] | None:
    """Return the summary of the session's socket its `ss` polls showed (as the watcher summarises a socket read
    here, marked as read by ss over the login), or None with fewer than 2 readings."""
    polls, lines = [], []
    for text in (t[len(SS_MARK) :] for t in texts if t.startswith(SS_MARK)):
        if text.strip():
            lines.append(text)
        elif lines:
            polls.append(" ".join(lines))
            lines = []
    readings = [r for poll in polls if (r := parse_ss(poll)) is not None]
    if len(readings) < 2:
        return None
    series = Series(readings[0], readings[0])
    for r in readings[1:]:
        series.add(r)
    found = series.summary() | {"read_by": "ss over the login"}
    found.pop("series")  # timed by the remote shell's sleep, not by a clock read here: no time series is claimed
    return found
