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
import socket
import struct
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any, TextIO

from sshbench.discovery import AlgorithmRating, Rating, ServerOffer
from sshbench.errors import ExitCode, SshbenchError

PROBE_FAILED = "could not read the server's algorithm lists: "
PROBE_DEADLINE = 10.0  # seconds for the whole probe: connect, banner, KEXINIT
MAX_PRE_BANNER_LINES = 1024  # as OpenSSH's client: more lines than this before the banner is hostile
# ssh-audit's names for the algorithm kinds in its database.
KINDS = {"kex": "kex", "hostkey": "key", "cipher": "enc", "mac": "mac"}


def version() -> str:
    """Return the installed ssh-audit version, for credits and run metadata."""
    from importlib import metadata  # ~20 ms to import: only when a run records it

    return metadata.version("ssh-audit")


def _probe_error(host: str, port: int, why: str) -> SshbenchError:
    """Return the error for a failed KEXINIT probe (without ssh-audit's `[exception] ` tag)."""
    return SshbenchError(
        f"{PROBE_FAILED}{why.removeprefix('[exception] ')}",
        place=f"KEXINIT probe of {host}:{port}",
        fix="check that the host is reachable and runs an SSH server on that port",
        code=ExitCode.CONNECTION_FAILED,
    )


class _Watchdog:
    """Cut a probe's connection when it runs past its deadline or the server sends endless pre-banner lines.

    ssh-audit reads banner lines and packets for as long as the server sends them: this bounds the whole
    probe in time and memory by shutting the socket down from a second thread (its reads then end).
    """

    def __init__(self, sock: Any, deadline: float) -> None:
        self.sock, self.deadline, self.why = sock, deadline, ""
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        """Check twenty times a second until the probe is done or must be cut."""
        while not self.done.wait(0.05):
            lines = len(getattr(self.sock, "_SSH_Socket__header", ()))
            if time.monotonic() > self.deadline:
                self.why = f"no complete banner and KEXINIT within {PROBE_DEADLINE:g} s"
            elif lines > MAX_PRE_BANNER_LINES:
                self.why = f"more than {MAX_PRE_BANNER_LINES} lines before the SSH banner"
            else:
                continue
            raw: Any = getattr(self.sock, "_SSH_Socket__sock", None)
            with contextlib.suppress(OSError, AttributeError):
                raw.shutdown(socket.SHUT_RDWR)
            return

    def stop(self) -> None:
        """End the watch."""
        self.done.set()
        self.thread.join(1)


_QUIET = threading.Lock()
_quieted: list[TextIO] = []  # the real stdout while any thread is inside `quiet()`, and one entry per thread inside


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Keep ssh-audit's prints off stdout. Unlike `redirect_stdout`, safe when several threads probe at once (a fleet):
    the first one in swaps stdout for a sink and the last one out puts the real one back."""
    with _QUIET:
        if not _quieted:
            _quieted.append(sys.stdout)
            sys.stdout = io.StringIO()
        _quieted.append(sys.stdout)
    try:
        yield
    finally:
        with _QUIET:
            _quieted.pop()
            if len(_quieted) == 1:
                sys.stdout = _quieted.pop()


def probe(host: str, port: int, timeout: float = 5.0) -> ServerOffer:
    """Connect, exchange banners and KEXINIT, and return what the server offers (no login)."""
    # Imported here: ssh-audit is large and only probes and ratings need it (keeps `--help` quick).
    from ssh_audit.outputbuffer import OutputBuffer
    from ssh_audit.ssh_socket import SSH_Socket

    out = OutputBuffer()
    sock = SSH_Socket(out, host, port, timeout=timeout, timeout_set=True)
    watchdog = _Watchdog(sock, time.monotonic() + PROBE_DEADLINE)
    try:
        with quiet():
            err = sock.connect()
            if err:
                raise _probe_error(host, port, err)
            banner, _, err = sock.get_banner()
            if banner is None:
                raise _probe_error(host, port, watchdog.why or err or "no SSH banner")
            sock.send_kexinit()
            packet_type, payload = sock.read_packet()
    except SystemExit:  # ssh-audit exits on malformed or missing packets
        raise _probe_error(host, port, watchdog.why or "a malformed banner or packet (ssh-audit gave up)") from None
    except (OSError, ValueError, struct.error) as exc:
        raise _probe_error(host, port, watchdog.why or str(exc) or type(exc).__name__) from None
    finally:
        watchdog.stop()
        sock.close()
    from ssh_audit.protocol import Protocol

    if packet_type < 0:  # ssh-audit's "no packet": the connection closed or timed out first
        raise _probe_error(host, port, watchdog.why or "the connection closed or timed out before a whole KEXINIT")
    if packet_type != Protocol.MSG_KEXINIT:
        raise _probe_error(host, port, f"expected KEXINIT, got message type {packet_type}")
    return offer(str(banner), payload, f"{host}:{port}")


def offer(banner: str, payload: bytes, where: str = "KEXINIT") -> ServerOffer:
    """Parse a KEXINIT payload (what follows its message type) into what the server offers, or fail naming why."""
    from ssh_audit.outputbuffer import OutputBuffer
    from ssh_audit.ssh2_kex import SSH2_Kex

    try:
        with quiet():
            kex = SSH2_Kex.parse(OutputBuffer(), payload)
    except Exception as exc:  # any failure to parse outside bytes is the server's, not ours
        raise SshbenchError(
            "could not read the server's algorithm lists: its KEXINIT is malformed "
            f"({str(exc)[:60] or type(exc).__name__})",
            place=f"KEXINIT probe of {where}",
            fix="the server does not speak SSH correctly: check what listens on that port",
            code=ExitCode.CONNECTION_FAILED,
        ) from None
    return ServerOffer(
        banner=banner,
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
