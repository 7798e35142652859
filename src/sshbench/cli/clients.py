"""The `clients` command: SSH client implementations side by side on the same server."""

from __future__ import annotations

from typing import Any

import click
from click.core import ParameterSource

from sshbench.cli.common import execute, resuming
from sshbench.cli.decorators import (
    DIRECTIONS,
    algorithm_option,
    db_option,
    resume_option,
    sampling_options,
    target_options,
)
from sshbench.cli.measuring import build_options
from sshbench.cli.values import Given
from sshbench.clienttypes import NAMES, parse_clients
from sshbench.errors import ExitCode, SshbenchError
from sshbench.model import is_local

MAX_TIME = "10m"  # six clients, two settings, two ciphers, both ways, SFTP: about 90 rows of 3 samples at least


def parse_servers(text: str, target: str) -> tuple[str, ...]:
    """Parse --server local:openssh,local:dropbear; refuse it beside a TARGET, and anything but embedded servers."""
    specs = tuple(dict.fromkeys(s.strip() for s in text.split(",") if s.strip()))
    if target != "local":
        raise SshbenchError(
            f"both a TARGET ({target}) and --server were given",
            place="sshbench clients",
            fix="give a TARGET to measure the clients on one host, or --server for embedded servers side by side",
            code=ExitCode.USAGE,
        )
    strays = [s for s in specs if not is_local(s)]
    if strays or not specs:
        raise SshbenchError(
            f"--server takes embedded servers only, not {', '.join(strays) or repr(text)}",
            place="--server",
            fix="use local:openssh,local:dropbear,local:tinyssh (a host of yours is the TARGET)",
            code=ExitCode.USAGE,
        )
    return specs


@click.command("clients")
@target_options
@click.option(
    "--client",
    default="all",
    show_default=True,
    help=f"Clients to compare, comma-separated: {','.join(NAMES)} (or all). One that is not installed is "
    "listed with how to install it.",
)
@click.option(
    "--server",
    "server_specs",
    metavar="SPECS",
    help="Embedded servers, comma-separated (local:openssh,local:dropbear,local:tinyssh): every client on "
    "every server. Not with a TARGET.",
)
@algorithm_option("cipher", "Ciphers to transfer with, comma-separated [default: AES-GCM and chacha20-poly1305].")
@algorithm_option(
    "kex",
    "Key exchanges to log in with, comma-separated: then connection time per kex is all that is measured, for each "
    "client that can be pinned to it (n/a with the reason for the rest); with curve25519-sha256 among them, each "
    "kex's cost against it, per client.",
)
@click.option("--direction", type=click.Choice(list(DIRECTIONS)), default="both", show_default=True)
@click.option("--size", default="auto", show_default=True, help="Bytes per transfer (64M, 1G) or auto (about 1 s).")
@sampling_options
@db_option
@resume_option
def clients_cmd(**kw: Any) -> None:
    """SSH clients side by side: OpenSSH, dbclient, paramiko, asyncssh, libssh, libssh2, Go, russh.

    Every client runs against the same server, round by round under one budget (--max-time, 10m
    unless given), and each row is raced against its group's leader. Per client:

    \b
      connection time  a cold process (for a Python library: the interpreter's start and import
                       included, as a script's), and a library's second connection
                       inside one live process, each in its own table
      throughput       the exec channel per cipher, download and upload, counted where
                       the bytes arrive, handshake excluded, sizes verified
      SFTP             get and put of a file into tmpfs
      costs            the client's CPU seconds per GiB and its peak RSS; its version

    Each library runs as its users run it and tuned with the knobs its maintainers document
    (paramiko window_size/max_packet_size; asyncssh window, max_pktsize, SFTP block_size and
    max_requests; Go's pkg/sftp concurrent writes; russh window and SFTP writes; dbclient -W);
    the output names every setting. A cipher a client or the server lacks is a row marked n/a
    with the reason. Libraries are optional: a missing one is listed with how to install it.
    Go's x/crypto/ssh (gossh) and Rust's russh run where their toolchain (go, cargo) is found:
    their drivers are built once into ~/.cache/sshbench (about 20 s and 2 min). TARGET is
    the embedded OpenSSH server (default) or a host you log in to with ssh: its address, key
    and known_hosts come from `ssh -G`, and a host key is only ever verified, never accepted.

    \b
    Examples:
      sshbench clients
      sshbench clients --client openssh,paramiko,asyncssh --direction down
      sshbench clients --kex mlkem768x25519-sha256,curve25519-sha256
      sshbench clients backup-host --client openssh,paramiko
      sshbench clients --server local:openssh,local:dropbear,local:tinyssh   (as root)
    """
    import dataclasses

    from sshbench.joboptions import ClientsOptions
    from sshbench.runkinds import RunKind

    given = Given.from_click(kw)
    if resuming(given):
        return
    servers = parse_servers(given.server_specs, given.target) if given.server_specs else ()
    if click.get_current_context().get_parameter_source("max_time") is not ParameterSource.COMMANDLINE:
        given = dataclasses.replace(given, max_time=MAX_TIME)
    opts = build_options(RunKind.CLIENTS, dataclasses.replace(given, servers=servers), latency=True, throughput=True)
    clients = parse_clients(given.client or "all")
    execute(dataclasses.replace(opts, own=ClientsOptions(clients)), given.db, given.as_json)


COMMANDS = (clients_cmd,)
