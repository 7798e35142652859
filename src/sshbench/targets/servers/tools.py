"""The programs an embedded server is made with: its OpenSSH tools (found on this machine, or beside an sshd given by
path) and the keys they generate."""

from __future__ import annotations

import os
import shutil
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


KEYS_ENV = "SSHBENCH_HOST_KEYS"  # a directory of keys to copy instead of generating them (a suite of many servers)


def generate_keys(keygen: str, workdir: Path, host_types: Sequence[str]) -> None:
    """Generate OpenSSH-format host keys of the given types and one ed25519 client key, in parallel (those the
    directory SSHBENCH_HOST_KEYS holds are copied from it instead)."""
    jobs = [(f"host_{t}", t) for t in host_types] + [("client_ed25519", "ed25519")]
    copied = copy_keys(key_pool(os.environ.get(KEYS_ENV)), workdir, [name for name, _ in jobs])
    procs = [
        subprocess.Popen(
            [keygen, "-q", "-t", kind, "-N", "", "-C", "sshbench", "-f", str(workdir / name)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for name, kind in jobs
        if name not in copied
    ]
    for proc, (name, _) in zip(procs, [job for job in jobs if job[0] not in copied], strict=True):
        _, err = proc.communicate(timeout=60)
        if proc.returncode != 0:
            raise SshbenchError(
                f"ssh-keygen failed for {name}: {err.decode(errors='replace').strip()}",
                place=str(workdir),
                fix="check that ssh-keygen works and the temporary directory is writable",
                code=ExitCode.SERVER_START,
            )


def copy_keys(pool: Path | None, workdir: Path, names: Sequence[str]) -> set[str]:
    """Copy into `workdir` each key pair of `names` the pool holds; return the names copied."""
    if pool is None:
        return set()
    held = {n for n in names if (pool / n).is_file() and (pool / f"{n}.pub").is_file()}
    for name in held:
        for suffix in ("", ".pub"):
            shutil.copyfile(pool / f"{name}{suffix}", workdir / f"{name}{suffix}")
        (workdir / name).chmod(0o600)
    return held


def key_pool(given: str | None) -> Path | None:
    """Return the directory SSHBENCH_HOST_KEYS names (None when unset), refusing one another user could read or
    write: its private keys would then be no server's own."""
    if not given:
        return None
    path = Path(given)
    try:
        info = path.stat()
    except OSError as err:
        raise SshbenchError(
            f"{KEYS_ENV}={given!r} cannot be read: {err.strerror}",
            place="the environment",
            fix=f"unset {KEYS_ENV} (every server makes its own keys) or name a directory of host_TYPE key pairs",
            code=ExitCode.USAGE,
        ) from err
    if not path.is_dir() or info.st_uid != os.geteuid() or info.st_mode & 0o077:
        raise SshbenchError(
            f"{KEYS_ENV}={given!r} is not a directory of yours that only you can open (mode 0700)",
            place="the environment",
            fix=f"chmod 700 {given}, or unset {KEYS_ENV} (every server then makes its own keys)",
            code=ExitCode.USAGE,
        )
    return path


def public_key(path: Path) -> str:
    """Return `type base64` of an OpenSSH public key file (without its comment)."""
    return " ".join(path.read_text().split()[:2])
