"""The `load` command: logins arriving open-loop at fixed rates against an embedded server."""

from __future__ import annotations

import re
from typing import Any

import click

from sshbench.arrivals import ARRIVALS
from sshbench.cli.common import execute, resuming
from sshbench.cli.decorators import db_option, resume_option, ssh_config_option, ssh_option
from sshbench.cli.measuring import build_options
from sshbench.cli.options import byte_count, parse_duration
from sshbench.cli.values import Given
from sshbench.errors import ExitCode, SshbenchError
from sshbench.joboptions import LoadOptions
from sshbench.model import is_local

MAX_RATE = 2000.0  # logins per second: beyond what one machine's ssh processes can start
MAX_STEPS = 20
MAX_BURST = 5000
EXEC_MAX = 16 * 2**20  # --exec-size: bytes each way at most
OWN = (  # `load`'s own options, taken out of the shared ones
    "rate",
    "arrivals",
    "step_time",
    "sources",
    "generator",
    "slo",
    "burst",
    "repeats",
    "server_options",
    "job",
    "exec_size",
    "max_rate",
)
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


@click.command("load")
@click.argument("target", default="local", metavar="[TARGET]")
@click.option(
    "--rate",
    help="Logins per second, one step each: 20, 10,20,40, or 10..80 (doubling from the first to the last) "
    "[default: 10].",
)
@click.option(
    "--arrivals",
    type=click.Choice(ARRIVALS),
    default="constant",
    show_default=True,
    help="Arrivals evenly spaced, or with exponential gaps (Poisson, as independent users arrive).",
)
@click.option("--step-time", default="10s", show_default=True, help="Length of each step's arrivals (5s, 1m).")
@click.option(
    "--sources",
    default=8,
    show_default=True,
    type=click.IntRange(1, 200),
    help="Loopback source addresses the logins come from (127.0.0.2 and up), so that per-address limits do not "
    "stand in for the server's.",
)
@click.option(
    "--generator",
    type=click.Choice(("go", "openssh")),
    default="go",
    show_default=True,
    help="go: Go's x/crypto/ssh driver starts every login of a step in one process (built once; many connections "
    "at little CPU); openssh: one `ssh ... true` per login, as cron jobs and CI connect.",
)
@click.option(
    "--burst",
    type=click.IntRange(1, MAX_BURST),
    help="Instead of steps: N connections started at one instant (the top of the hour), --repeats times, each once "
    "the server is idle again: how many were dropped, why, and how long until all were served.",
)
@click.option(
    "--repeats",
    default=5,
    show_default=True,
    type=click.IntRange(5, 100),
    help="Bursts per setting (at least 5).",
)
@click.option(
    "--server-option",
    "server_options",
    multiple=True,
    metavar="KEY=VALUE",
    help="With --burst, embedded OpenSSH: an sshd_config option (repeatable) for a second server whose bursts are "
    "interleaved with the first's and compared on the share dropped (exact intervals); the line to paste is printed "
    "with its measured effect.",
)
@click.option(
    "--job",
    type=click.Choice(("login", "exec")),
    default="login",
    show_default=True,
    help="What each connection does: login (authenticate, run `true`, close) or exec (send --exec-size's first "
    "size to the server and read its second back, counted: like a git fetch).",
)
@click.option(
    "--exec-size",
    default="1K,64K",
    show_default=True,
    metavar="UP,DOWN",
    help="--job exec: bytes sent and bytes read back per connection (0 to 16M each).",
)
@click.option("--kex", help="The key exchange every login is pinned to [default: the client's own choice].")
@click.option("--hostkey", help="The host key algorithm every login is pinned to [default: the client's own choice].")
@click.option(
    "--slo",
    default="1s",
    show_default=True,
    help="The latency users accept: the knee is the highest rate whose p99 stays under it with under 0.1 % of "
    "logins failed; stepping stops at the first step past it.",
)
@click.option(
    "--max-time",
    default="10m",
    show_default=True,
    help="Time budget: a plan whose steps cannot fit is refused before anything is stored.",
)
@click.option(
    "--max-rate",
    type=float,
    help="A host of yours (TARGET an ssh_config alias or user@host): the highest rate in logins per second you "
    "allow on it; without it sshbench does not load a host it did not start. Steps above it are refused; the run "
    "stops at the first run of connections closed before the banner (the host's limits or penalties), saying what "
    "can cause them.",
)
@click.option(
    "--pin/--no-pin",
    default=True,
    show_default=True,
    help="The generator (and sshbench) on one CPU, the server on another, like two hosts; a step where the "
    "generator used 85 % of the CPU it may is marked generator-bound and not read as the server's.",
)
@ssh_config_option
@ssh_option
@db_option
@resume_option
def load_cmd(**kw: Any) -> None:
    """Logins arriving open-loop at fixed rates: what a server's users feel when many log in at once.

    TARGET is an embedded server (local:openssh by default, local:dropbear, local:tinyssh,
    local:gossh or local:sshd=PATH); a host of yours only with --max-rate (one ssh per login
    through your ssh config, from this machine's address). Each
    arrival is its own connection, started at its intended time whatever the others are
    doing (open loop), and its latency is counted from that time, so a server that stalls
    shows every login queued behind the stall. Per step: offered and achieved rate, p50, p90,
    p99, p99.9 and max from an HdrHistogram of the stored logins, failures by cause with the
    95 % bound of the failure rate, the generator's and the server's CPU per login, and the
    knee with what bounds it. Every login is stored the moment it ends; Ctrl-C keeps them all.

    With --burst N, N connections start at one instant instead, --repeats times; with
    --server-option KEY=VALUE a second embedded OpenSSH with that setting takes every other
    burst, and the two are compared. A connection the server dropped is named from the
    server's own log where it says so (OpenSSH: MaxStartups, PerSourcePenalties).

    \b
    Examples:
      sshbench load --rate 10..80 --step-time 10s
      sshbench load local:dropbear --rate 20 --arrivals poisson
      sshbench load --burst 60 --server-option MaxStartups=10:30:60
      sshbench load --job exec --exec-size 1K,256K --rate 10..40
      sshbench load myhost --rate 1,2,4 --max-rate 4
    """
    import dataclasses

    from sshbench.runkinds import RunKind

    own = {k: kw.pop(k) for k in OWN}
    given = Given.from_click(kw)
    if resuming(given):
        return
    if "," in (given.kex or "") or "," in (given.hostkey or ""):
        raise SshbenchError(
            "load pins one key exchange and one host key",
            place="--kex/--hostkey",
            fix="give one name each (sshbench latency compares several)",
            code=ExitCode.USAGE,
        )
    given = dataclasses.replace(given, warmup=0, rounds=1, max_rounds=1, race=False)
    opts = build_options(RunKind.LOAD, given, latency=True, throughput=False)
    execute(dataclasses.replace(opts, own=load_options(own, is_local(opts.target))), given.db, given.as_json)


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


def load_options(own: dict[str, Any], embedded: bool = True) -> LoadOptions:
    """Return `load`'s own options from its command line, checked (a host of the user's: one ssh per login, from
    this machine's own address)."""
    if own["burst"] and own["rate"]:
        raise SshbenchError(
            "--rate steps and --burst are two ways to load a server",
            place="--rate/--burst",
            fix="give one of them (run the other as a second command)",
            code=ExitCode.USAGE,
        )
    if not embedded:
        limit = _max_rate(own)
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
        () if own["burst"] else parse_rates(own["rate"] or "10"),
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
    )


def _max_rate(own: dict[str, Any]) -> float:
    """Return the --max-rate a host of the user's is loaded under, refusing a run without it, bursts, a setting to
    try and steps above it (nothing is sent or stored)."""
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
    if own["burst"] or own["server_options"]:
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


COMMANDS = (load_cmd,)
