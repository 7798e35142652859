"""The `load` command: logins arriving open-loop at fixed rates against an embedded server."""

from __future__ import annotations

from typing import Any

import click

from sshbench.arrivals import ARRIVALS
from sshbench.cli.common import execute, resuming
from sshbench.cli.decorators import db_option, resume_option, ssh_option
from sshbench.cli.measuring import build_options
from sshbench.cli.options import parse_duration
from sshbench.cli.values import Given
from sshbench.errors import ExitCode, SshbenchError

MAX_RATE = 2000.0  # logins per second: beyond what one machine's ssh processes can start
MAX_STEPS = 20


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
    default="10",
    show_default=True,
    help="Logins per second, one step each: 20, 10,20,40, or 10..80 (doubling from the first to the last).",
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
@ssh_option
@db_option
@resume_option
def load_cmd(**kw: Any) -> None:
    """Logins arriving open-loop at fixed rates: what a server's users feel when many log in at once.

    TARGET is an embedded server (local:openssh by default, local:dropbear, local:tinyssh,
    local:gossh or local:sshd=PATH): sshbench never loads a host it did not start. Each
    arrival is its own `ssh ... true`, started at its intended time whatever the others are
    doing (open loop), and its latency is counted from that time, so a server that stalls
    shows every login queued behind the stall. Per step: offered and achieved rate, p50, p90,
    p99, p99.9 and max from an HdrHistogram of the stored logins, failures by the client's
    words with the 95 % bound of the failure rate, and the generator's CPU per login. Every
    login is stored the moment it ends; Ctrl-C keeps them all.

    \b
    Examples:
      sshbench load --rate 10..80 --step-time 10s
      sshbench load local:dropbear --rate 20 --arrivals poisson
    """
    import dataclasses

    from sshbench.joboptions import LoadOptions
    from sshbench.runkinds import RunKind

    own = {k: kw.pop(k) for k in ("rate", "arrivals", "step_time", "sources", "generator", "slo")}
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
    rates = parse_rates(own["rate"])
    step_time = parse_duration(own["step_time"], "--step-time", "use a positive duration such as 10s or 1m")
    given = dataclasses.replace(given, warmup=0, rounds=1, max_rounds=1, race=False)
    opts = build_options(RunKind.LOAD, given, latency=True, throughput=False)
    slo = parse_duration(own["slo"], "--slo", "use a positive duration such as 500ms or 1s")
    load = LoadOptions(rates, own["arrivals"], step_time, own["generator"], own["sources"], slo)
    execute(dataclasses.replace(opts, own=load), given.db, given.as_json)


COMMANDS = (load_cmd,)
