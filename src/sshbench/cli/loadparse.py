"""`load`'s own options from its command line, checked: rates, exec sizes, sessions, the agreed start, the server
options of a second server, and what a host of the user's may be loaded at."""

from __future__ import annotations

import itertools
import math
import re
from typing import Any

from sshbench.cli.options import byte_count, parse_duration, parse_percent
from sshbench.errors import ExitCode, SshbenchError
from sshbench.joboptions import LoadOptions, load_kind
from sshbench.runkinds import RunKind

MAX_RATE = 2000.0  # logins per second: beyond what one machine's ssh processes can start
MAX_STEPS = 20
MAX_BURST = 5000
MAX_SESSIONS = 10000  # sessions held at once: OpenSSH's 3-4 processes each
EXEC_MAX = 16 * 2**20  # --exec-size: bytes each way at most
OPTION = re.compile(r"^[A-Za-z][A-Za-z0-9]{1,40}=[A-Za-z0-9:,._@+/-]{1,400}$")  # sshd_config KEY=VALUE, no spaces


def parse_server_options(given: tuple[str, ...]) -> tuple[str, ...]:
    """Check each --server-option is one sshd_config KEY=VALUE (no spaces, quotes or shell words)."""
    for text in given:
        if not OPTION.match(text):
            raise SshbenchError(
                f"bad --server-option {text!r}",
                place="--server-option",
                fix="give one sshd_config option as KEY=VALUE without spaces, e.g. MaxStartups=10:30:60 (repeat the "
                "option for more)",
                code=ExitCode.USAGE,
            )
    return given


def parse_rates(text: str) -> tuple[float, ...]:
    """Parse --rate: `20`, `10,20,40`, or `10..80` (doubling from the first up to the last)."""
    fix = "give logins per second above 0: 20, 10,20,40, or 10..80 (doubling from 10 up to 80)"
    try:
        if ".." in text:
            low, high = (float(x) for x in text.split("..", 1))
            if high < low:
                raise ValueError(text)
            rates = [low]
            while low > 0 and rates[-1] * 2 < high and len(rates) < MAX_STEPS:
                rates.append(rates[-1] * 2)
            rates += [high] if high > rates[-1] else []
        else:
            rates = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise SshbenchError(f"bad --rate {text!r}", place="--rate", fix=fix, code=ExitCode.USAGE) from None
    if not rates or any(not 0 < r <= MAX_RATE for r in rates) or len(rates) > MAX_STEPS:
        raise SshbenchError(
            f"bad --rate {text!r}: each rate must be above 0 and at most {MAX_RATE:g} per second, "
            f"at most {MAX_STEPS} steps",
            place="--rate",
            fix=fix,
            code=ExitCode.USAGE,
        )
    return tuple(rates)


def parse_exec_size(text: str) -> tuple[int, int]:
    """Parse --exec-size `UP,DOWN` (bytes, with K or M) into two byte counts."""
    sizes = [byte_count(part) for part in text.split(",")]
    if len(sizes) != 2 or not all(n is not None and 0 <= n <= EXEC_MAX for n in sizes):
        raise SshbenchError(
            f"bad --exec-size {text!r}",
            place="--exec-size",
            fix="give two sizes, sent and read back, each 0 to 16M: e.g. --exec-size 1K,64K",
            code=ExitCode.USAGE,
        )
    return sizes[0] or 0, sizes[1] or 0


def parse_sessions(text: str) -> tuple[int, ...]:
    """Parse --sessions: rising numbers of sessions held, e.g. `1,10,100,1000`."""
    try:
        counts = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        counts = ()
    rising = all(a < b for a, b in itertools.pairwise(counts))
    if not counts or not rising or not 0 < counts[0] <= counts[-1] <= MAX_SESSIONS or len(counts) > MAX_STEPS:
        raise SshbenchError(
            f"bad --sessions {text!r}",
            place="--sessions",
            fix=f"give rising numbers of sessions from 1 to {MAX_SESSIONS}, at most {MAX_STEPS} steps: e.g. "
            "--sessions 1,10,100,1000",
            code=ExitCode.USAGE,
        )
    return counts


def _session_job(own: dict[str, Any], embedded: bool) -> tuple[int, ...]:
    """Return --job session's steps, refusing what does not go with holding sessions."""
    if own["job"] != "session":
        if own["sessions"]:
            raise SshbenchError(
                "--sessions is for --job session",
                place="--sessions",
                fix="add --job session (sessions opened and held), or leave --sessions out",
                code=ExitCode.USAGE,
            )
        return ()
    clash = [f"--{k}" for k in ("rate", "burst", "max_rate") if own[k]] + (
        ["--server-option"] if own["server_options"] else []
    )
    if not embedded or clash or own["generator"] != "go":
        raise SshbenchError(
            "--job session holds sessions on an embedded server, from the Go generator"
            + (f"; it takes no {', '.join(c.replace('_', '-') for c in clash)}" if clash else ""),
            place="--job session",
            fix="give an embedded server as TARGET (local:openssh, local:dropbear, local:tinyssh, local:gossh), "
            "--sessions for the steps, and leave --generator at go",
            code=ExitCode.USAGE,
        )
    return parse_sessions(own["sessions"] or "1,10,100,1000")


