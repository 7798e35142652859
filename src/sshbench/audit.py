"""The one adapter around ssh-audit: read a server's KEXINIT without logging in, and rate algorithms.

ssh-audit (https://github.com/jtesta/ssh-audit, MIT) is used through internal APIs, so it is pinned
in pyproject.toml and all use stays here, covered by contract tests against real servers. Its
database flags every key exchange that is not post-quantum with a warning; that is reported as
`not post-quantum`, separately from real weaknesses, so that curve25519 is not called weak.
"""

from __future__ import annotations

import contextlib
import enum
import io
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from ssh_audit.outputbuffer import OutputBuffer
from ssh_audit.protocol import Protocol
from ssh_audit.ssh2_kex import SSH2_Kex
from ssh_audit.ssh2_kexdb import SSH2_KexDB
from ssh_audit.ssh_socket import SSH_Socket

from sshbench.errors import ExitCode, SshbenchError

KINDS = {"kex": "kex", "hostkey": "key", "cipher": "enc", "mac": "mac"}
NOT_PQ = SSH2_KexDB.WARN_NOT_PQ_SAFE


class Rating(enum.StrEnum):
    """ssh-audit's verdict on one algorithm."""

    OK = "ok"
    NOT_PQ = "ok, not post-quantum"
    WARN = "warn"
    FAIL = "fail"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class AlgorithmRating:
    """An algorithm's rating and the reasons ssh-audit gives."""

    kind: str
    name: str
    rating: Rating
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class ServerOffer:
    """What a server offers in its KEXINIT (server-to-client lists for ciphers and MACs)."""

    banner: str
    kex: tuple[str, ...]
    hostkeys: tuple[str, ...]
    ciphers: tuple[str, ...]
    macs: tuple[str, ...]
    compressions: tuple[str, ...]


def version() -> str:
    """Return the installed ssh-audit version, for credits and run metadata."""
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


def _db() -> dict[str, dict[str, list[list[Any]]]]:
    """Return ssh-audit's algorithm database."""
    db: dict[str, dict[str, list[list[Any]]]] = SSH2_KexDB.get_db()
    return db


def rate(kind: str, name: str) -> AlgorithmRating:
    """Rate one algorithm (kind: kex, hostkey, cipher, mac) from ssh-audit's database."""
    entry = _db().get(KINDS[kind], {}).get(name)
    if entry is None:
        return AlgorithmRating(kind, name, Rating.UNKNOWN, ("not in ssh-audit's database",))
    fails = [str(x) for x in (entry[1] if len(entry) > 1 else []) if x]
    warns = [str(x) for x in (entry[2] if len(entry) > 2 else []) if x]
    infos = [str(x) for x in (entry[3] if len(entry) > 3 else []) if x]
    if fails:
        return AlgorithmRating(kind, name, Rating.FAIL, tuple(fails + warns))
    real_warns = [w for w in warns if w != NOT_PQ]
    if real_warns:
        return AlgorithmRating(kind, name, Rating.WARN, tuple(warns))
    if warns:
        return AlgorithmRating(kind, name, Rating.NOT_PQ, ("not post-quantum", *infos))
    return AlgorithmRating(kind, name, Rating.OK, tuple(infos))
