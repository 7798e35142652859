"""The `interop` command: every client with every embedded server and key exchange, many logins each."""

from __future__ import annotations

from typing import Any

import click

from sshbench.cli.clients import parse_servers
from sshbench.cli.common import execute, resuming
from sshbench.cli.decorators import algorithm_option, db_option, resume_option, ssh_option
from sshbench.cli.measuring import build_options
from sshbench.cli.values import Given
from sshbench.clienttypes import NAMES, parse_clients

LOGINS = 100  # per pair: 0 failures of 100 bound the failure rate at 3.0 % (95 %)
MAX_LOGINS = 100_000


@click.command("interop")
@click.option(
    "--client",
    default="all",
    show_default=True,
    help=f"Clients to soak, comma-separated: {','.join(NAMES)} (or all). One that is not installed is listed with "
    "how to install it.",
)
@click.option(
    "--server",
    "server_specs",
    metavar="SPECS",
    help="Embedded servers, comma-separated [default: local:openssh,local:dropbear,local:tinyssh,local:gossh, "
    "those that can run here]; local:sshd=PATH adds an OpenSSH of another version.",
)
@algorithm_option(
    "kex",
    "Key exchanges to log in with, comma-separated: exactly these on every server that offers them, under a name "
    "both speak (a server that offers none is n/a, with its offer) [default: every kex each client and server both "
    "have].",
)
@algorithm_option(
    "hostkey",
    "Host key algorithms, comma-separated: every pair once with each (the server's key of that type, verified "
    "against its known_hosts); a client that cannot be pinned to one (dbclient) is n/a [default: each client's own "
    "choice].",
)
@click.option(
    "--logins",
    default=LOGINS,
    show_default=True,
    type=click.IntRange(1, MAX_LOGINS),
    help="Full logins per pair (connect, verify the host key, authenticate, run `true`, close). 0 failures of N "
    "bound the failure rate at about 3/N (95 %); a 1-in-512 bug needs about 1500 to be bounded below it.",
)
@click.option(
    "--max-time",
    default="10m",
    show_default=True,
    help="Time budget of the whole soak (90s, 30m, or none). A soak that cannot fit is refused before any login "
    "is stored, naming the --logins that would; one the budget or Ctrl-C cuts short keeps every login and "
    "`--resume` finishes it.",
)
@click.option(
    "--rekey",
    metavar="SIZE",
    help="Rekey soak: set RekeyLimit SIZE (64K, 1M) on every embedded OpenSSH server and on ssh, and have each "
    "login move 4 x SIZE from the server (sshd's ForceCommand), so that every login rekeys several times "
    "(counted once per server with ssh -v and said). A server type without the option is n/a.",
)
@ssh_option
@db_option
@resume_option
def interop_cmd(**kw: Any) -> None:
    """Every client with every server and key exchange, many full logins each: find what fails rarely.

    A pair is a client, an embedded server and a key exchange they both have (a client that
    cannot be pinned to one, such as dbclient, logs in with its own choice). Each pair makes
    --logins full logins; each server sees one login at a time, its pairs in a fresh random
    order every round, so a failure that comes with time or load is spread over every pair.
    Libraries log in from one warm process (a login is a connection, not a Python start); ssh
    and dbclient run once per login, as scripts run them. Host keys are verified, never
    accepted.

    \b
    Per pair: logins, failures with the client's own words, the 95 % upper bound of the
    failure rate (Clopper-Pearson: 0 of 100 reads "at most 3.0 %"), the logins that would bound
    it at 0.2 % (about one handshake in 500), and for a failing pair the command that
    reproduces it. The exit status is 12 when any login failed.

    \b
    Examples:
      sshbench interop --client openssh,paramiko,gossh
      sshbench interop --client openssh,paramiko,asyncssh,gossh --server local:openssh,local:dropbear,local:gossh
      sshbench interop --kex mlkem768x25519-sha256 --server local:sshd=/opt/openssh10/sbin/sshd --logins 1500
      sshbench interop --rekey 64K --client openssh,paramiko,asyncssh --server local:openssh
      sshbench interop --resume last
    """
    import dataclasses

    from sshbench.cli.options import parse_rekey
    from sshbench.joboptions import ClientsOptions
    from sshbench.runkinds import RunKind

    rekey = parse_rekey(kw["rekey"])
    given = Given.from_click({k: v for k, v in kw.items() if k not in ("logins", "rekey")})
    if resuming(given):
        return
    servers = parse_servers(given.server_specs, "local") if given.server_specs else ()
    logins = int(kw["logins"])
    given = dataclasses.replace(given, servers=servers, warmup=0, rounds=logins, max_rounds=logins, race=False)
    opts = build_options(RunKind.INTEROP, given, latency=True, throughput=False)
    clients = parse_clients(given.client or "all")
    execute(dataclasses.replace(opts, own=ClientsOptions(clients, rekey)), given.db, given.as_json)


COMMANDS = (interop_cmd,)
