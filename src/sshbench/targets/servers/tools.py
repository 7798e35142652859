"""The programs an embedded server is made with: its OpenSSH tools (found on this machine, or beside an sshd given by
path) and the keys they generate."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sshbench.errors import ExitCode, SshbenchError
from sshbench.ssh.proc import require_binary


@dataclass(frozen=True)
class Tools:
    """Absolute paths of the OpenSSH binaries used for the embedded server: for an sshd given by path, the ssh of
    the same build (its `ssh -Q` lists what that version supports; "" when none is beside it)."""

    ssh: str
    sshd: str
    keygen: str

    @classmethod
    def find(cls, sshd: str | None = None) -> Tools:
        """Locate ssh, sshd (or use the given one, with the ssh beside it) and ssh-keygen, or fail naming the
        package."""
        keygen = require_binary("ssh-keygen", "openssh-client")
        if sshd is None:
            return cls(require_binary("ssh", "openssh-client"), require_binary("sshd", "openssh-server"), keygen)
        return cls(sibling(sshd, "ssh") or "", sshd, sibling(sshd, "ssh-keygen") or keygen)


def sibling(sshd: str, name: str) -> str | None:
    """Return the program `name` of the same OpenSSH build as an sshd given by path (beside it, or in the prefix's
    bin/ when sshd is in sbin/), or None."""
    here = Path(sshd).parent
    for candidate in (here / name, here.parent / "bin" / name):
        if os.access(candidate, os.X_OK) and candidate.is_file():
            return str(candidate)
    return None


def generate_keys(keygen: str, workdir: Path, host_types: Sequence[str]) -> None:
    """Generate OpenSSH-format host keys of the given types and one ed25519 client key, in parallel."""
    jobs = [(f"host_{t}", t) for t in host_types] + [("client_ed25519", "ed25519")]
    procs = [
        subprocess.Popen(
            [keygen, "-q", "-t", kind, "-N", "", "-C", "sshbench", "-f", str(workdir / name)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for name, kind in jobs
    ]
    for proc, (name, _) in zip(procs, jobs, strict=True):
        _, err = proc.communicate(timeout=60)
        if proc.returncode != 0:
            raise SshbenchError(
                f"ssh-keygen failed for {name}: {err.decode(errors='replace').strip()}",
                place=str(workdir),
                fix="check that ssh-keygen works and the temporary directory is writable",
                code=ExitCode.SERVER_START,
            )


def public_key(path: Path) -> str:
    """Return `type base64` of an OpenSSH public key file (without its comment)."""
    return " ".join(path.read_text().split()[:2])
