"""Crypto ceilings: what OpenSSL alone encrypts per second for a cipher, on each side, under that side's limits.

`openssl speed -evp` on 16 KiB blocks for one second, run like the side it stands for: the client's with
sshbench's environment (and its CPU quota, through ssh/proc's placers), the embedded server's with the server's
environment (emulated CPU) and inside its CPU-quota group. A transfer at ~80 % of the lower ceiling is
crypto-bound (analyse/bounds.py). Measured only for constrained runs (a link, a CPU limit or an emulated CPU),
where the question "what bounds this rate?" is asked.
"""

from __future__ import annotations

import contextlib
import re
import shutil
from collections.abc import Iterable

from sshbench.ssh.proc import placing, run_timed
from sshbench.targets.base import LocalServer

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


def speed(evp: str, env: dict[str, str] | None = None) -> float | None:
    """Return MB/s of `openssl speed -evp` on 16 KiB blocks (None without openssl or a result)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        return None
    argv = [openssl, "speed", "-elapsed", "-seconds", "1", "-bytes", "16384", "-evp", evp]
    done = run_timed(argv, capture_stdout=True, env=env, timeout=60)
    match = _RESULT.search(done.stdout.decode(errors="replace"))
    return float(match.group(1)) * 1000 / 1e6 if match else None


def measure(ciphers: Iterable[str], server: LocalServer | None) -> dict[str, dict[str, float]]:
    """Return {cipher: {"client": MB/s, "server": MB/s}} for the ciphers OpenSSL knows (server: embedded only)."""
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
        out[cipher] = {side: value for side, value in sides.items() if value is not None}
    return out
