"""Emulated hardware: mask CPU crypto instructions from OpenSSL in the client and the embedded OpenSSH server.

`no-aesni` sets OPENSSL_ia32cap=~0x200000200000000:~0x0, which clears AES-NI (bit 57) and PCLMULQDQ
(bit 33) only. A mask without the `:...` part would also clear the second capability word (SHA-NI,
AVX2, AVX-512) and slow everything; an empty value disables every feature. The variable is set in
sshbench's own environment before any ssh or sshd starts, so every child inherits it. Dropbear and
TinySSH use their own C crypto and are not affected; a remote server is not affected either.

Evidence is recorded with the run: `openssl speed` for AES-128-GCM with and without the mask.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import TYPE_CHECKING

from sshbench.errors import ExitCode, SshbenchError

if TYPE_CHECKING:
    from sshbench.environment import Emulation

EMULATIONS: dict[str, dict[str, str]] = {"no-aesni": {"OPENSSL_ia32cap": "~0x200000200000000:~0x0"}}
EVIDENCE_CIPHER = "aes-128-gcm"
_SPEED = re.compile(r"^AES-128-GCM\s+([0-9.]+)k\s*$", re.MULTILINE)


def check(name: str | None) -> None:
    """Fail on an unknown emulation name."""
    if name is not None and name not in EMULATIONS:
        raise SshbenchError(
            f"unknown emulation {name!r}",
            place="--emulate",
            fix=f"use one of: {', '.join(EMULATIONS)}",
            code=ExitCode.USAGE,
        )


def openssl_speed(env: dict[str, str]) -> float | None:
    """Return AES-128-GCM MB/s on 16 KiB blocks from `openssl speed` (None without openssl)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        return None
    argv = [openssl, "speed", "-elapsed", "-seconds", "1", "-bytes", "16384", "-evp", EVIDENCE_CIPHER]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60, check=False)
    match = _SPEED.search(done.stdout)
    return float(match.group(1)) * 1000 / 1e6 if match else None


def apply(name: str | None, remote: bool) -> Emulation | None:
    """Set the emulation's variables for this process and its children; return its metadata with evidence."""
    from sshbench.environment import Emulation  # here: the CLI reads EMULATIONS for --help

    check(name)
    if name is None:
        return None
    variables = EMULATIONS[name]
    native_env = {k: v for k, v in os.environ.items() if k not in variables}
    native = openssl_speed(native_env)
    os.environ.update(variables)
    emulated = openssl_speed(dict(os.environ))
    return Emulation(
        name=name,
        variables=dict(variables),
        applies_to=("ssh client",) + (() if remote else ("embedded OpenSSH server",)),
        not_affected="Dropbear and TinySSH (own crypto)" + ("; the remote server" if remote else ""),
        evidence_tool=f"openssl speed -evp {EVIDENCE_CIPHER} (16 KiB blocks)",
        native_mbps=native,
        emulated_mbps=emulated,
    )
