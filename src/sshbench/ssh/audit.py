"""The one adapter around ssh-audit: read a server's KEXINIT without logging in, and rate algorithms.

ssh-audit (https://github.com/jtesta/ssh-audit, MIT) is used through internal APIs, so it is pinned
in pyproject.toml and all use stays here, covered by contract tests against real servers. Its
database flags every key exchange that is not post-quantum with a warning; that is reported as
`not post-quantum`, separately from real weaknesses, so that curve25519 is not called weak.
"""

from __future__ import annotations

import contextlib
import functools
import io
from typing import Any

from sshbench.errors import ExitCode, SshbenchError
from sshbench.records import AlgorithmRating, Rating, ServerOffer

# ssh-audit's names for the algorithm kinds in its database.
KINDS = {"kex": "kex", "hostkey": "key", "cipher": "enc", "mac": "mac"}


def version() -> str:
    """Return the installed ssh-audit version, for credits and run metadata."""
    from importlib import metadata  # ~20 ms to import: only when a run records it

    return metadata.version("ssh-audit")


def _probe_error(host: str, port: int, why: str) -> SshbenchError:
    """Return the error for a failed KEXINIT probe."""
    return SshbenchError(
        f"could not read the server's algorithm lists: {why}",
        place=f"KEXINIT probe of {host}:{port}",
        fix="check that the host is reachable and runs an SSH server on that port",
        code=ExitCode.CONNECTION_FAILED,
    )


def probe(host: str, port: int, timeout: float = 5.0) -> ServerOffer:
    """Connect, exchange banners and KEXINIT, and return what the server offers (no login)."""
    # Imported here: ssh-audit is large and only probes and ratings need it (keeps `--help` quick).
    from ssh_audit.outputbuffer import OutputBuffer
    from ssh_audit.protocol import Protocol
    from ssh_audit.ssh2_kex import SSH2_Kex
    from ssh_audit.ssh_socket import SSH_Socket

    out = OutputBuffer()
    sock = SSH_Socket(out, host, port, timeout=timeout, timeout_set=True)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            err = sock.connect()
            if err:
                raise _probe_error(host, port, err)
            banner, _, err = sock.get_banner()
            if banner is None:
                raise _probe_error(host, port, err or "no SSH banner")
            sock.send_kexinit()
            packet_type, payload = sock.read_packet()
    except SystemExit as exc:  # ssh-audit exits on malformed or missing packets
        raise _probe_error(host, port, f"ssh-audit gave up (exit {exc.code})") from None
    except OSError as exc:
        raise _probe_error(host, port, str(exc)) from None
    finally:
        sock.close()
    if packet_type != Protocol.MSG_KEXINIT:
        raise _probe_error(host, port, f"expected KEXINIT, got message type {packet_type}")
    kex = SSH2_Kex.parse(out, payload)
    return ServerOffer(
        banner=str(banner),
        kex=tuple(kex.kex_algorithms),
        hostkeys=tuple(kex.key_algorithms),
        ciphers=tuple(kex.server.encryption),
        macs=tuple(kex.server.mac),
        compressions=tuple(kex.server.compression),
    )


@functools.cache
def _db() -> tuple[dict[str, dict[str, list[list[Any]]]], str]:
    """Return ssh-audit's algorithm database and its "not post-quantum" warning text."""
    from ssh_audit.ssh2_kexdb import SSH2_KexDB

    db: dict[str, dict[str, list[list[Any]]]] = SSH2_KexDB.get_db()
    return db, str(SSH2_KexDB.WARN_NOT_PQ_SAFE)


def rate(kind: str, name: str) -> AlgorithmRating:
    """Rate one algorithm (kind: kex, hostkey, cipher, mac) from ssh-audit's database."""
    db, not_pq = _db()
    entry = db.get(KINDS[kind], {}).get(name)
    if entry is None:
        return AlgorithmRating(kind, name, Rating.UNKNOWN, ("not in ssh-audit's database",))
    fails = [str(x) for x in (entry[1] if len(entry) > 1 else []) if x]
    warns = [str(x) for x in (entry[2] if len(entry) > 2 else []) if x]
    infos = [str(x) for x in (entry[3] if len(entry) > 3 else []) if x]
    if fails:
        return AlgorithmRating(kind, name, Rating.FAIL, tuple(fails + warns))
    real_warns = [w for w in warns if w != not_pq]
    if real_warns:
        return AlgorithmRating(kind, name, Rating.WARN, tuple(warns))
    if warns:
        return AlgorithmRating(kind, name, Rating.NOT_PQ, ("not post-quantum", *infos))
    return AlgorithmRating(kind, name, Rating.OK, tuple(infos))
