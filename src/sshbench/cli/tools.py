"""The `tools` command: scp, sftp and rsync per cipher and direction, against plaintext copies and crypto ceilings."""

from __future__ import annotations

from typing import Any

import click

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
from sshbench.errors import ExitCode, SshbenchError

TOOLS = ("scp", "sftp", "rsync", "scp-legacy")
DEFAULT_TOOLS = "scp,sftp,rsync"


def parse_tools(text: str) -> tuple[str, ...]:
    """Parse --tool scp,sftp,rsync; fail naming the choices."""
    chosen = tuple(t.strip() for t in text.split(",") if t.strip())
    unknown = [t for t in chosen if t not in TOOLS]
    if unknown or not chosen:
        raise SshbenchError(
            f"unknown tool {', '.join(unknown) or repr(text)}",
            place="--tool",
            fix=f"choose from {','.join(TOOLS)} (plus socat and rsyncd beside embedded servers)",
            code=ExitCode.USAGE,
        )
    return tuple(dict.fromkeys(chosen))


@click.command("tools")
@target_options
@algorithm_option("cipher", "Ciphers to copy with, comma-separated [default: AES-GCM and chacha20-poly1305].")
@algorithm_option("mac", "MACs to pair with each non-AEAD cipher [default: the one the client would negotiate].")
@click.option(
    "--tool",
    default=DEFAULT_TOOLS,
    show_default=True,
    help="Copy tools over ssh, comma-separated; scp-legacy is `scp -O` (the original SCP protocol, for servers "
    "without SFTP such as TinySSH, and what the older published scp numbers used).",
)
@click.option("--direction", type=click.Choice(list(DIRECTIONS)), default="both", show_default=True)
@click.option("--size", default="auto", show_default=True, help="Bytes per file (64M, 1G) or auto (about 1 s each).")
@sampling_options
@db_option
@resume_option
def tools_cmd(**kw: Any) -> None:
    """scp, sftp and rsync per cipher, download and upload, against the same copy without SSH.

    Every sample copies a file between tmpfs directories (/dev/shm) of the client and of the server,
    times its steady part (the first 20 % excluded) and checks its size after every copy. TARGET is an
    embedded server (default: local) or a host you can log in to with ssh.

    Embedded servers: the bytes are counted as the file grows where it arrives. The plaintext baselines
    copy the same file over the same link with no SSH: raw TCP (socat) and an rsync daemon (rsync://),
    the modern stand-ins for rcp and ftp.

    Remote hosts: downloads are counted as they arrive here, uploads by the tool's reads of the file up
    to its exit. sshbench starts no listeners on a host it does not own, so there are no plaintext
    baselines. The files live in a scratch directory that the host removes when the run ends, even if
    sshbench is killed.

    The crypto ceiling of each cipher is `openssl speed -evp` on each side under its limits (over ssh on
    a remote host that has openssl). The tables end with each tool's rate as a share of plain TCP (and
    of the rsync daemon for rsync) and of the lower crypto ceiling. A baseline or ceiling that comes out
    below an SSH copy it should cap is reported as a failed baseline, with both numbers, never as a share
    above 100 %.

    \b
    Examples:
      sshbench tools
      sshbench tools backup-host --tool rsync --direction up
      sshbench tools --link gbe --cipher aes128-gcm@openssh.com     (as root: --link needs it)
      sshbench tools --preset pi --tool scp,rsync                    (as root)
      sshbench tools local:tinyssh --tool scp-legacy,rsync          (as root: TinySSH needs it)
    """
    import dataclasses

    from sshbench.joboptions import ToolsOptions
    from sshbench.runkinds import RunKind

    given = Given.from_click(kw)
    if not resuming(given):
        opts = build_options(RunKind.TOOLS, given, latency=False, throughput=True)
        tools = parse_tools(given.tool or DEFAULT_TOOLS)  # samples of about a second: runkinds.COPY_SECONDS
        execute(dataclasses.replace(opts, own=ToolsOptions(tools)), given.db, given.as_json)


COMMANDS = (tools_cmd,)
