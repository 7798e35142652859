"""The CPU of every process that exits, from the kernel's taskstats (generic netlink), and an embedded server's
CPU by process role from its processes' exits.

A login's processes (OpenSSH's monitor, its privilege-separated children, the command) are gone before they can be
read one by one from /proc, and a cgroup gives their total only. The kernel sends a record for every task that
exits on the CPUs a listener registered: its pid, its parent's, its name and the CPU time it ran (the scheduler's
nanoseconds; the user and system times where a kernel leaves that at 0). The kernel writes the record as the task
begins to exit, with its CPU time as last folded in (when it last left the CPU or at a tick): its last stretch on
the CPU and its exit are in a cgroup's total and in no record, so a record is a lower bound
(benchmarks/bench_exit_records.py: /bin/true's record holds 0.11 of the 0.72 ms its parent reaps). Registering
needs CAP_NET_ADMIN (root); a reader thread keeps the records as they come."""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import struct
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from sshbench import products
from sshbench.products import COMMAND, CONNECTION, POST_AUTH, PRE_AUTH

NETLINK_GENERIC = 16
GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY = 3
CTRL_ATTR_FAMILY_ID = 1
CTRL_ATTR_FAMILY_NAME = 2
TASKSTATS_CMD_GET = 1
TASKSTATS_CMD_ATTR_REGISTER_CPUMASK = 3
TASKSTATS_TYPE_PID = 1
TASKSTATS_TYPE_STATS = 3
TASKSTATS_TYPE_AGGR_PID = 4  # a task's own record (a thread group's aggregate carries no CPU times: not read)
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR = 2
SO_RCVBUFFORCE = 33
BUFFER = 16 << 20  # the socket's receive buffer: a burst of exits waits here for the reader thread
HEADER = struct.Struct("IHHII")
# struct taskstats (linux/taskstats.h, version 1 onwards): the fields read, at their fixed offsets
COMM, COMM_LEN = 80, 32
IDS = struct.Struct("IIII")  # ac_uid, ac_gid, ac_pid, ac_ppid at 120
TIMES = struct.Struct("QQ")  # ac_utime, ac_stime (microseconds) at 152
RAN = struct.Struct("Q")  # cpu_run_virtual_total: the scheduler's sum_exec_runtime (nanoseconds) at 72
STATS_LEN = 168

SERVER_NAMES = products.process_names()


@dataclass(frozen=True)
class Exit:
    """One task's end, as the kernel recorded it."""

    pid: int
    ppid: int  # its parent's thread group when it ended
    comm: str
    cpu: float  # seconds it ran


def _attrs(buf: bytes) -> Iterator[tuple[int, bytes]]:
    """Yield a netlink message's attributes (type, payload)."""
    i = 0
    while i + 4 <= len(buf):
        length, kind = struct.unpack_from("HH", buf, i)
        if length < 4:
            return
        yield kind & 0x3FFF, buf[i + 4 : i + length]
        i += (length + 3) & ~3


def _attr(kind: int, payload: bytes) -> bytes:
    """Return one netlink attribute, padded."""
    length = 4 + len(payload)
    return struct.pack("HH", length, kind) + payload + b"\0" * (-length % 4)


def _request(family: int, cmd: int, attrs: bytes, flags: int = NLM_F_REQUEST) -> bytes:
    """Return a generic netlink request."""
    body = struct.pack("BBH", cmd, 1, 0) + attrs
    return HEADER.pack(HEADER.size + len(body), family, flags, 1, 0) + body


def parse(message: bytes) -> list[Exit]:
    """Return the task exits one taskstats message carries."""
    out = []
    for kind, payload in _attrs(message[HEADER.size + 4 :]):
        if kind != TASKSTATS_TYPE_AGGR_PID:
            continue
        stats = dict(_attrs(payload)).get(TASKSTATS_TYPE_STATS)
        if stats is None or len(stats) < STATS_LEN:
            continue
        _, _, pid, ppid = IDS.unpack_from(stats, 120)
        user, system = TIMES.unpack_from(stats, 152)
        ran = RAN.unpack_from(stats, 72)[0] / 1e9
        comm = stats[COMM : COMM + COMM_LEN].split(b"\0")[0].decode(errors="replace")
        out.append(Exit(pid, ppid, comm, ran or (user + system) / 1e6))
    return out


