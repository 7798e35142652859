"""Hostile and broken SSH servers on a loopback port, for tests: each misbehaves in one named way.

Everything stays on 127.0.0.1; every connection thread is bounded in time (BEHAVE_FOR seconds).
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator

BEHAVE_FOR = 60.0  # no connection is held longer than this
BANNER = b"SSH-2.0-Hostile_1.0\r\n"


def _packet(payload: bytes, declared: int | None = None) -> bytes:
    """Return an unencrypted SSH binary packet (RFC 4253 6) around a payload; `declared` overrides its length."""
    padding = 8 - (len(payload) + 5) % 8
    padding += 8 if padding < 4 else 0
    length = declared if declared is not None else len(payload) + padding + 1
    return struct.pack(">IB", length, padding) + payload + b"\0" * padding


def _name_list(names: bytes, declared: int | None = None) -> bytes:
    """Return an SSH name-list; `declared` overrides its length."""
    return struct.pack(">I", len(names) if declared is None else declared) + names


def _kexinit(lists: list[bytes]) -> bytes:
    """Return a KEXINIT payload with these ten name-lists."""
    return b"\x14" + b"\x11" * 16 + b"".join(lists) + b"\0" + b"\0\0\0\0"


def _sleep_until(deadline: float, conn: socket.socket) -> None:
    """Hold the connection open, reading and dropping what the client sends, until the deadline."""
    conn.settimeout(0.2)
    while time.monotonic() < deadline:
        try:
            if not conn.recv(65536):
                return
        except TimeoutError:
            continue
        except OSError:
            return


def _silent(conn: socket.socket, deadline: float) -> None:
    """Accept and never speak."""
    _sleep_until(deadline, conn)


def _garbage(conn: socket.socket, deadline: float) -> None:
    """Send binary garbage instead of a banner, then hold."""
    conn.sendall(bytes(range(256)) * 4 + b"\r\n")
    _sleep_until(deadline, conn)


def _endless_banner(conn: socket.socket, deadline: float) -> None:
    """Send pre-banner lines forever (until the deadline or the client leaves)."""
    line = b"Welcome! " * 20 + b"\r\n"
    while time.monotonic() < deadline:
        try:
            conn.sendall(line * 64)
        except OSError:
            return


def _long_banner(conn: socket.socket, deadline: float) -> None:
    """Send a banner line that never ends."""
    with contextlib.suppress(OSError):
        conn.sendall(b"SSH-2.0-")
        while time.monotonic() < deadline:
            conn.sendall(b"A" * 65536)


def _truncated_kexinit(conn: socket.socket, deadline: float) -> None:
    """Send a banner and the first half of a KEXINIT packet, then hold."""
    conn.sendall(BANNER)
    whole = _packet(_kexinit([_name_list(b"curve25519-sha256")] * 10))
    conn.sendall(whole[: len(whole) // 2])
    _sleep_until(deadline, conn)


def _absurd_kexinit(conn: socket.socket, deadline: float) -> None:
    """Send a banner and a KEXINIT whose name-list claims to be 4 GB long."""
    conn.sendall(BANNER)
    conn.sendall(_packet(_kexinit([_name_list(b"curve25519-sha256", 0xFFFFFFF0)] * 10)))
    _sleep_until(deadline, conn)


def _absurd_length(conn: socket.socket, deadline: float) -> None:
    """Send a banner and a packet header that declares a 2 GB packet."""
    conn.sendall(BANNER)
    conn.sendall(_packet(b"\x14" + b"\0" * 40, declared=0x7FFFFFF0))
    _sleep_until(deadline, conn)


def _hang_up(conn: socket.socket, deadline: float) -> None:
    """Send a banner and close the connection."""
    conn.sendall(BANNER)


MODES: dict[str, Callable[[socket.socket, float], None]] = {
    "silent": _silent,
    "garbage": _garbage,
    "endless-banner": _endless_banner,
    "long-banner": _long_banner,
    "truncated-kexinit": _truncated_kexinit,
    "absurd-kexinit": _absurd_kexinit,
    "absurd-length": _absurd_length,
    "hang-up": _hang_up,
}


@contextlib.contextmanager
def hostile_server(mode: str) -> Iterator[int]:
    """Yield a loopback port whose server misbehaves in the named way; stop it and its connections after."""
    behave = MODES[mode]
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.2)
    stop = threading.Event()
    threads: list[threading.Thread] = []
    conns: list[socket.socket] = []

    def serve(conn: socket.socket) -> None:
        """Misbehave on one connection, then close it."""
        with contextlib.suppress(OSError), conn:
            behave(conn, time.monotonic() + BEHAVE_FOR)

    def accept() -> None:
        """Accept until stopped."""
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conns.append(conn)
            thread = threading.Thread(target=serve, args=(conn,), daemon=True)
            thread.start()
            threads.append(thread)

    acceptor = threading.Thread(target=accept, daemon=True)
    acceptor.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        acceptor.join(5)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        for thread in threads:
            thread.join(5)
        listener.close()
