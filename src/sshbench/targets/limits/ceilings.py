"""Crypto ceilings: what OpenSSL alone encrypts per second for a cipher, on each side, under that side's limits.

`openssl speed -evp` on 16 KiB blocks for one second, run like the side it stands for: the client's with
sshbench's environment (and its CPU quota, through ssh/proc's placers), the embedded server's with the server's
environment (emulated CPU) and inside its CPU-quota group. A transfer at ~80 % of the lower ceiling is
crypto-bound (analyse/bounds.py). A remote host's side is `openssl speed` run there over ssh (when it has
openssl). Measured only for constrained runs (a link, a CPU limit or an emulated CPU) and `tools`, where the
question "what bounds this rate?" is asked.
"""

from __future__ import annotations

import contextlib
import re
import shlex
import shutil
from collections.abc import Callable, Iterable

from sshbench.ssh.hooks import placing
from sshbench.ssh.proc import run_timed
from sshbench.targets.servers.base import LocalServer

EVP = {
    "aes128-gcm@openssh.com": "aes-128-gcm",
    "aes256-gcm@openssh.com": "aes-256-gcm",
    "chacha20-poly1305@openssh.com": "chacha20-poly1305",
    "aes128-ctr": "aes-128-ctr",
    "aes192-ctr": "aes-192-ctr",
    "aes256-ctr": "aes-256-ctr",
    "aes128-cbc": "aes-128-cbc",
    "aes192-cbc": "aes-192-cbc",
    "aes256-cbc": "aes-256-cbc",
    "3des-cbc": "des-ede3-cbc",
}
_RESULT = re.compile(r"^\S+\s+([0-9.]+)k\s*$", re.MULTILINE)


def duration(ciphers: Iterable[str], sides: int = 2) -> float:
    """Return about how long measuring these ciphers' ceilings takes (1 s of `openssl speed` each, per side)."""
    return 1.15 * sides * len({c for c in ciphers if c in EVP})


def speed_args(evp: str) -> list[str]:
    """Return the arguments after `openssl` (evp is one of EVP's values)."""
    return ["speed", "-elapsed", "-seconds", "1", "-bytes", "16384", "-evp", evp]


def parse_speed(text: str) -> float | None:
    """Return MB/s from `openssl speed` output (None without a result)."""
    match = _RESULT.search(text)
    return float(match.group(1)) * 1000 / 1e6 if match else None


def speed(evp: str, env: dict[str, str] | None = None) -> float | None:
    """Return MB/s of `openssl speed -evp` on 16 KiB blocks here (None without openssl or a result)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        return None
    done = run_timed([openssl, *speed_args(evp)], capture_stdout=True, env=env, timeout=60)
    return parse_speed(done.stdout.decode(errors="replace"))


def measure(
    ciphers: Iterable[str], server: LocalServer | None, remote: Callable[[str], str | None] | None = None
) -> dict[str, dict[str, float]]:
    """Return {cipher: {"client": MB/s, "server": MB/s}} for the ciphers OpenSSL knows; the server's side on an
    embedded server, or through `remote` (runs a fixed command on a remote host, returns its stdout or None)."""
    out: dict[str, dict[str, float]] = {}
    for cipher in sorted(set(ciphers)):
        evp = EVP.get(cipher)
        if evp is None:
            continue
        sides = {"client": speed(evp)}
        if server is not None:
            quota = server.quota
            with placing(quota.add) if quota is not None else contextlib.nullcontext():
                sides["server"] = speed(evp, server.environment)
        elif remote is not None:
            out_text = remote(shlex.join(["openssl", *speed_args(evp)]))
            sides["server"] = parse_speed(out_text) if out_text is not None else None
        out[cipher] = {side: value for side, value in sides.items() if value is not None}
    return out