def _family(sock: socket.socket) -> int:
    """Return the TASKSTATS generic netlink family's id."""
    sock.send(_request(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, _attr(CTRL_ATTR_FAMILY_NAME, b"TASKSTATS\0")))
    reply = sock.recv(65536)
    if HEADER.unpack_from(reply)[1] == NLMSG_ERROR:
        raise OSError("this kernel has no taskstats (CONFIG_TASKSTATS)")
    ids = dict(_attrs(reply[HEADER.size + 4 :]))
    return int(struct.unpack("H", ids[CTRL_ATTR_FAMILY_ID][:2])[0])


class ExitWatch:
    """Every task exit on this machine from the moment it is opened, kept by a reader thread."""

    def __init__(self, sock: socket.socket) -> None:
        """Keep the registered socket and start reading it."""
        self.sock = sock
        self.raw: list[bytes] = []
        self.lost = False  # the receive buffer overflowed: some exits were not seen
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True, name="exit watch")
        self.reader.start()

    @classmethod
    def open(cls) -> ExitWatch | str:
        """Return a watch registered for every CPU, or why there cannot be one here."""
        try:
            sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
        except OSError as exc:
            return f"no netlink socket ({exc.strerror})"
        try:
            sock.bind((0, 0))
            family = _family(sock)
            with contextlib.suppress(OSError):  # without CAP_NET_ADMIN the registration below says so
                sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, BUFFER)
            mask = f"0-{(os.cpu_count() or 1) - 1}\0".encode()
            sock.send(_request(family, TASKSTATS_CMD_GET, _attr(TASKSTATS_CMD_ATTR_REGISTER_CPUMASK, mask), 5))
            code = struct.unpack_from("i", sock.recv(65536), HEADER.size)[0]
            if code:
                raise OSError(-code, os.strerror(-code))
        except OSError as exc:
            sock.close()
            return f"the kernel's taskstats refused: {exc.strerror or exc} (it needs root: CAP_NET_ADMIN)"
        return cls(sock)

    def _read(self) -> None:
        """Keep every message until the socket is closed."""
        while True:
            try:
                message = self.sock.recv(65536)
            except OSError as exc:
                if exc.errno == errno.ENOBUFS:  # exits came faster than they were read
                    self.lost = True
                    continue
                return
            if not message:
                return
            with self.lock:
                self.raw.append(message)

    def exits(self) -> list[Exit]:
        """Return the exits recorded since the last call."""
        with self.lock:
            raw, self.raw = self.raw, []
        return [e for m in raw for e in parse(m)]

    def close(self) -> None:
        """Stop reading (the kernel forgets the listener with its socket)."""
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.reader.join(2.0)


def role(e: Exit, below: list[Exit], listener: int) -> str:
    """Return a server process's role from its name, its parent and the processes below it."""
    if e.comm not in SERVER_NAMES:
        return COMMAND  # the login's shell and command (the Go server runs them from its listener)
    if e.ppid == listener or not e.comm.startswith("sshd"):
        return CONNECTION  # OpenSSH's per-connection monitor, Dropbear's or TinySSH's process and what it forks
    if e.comm == "sshd-auth" or not any(b.comm not in SERVER_NAMES for b in below):
        return PRE_AUTH  # OpenSSH's privilege-separated child before authentication (sshd-auth from 10.0)
    return POST_AUTH  # OpenSSH's child after authentication, which runs the command


class Roles:
    """A server's CPU seconds by process role, from exits: a connection's processes are counted together once the
    first of them (the listener's child, which ends last) has ended."""

    def __init__(self, listener: int) -> None:
        """Start with nothing counted below the listener `listener`."""
        self.listener = listener
        self.children: dict[int, list[Exit]] = {}
        self.totals = dict.fromkeys((CONNECTION, PRE_AUTH, POST_AUTH, COMMAND), 0.0)

    def add(self, exits: Iterable[Exit]) -> None:
        """Count the exits, each once its connection has ended."""
        for e in exits:
            if e.ppid == self.listener:
                self._count(e)
            else:
                self.children.setdefault(e.ppid, []).append(e)

    def _below(self, e: Exit) -> list[Exit]:
        """Return (and forget) every exit recorded below one."""
        out = []
        for child in self.children.pop(e.pid, []):
            out += [child, *self._below(child)]
        return out

    def _count(self, top: Exit) -> None:
        """Count one connection's processes by role."""
        below = self._below(top)
        for e in [top, *below]:
            r = role(e, [b for b in below if b.ppid == e.pid], self.listener)
            self.totals[r] += e.cpu
