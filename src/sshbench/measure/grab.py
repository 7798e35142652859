"""A transfer's client socket borrowed from the ssh process itself (pidfd_getfd, Linux 5.6+): its TCP state is then
one getsockopt away (TCP_INFO, a few microseconds) instead of a sock_diag dump of every socket of the namespace
(milliseconds on a machine whose connection table is large: a dump walks every bucket), and its final state is
read the moment ssh exits, before the copy is closed. The server's end of the same connection is asked for by its
four-tuple (one sock_diag message, no dump). Where the kernel refuses (an older kernel, ptrace rules) nothing is
borrowed and the watcher dumps as before. docs/BENCHMARKS.md has the costs (benchmarks/bench_tcpinfo_reads.py, per
reading; benchmarks/bench_harness.py, per sample)."""

from __future__ import annotations

import ctypes
import functools
import os
import socket
import struct
import threading
from collections.abc import Iterator
from typing import Any

SYS_PIDFD_GETFD = 438  # the same number on every architecture (the generic syscall table)
TCP_INFO_BYTES = 256
FIRST_FD = 3  # a process's first descriptor after stdin, stdout and stderr: OpenSSH's connection
# interface 0 and INET_DIAG_NOCOOKIE: the kernel finds the socket by its addresses and ports alone
TAIL = struct.pack("=I", 0) + b"\xff" * 8


@functools.cache
def _libc() -> ctypes.CDLL:
    """Return the C library, errors kept in errno (loaded once)."""
    return ctypes.CDLL(None, use_errno=True)


class Borrowed:
    """A process's TCP socket to one port, borrowed: read it, then close it when the process has exited. The socket
    is the C type (`socket.SocketType`, no Python wrapper made around it), made as AF_INET whatever it is: its
    family is `family`, read once from its peer with the peer itself."""

    def __init__(self, sock: socket.SocketType, peer: tuple[Any, ...] | None = None) -> None:
        self.sock = sock
        self.peer = peer if peer is not None else sock.getpeername()
        self.family = socket.AF_INET6 if len(self.peer) == 4 else socket.AF_INET  # IPv6 names hold four items
        self.lock = threading.Lock()
        self.closed = False

    def info(self) -> bytes | None:
        """Return the socket's struct tcp_info now (None once closed)."""
        with self.lock:
            if self.closed:
                return None
            try:
                return self.sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_BYTES)
            except OSError:
                return None

    def congestion(self) -> str:
        """Return the socket's congestion control's name ('' when unreadable)."""
        try:
            name = self.sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16)
        except OSError:
            return ""
        return name.split(b"\0", 1)[0].decode(errors="replace")

    def close(self) -> bytes | None:
        """Read the socket a last time and close this copy (the process's own is gone: the connection ends)."""
        last = self.info()
        with self.lock:
            if not self.closed:
                self.closed = True
                self.sock.close()
        return last

    def sockid(self, peer: bool = False) -> bytes:
        """Return the inet_diag_sockid of this end of the connection, or of its other end (ports and addresses
        swapped)."""
        ends = [self.sock.getsockname(), self.peer]
        near, far = reversed(ends) if peer else ends
        family = self.family
        return struct.pack("!HH", near[1], far[1]) + _address(family, near[0]) + _address(family, far[0]) + TAIL


def _address(family: int, text: str) -> bytes:
    """Return an address as the 16 bytes of an inet_diag_sockid (IPv4 in the first four)."""
    packed = socket.inet_pton(family, text)
    return packed.ljust(16, b"\0")


def borrow(pid: int, port: int) -> Borrowed | None:
    """Return a copy of the TCP socket of process `pid` whose peer port is `port`, or None (no such socket yet, the
    process gone, or the kernel refuses: then the caller reads sock_diag instead). OpenSSH's is its descriptor 3
    (its first after the standard three), tried first: a walk of /proc/PID/fd costs as much again."""
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        return None
    try:
        found = _take(pidfd, FIRST_FD, port)
        if found is not None:
            return found
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            return None
        for name in fds:
            try:
                if int(name) == FIRST_FD or not os.readlink(f"/proc/{pid}/fd/{name}").startswith("socket:"):
                    continue
            except OSError:
                continue
            found = _take(pidfd, int(name), port)
            if found is not None:
                return found
    finally:
        os.close(pidfd)
    return None


def _take(pidfd: int, target: int, port: int) -> Borrowed | None:
    """Return the process's descriptor `target` as a Borrowed when it is a TCP socket to `port`, else None."""
    fd = _libc().syscall(SYS_PIDFD_GETFD, pidfd, target, 0)
    if fd < 0:
        return None
    try:  # the kind given, not asked of the kernel (two calls fewer): its peer says the family
        sock = socket.SocketType(socket.AF_INET, socket.SOCK_STREAM, 0, fd)
    except OSError:  # not a socket (a client whose descriptor 3 is a file or a pipe)
        os.close(fd)
        return None
    try:
        peer = sock.getpeername()
        ours = isinstance(peer, tuple) and len(peer) in (2, 4) and peer[1] == port
        if ours and sock.getsockopt(socket.SOL_SOCKET, socket.SO_TYPE) == socket.SOCK_STREAM:
            return Borrowed(sock, peer)
    except OSError:
        pass
    sock.close()
    return None


def socket_inodes(pids: Iterator[int]) -> set[int]:
    """Return the inodes of the sockets these processes hold (unreadable processes are skipped)."""
    out: set[int] = set()
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    out.add(int(target[8:-1]))
        except OSError:
            continue
    return out
