"""Emulated hardware: mask CPU crypto instructions from OpenSSL in the client, the embedded OpenSSH server, or both.

`no-aesni` sets OPENSSL_ia32cap=~0x200000200000000:~0x0, which clears AES-NI (bit 57) and PCLMULQDQ
(bit 33) only. A mask without the `:...` part would also clear the second capability word (SHA-NI,
AVX2, AVX-512) and slow everything; an empty value disables every feature. `no-aesni` masks both sides;
`client:no-aesni` only the ssh client (the variable is set in sshbench's own environment before any ssh
starts, and left out of the servers'); `server:no-aesni` only the embedded servers (their environment alone
carries it). Dropbear, TinySSH and the Go server use their own crypto and are not affected; a remote server cannot be.

Evidence is recorded with the run: `openssl speed` for AES-128-GCM with and without the mask.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from sshbench import products
from sshbench.errors import ExitCode, SshbenchError

if TYPE_CHECKING:
    from sshbench.environment import Emulation

EMULATIONS: dict[str, dict[str, str]] = {"no-aesni": {"OPENSSL_ia32cap": "~0x200000200000000:~0x0"}}
# Constrained hosts (--preset): the options they stand for, applied where not given explicitly.
# pi: seed 000's Raspberry-Pi-class server: one slow core (a tenth of one of this machine's), no AES instructions.
HOST_PRESETS: dict[str, dict[str, str]] = {"pi": {"emulate": "server:no-aesni", "server_cpu": "10%", "link": "gbe"}}
SIDES = ("client", "server")
CHOICES = tuple(f"{side}{name}" for name in EMULATIONS for side in ("", "client:", "server:"))
EVIDENCE_CIPHER = "aes-128-gcm"


def check(name: str | None) -> None:
    """Fail on an unknown emulation name."""
    if name is not None:
        parse(name)


def parse(spec: str) -> tuple[str, tuple[str, ...]]:
    """Return (emulation, sides) of `NAME`, `client:NAME` or `server:NAME`, or fail naming the choices."""
    side, _, name = spec.rpartition(":")
    if name not in EMULATIONS or side not in ("", *SIDES):
        raise SshbenchError(
            f"unknown emulation {spec!r}",
            place="--emulate",
            fix=f"use one of: {', '.join(CHOICES)}",
            code=ExitCode.USAGE,
        )
    return name, (side,) if side else SIDES


def server_environment(spec: str | None) -> dict[str, str] | None:
    """Return the environment embedded servers start with (None: sshbench's own, as it is)."""
    if spec is None:
        return None
    name, sides = parse(spec)
    variables = EMULATIONS[name]
    own = {k: v for k, v in os.environ.items() if k not in variables}
    return {**own, **variables} if "server" in sides else own


def apply(spec: str | None, remote: bool) -> Emulation | None:
    """Set the client side's variables for this process and its children (servers get theirs from
    `server_environment`); return the emulation's metadata with evidence."""
    from sshbench.environment import Emulation  # here: the CLI reads EMULATIONS for --help
    from sshbench.targets.limits.ceilings import speed

    if spec is None:
        return None
    name, sides = parse(spec)
    if remote and sides == ("server",):
        raise SshbenchError(
            f"--emulate {spec} changes an embedded server, and the target is a remote host",
            place="--emulate",
            fix=f"use --emulate client:{name} (the remote server's CPU cannot be changed from here)",
            code=ExitCode.USAGE,
        )
    variables = EMULATIONS[name]
    native_env = {k: v for k, v in os.environ.items() if k not in variables}
    native = speed(EVIDENCE_CIPHER, native_env)
    emulated = speed(EVIDENCE_CIPHER, {**native_env, **variables})
    if "client" in sides:
        os.environ.update(variables)
    applies_to = (("ssh client",) if "client" in sides else ()) + (
        ("embedded OpenSSH server",) if "server" in sides and not remote else ()
    )
    return Emulation(
        name=spec,
        variables=dict(variables),
        applies_to=applies_to,
        not_affected=f"{products.own_crypto()} (own crypto)"
        + ("; the remote server" if remote else "")
        + ("" if "client" in sides else "; the ssh client")
        + ("" if "server" in sides else "; the server"),
        evidence_tool=f"openssl speed -evp {EVIDENCE_CIPHER} (16 KiB blocks)",
        native_mbps=native,
        emulated_mbps=emulated,
    )