START_AHEAD = 86400.0  # seconds: the furthest ahead --start-at may be
START_LATE = 10.0  # seconds an agreed start may already have passed when the run begins


def parse_start(text: str | None, now: float | None = None) -> float | None:
    """Parse --start-at (Unix seconds or ISO 8601 with a zone) into Unix seconds, within the next day."""
    if text is None:
        return None
    import datetime
    import time

    try:
        when = float(text)
    except ValueError:
        try:
            parsed = datetime.datetime.fromisoformat(text)
        except ValueError:
            parsed = None
        when = parsed.timestamp() if parsed is not None and parsed.tzinfo is not None else math.nan
    now = time.time() if now is None else now
    if not now - START_LATE <= when <= now + START_AHEAD:
        raise SshbenchError(
            f"bad --start-at {text!r}: give an instant within the next day"
            + ("" if math.isnan(when) else f" (it is {when - now:+.0f} s from now)"),
            place="--start-at",
            fix="give Unix seconds (date -d '+1 min' +%s) or ISO 8601 with its zone (2026-11-27T15:00:00Z), the same "
            "on every generator host",
            code=ExitCode.USAGE,
        )
    return when


def load_options(own: dict[str, Any], embedded: bool = True) -> LoadOptions:
    """Return `load`'s own options from its command line, checked (a host of the user's: one ssh per login, from
    this machine's own address)."""
    kind = load_kind(LoadOptions(burst=own["burst"] or 0, job=own["job"]))  # the run kind these flags make
    sessions = _session_job(own, embedded)
    if own["burst"] and own["rate"]:
        raise SshbenchError(
            "--rate steps and --burst are two ways to load a server",
            place="--rate/--burst",
            fix="give one of them (run the other as a second command)",
            code=ExitCode.USAGE,
        )
    if not embedded:
        limit = _max_rate(own, kind.row.hosts)
        rate = own["rate"] or f"{limit / 4:g}..{limit:g}"  # up to the limit, doubling
        own = own | {"generator": "openssh", "sources": 1, "max_rate": limit, "rate": rate}
    elif own["max_rate"] is not None:
        raise SshbenchError(
            "--max-rate is for a host of yours: an embedded server is sshbench's own to load",
            place="--max-rate",
            fix="leave --max-rate out, or name your host as TARGET",
            code=ExitCode.USAGE,
        )
    return LoadOptions(
        parse_rates(own["rate"] or "10") if kind is RunKind.LOAD else (),
        own["arrivals"],
        parse_duration(own["step_time"], "--step-time", "use a positive duration such as 10s or 1m"),
        own["generator"],
        own["sources"],
        parse_duration(own["slo"], "--slo", "use a positive duration such as 500ms or 1s"),
        own["burst"] or 0,
        own["repeats"],
        parse_server_options(own["server_options"]),
        own["job"],
        *(parse_exec_size(own["exec_size"]) if own["job"] == "exec" else (0, 0)),
        own["max_rate"],
        sessions,
        _start(own, kind.row.merges),
        precision=_precision(own["precision"]),
    )


def _precision(text: str) -> float:
    """Parse --precision: a percentage (10%), or `off`."""
    if text.strip().lower() in ("off", "0", "0%"):
        return 0.0
    return parse_percent(text, "--precision")


def _start(own: dict[str, Any], merges: bool) -> float | None:
    """Return --start-at's instant, refused for a kind whose runs are not merged (bursts, sessions: its steps are
    rate steps)."""
    if own["start_at"] is not None and not merges:
        raise SshbenchError(
            "--start-at lines up rate steps across generator hosts",
            place="--start-at",
            fix="use it with --rate steps (not --burst or --job session)",
            code=ExitCode.USAGE,
        )
    return parse_start(own["start_at"])


def _max_rate(own: dict[str, Any], hosts: bool) -> float:
    """Return the --max-rate a host of the user's is loaded under, refusing a run without it, a kind that loads
    embedded servers only (`hosts` False: bursts), a setting to try and steps above it (nothing is sent or
    stored)."""
    limit = own["max_rate"]
    if limit is None or not 0 < limit <= MAX_RATE:
        raise SshbenchError(
            "sshbench does not load a host it did not start unless told how hard: --max-rate is missing"
            if limit is None
            else f"bad --max-rate {limit:g}",
            place="--max-rate",
            fix="add --max-rate N, the most logins per second you allow on this host (e.g. --max-rate 5); steps stay "
            "at or under it",
            code=ExitCode.USAGE,
        )
    if not hosts or own["server_options"]:
        raise SshbenchError(
            "bursts and --server-option run against embedded servers only",
            place="--burst",
            fix="load your host in steps (--rate ... --max-rate ...), or burst an embedded server",
            code=ExitCode.USAGE,
        )
    above = [r for r in parse_rates(own["rate"] or "1") if r > limit]
    if above:
        raise SshbenchError(
            f"--rate {own['rate']} has steps above --max-rate {limit:g}: {', '.join(f'{r:g}' for r in above)}",
            place="--rate",
            fix=f"give rates up to {limit:g} (e.g. --rate {limit / 4:g}..{limit:g}), or raise --max-rate if the host's "
            "owner allows it",
            code=ExitCode.USAGE,
        )
    return float(limit)
