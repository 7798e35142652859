"""The `load` command: logins arriving open-loop at fixed rates against an embedded server (its options are read
in cli/loadparse.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from sshbench.arrivals import ARRIVALS
from sshbench.cli.common import execute, resuming
from sshbench.cli.decorators import db_option, resume_option, ssh_config_option, ssh_option
from sshbench.cli.loadparse import MAX_BURST, load_options
from sshbench.cli.measuring import build_options
from sshbench.cli.values import Given
from sshbench.errors import ExitCode, SshbenchError
from sshbench.model import is_local

if TYPE_CHECKING:
    from sshbench.joboptions import LoadOptions

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
    "sessions",
    "start_at",
    "precision",
)


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
    type=click.Choice(("login", "exec", "session")),
    default="login",
    show_default=True,
    help="What each connection does: login (authenticate, run `true`, close), exec (send --exec-size's first "
    "size to the server and read its second back, counted: like a git fetch), or session (open a session and hold "
    "it: --sessions steps, the server's memory per session and CPU at rest).",
)
@click.option(
    "--sessions",
    help="--job session: the numbers of sessions held, one step each, rising (up to 10000); steps this machine "
    "cannot hold (open files, processes, memory) are not run, saying why [default: 1,10,100,1000].",
)
@click.option(
    "--exec-size",
    default="1K,64K",
    show_default=True,
    metavar="UP,DOWN",
    help="--job exec: bytes sent and bytes read back per connection (0 to 16M each).",
)
@click.option(
    "--kex",
    help="The key exchange every login is pinned to [default: the client's own choice]. Rate steps: several, "
    "comma-separated (curve25519-sha256,mlkem768x25519-sha256), run the same steps for each, interleaved in a fresh "
    "order at each rate, each with its own knee, and a capacity table: the server's CPU a login per key exchange, "
    "the logins a second one core serves, and the difference from the first with its 95 % interval.",
)
@click.option("--hostkey", help="The host key algorithm every login is pinned to [default: the client's own choice].")
@click.option(
    "--slo",
    default="1s",
    show_default=True,
    help="The latency users accept: the knee is the highest rate whose p99 stays under it with under 0.1 % of "
    "logins failed and no queue growing (the step's last logins under 1.5 times its first ones'); stepping stops "
    "at the first step past it.",
)
@click.option(
    "--precision",
    default="10%",
    show_default=True,
    metavar="PCT",
    help="Once a step breaks the SLO, rates between the last that kept it and that one are tried, halving the gap "
    "on a log scale, until the two are PCT apart: the knee to within PCT (10..80 finds 40-80, then tries 57, 48, 44). "
    "`off`: the --rate steps only. Steps agreed with other generators (--start-at) are never bisected.",
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
    "--start-at",
    metavar="TIME",
    help="One generator of several (contrib/ansible's load mode): step k starts at TIME + k x (--step-time + 5 s), "
    "TIME in Unix seconds or ISO 8601 (2026-11-27T15:00:00Z), so that every host's steps run together; every step "
    "is run (none stops at the SLO); `sshbench import --merge` makes the hosts' runs one.",
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

    With --job session, sessions are opened and held instead (--sessions 1,10,100,1000, a
    step each, 8 at a time, by the Go generator): per step the server's memory per session
    (PSS, by process role, above the idle server's) and its CPU at rest.

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
      sshbench load local:dropbear --job session --sessions 1,10,100,1000
      sshbench load myhost --rate 1,2,4 --max-rate 4
    """
    import dataclasses

    from sshbench.joboptions import load_kind

    own = {k: kw.pop(k) for k in OWN}
    given = Given.from_click(kw)
    if resuming(given):
        return
    given = dataclasses.replace(given, warmup=0, rounds=1, max_rounds=1, race=False)
    loading = load_options(own, is_local(given.target))
    _one_kex_unless_steps(given, loading)
    opts = build_options(load_kind(loading), given, latency=True, throughput=False)
    execute(dataclasses.replace(opts, own=loading), given.db, given.as_json)


def _one_kex_unless_steps(given: Given, loading: LoadOptions) -> None:
    """Refuse several key exchanges where they are not compared (bursts, sessions held, agreed steps) and several
    host keys anywhere."""
    if "," in (given.hostkey or ""):
        raise SshbenchError(
            "load pins one host key",
            place="--hostkey",
            fix="give one name (sshbench latency compares several)",
            code=ExitCode.USAGE,
        )
    if "," in (given.kex or "") and (loading.burst or loading.job == "session" or loading.start_at is not None):
        raise SshbenchError(
            "several key exchanges are compared in rate steps only (--rate, one generator)",
            place="--kex",
            fix="give one key exchange with --burst, --job session or --start-at, or drop those for --rate steps",
            code=ExitCode.USAGE,
        )


COMMANDS = (load_cmd,)
