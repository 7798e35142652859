"""The kernel as a witness: the TCP state of a transfer's sockets while a sample runs (sock_diag and TCP_INFO
read as sockdiag.py parses them).

`Watcher` reads a few times per second (from `run_timed`'s wake-ups, or in a thread) and keeps, per socket, the
first and last reading and the values a summary needs; `Series.summary()` is what a sample stores (units in the
keys). Told the ssh client a sample starts (`adopt`), it dumps nothing and starts no thread: it borrows the
client's socket (grab.py) and asks for the server's end by the connection's four-tuple, read from `run_timed`'s
own wake-ups (`tick`, from the probe that finds the steady part under way, `steady`, where each side's series
begins: the evidence covers the timed part) to a last reading as ssh exits (`ended`): a dump walks the kernel's
whole connection table, milliseconds on a large machine, and a thread's wake-ups are CPU taken from the measured
pair.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from sshbench.measure.grab import Borrowed, borrow, socket_inodes
from sshbench.measure.sockdiag import (
    FAMILIES,
    buffers,
    diag_socket,
    drain,
    read,
    read_one,
    read_tuple,
    tcp_info,
    tuple_request,
)
from sshbench.measure.tcpseries import Reading, Series
from sshbench.ssh.timed import SPARSE_PROBE

POLL_SECONDS = 0.1  # between a dumping thread's polls
TICK_SECONDS = SPARSE_PROBE  # between readings of a borrowed socket: those of run_timed's probes, sharing wake-ups
BORROW_TRIES = 3  # polls that look for the adopted process's socket before the watcher dumps instead


class Kept:
    """What the samples of one wrapped sampler share: a sock_diag socket per network namespace (made at the first
    sample, each request answered before the next is sent) and this namespace's TCP buffer settings (read once:
    sysctls a run does not change)."""

    def __init__(self) -> None:
        self.made: dict[str | None, socket.socket] = {}
        self.settings: dict[str, str] | None = None
        self.interrupted = False  # a sample ended by an exception: a reply may wait unread on a socket

    def sockets(self, server_netns: str | None, server_local: bool) -> dict[str, socket.socket]:
        """Return the client's socket (this namespace) and, for a server of ours, the server's namespace's."""
        out = {"client": self._socket(None)}
        if server_local:
            out["server"] = self._socket(server_netns)
        self.interrupted = False
        return out

    def _socket(self, netns: str | None) -> socket.socket:
        """Return the socket for a namespace, made on first use; a reply left by an interrupted read is dropped."""
        sock = self.made.get(netns)
        if sock is None:
            sock = self.made[netns] = diag_socket(netns)
        elif self.interrupted:
            drain(sock)
        return sock

    def buffers(self) -> dict[str, str]:
        """Return this namespace's TCP buffer settings, read at the first call."""
        if self.settings is None:
            self.settings = buffers()
        return self.settings

    def close(self) -> None:
        """Close the sockets."""
        for sock in self.made.values():
            sock.close()
        self.made.clear()


class Watcher:
    """Poll our sockets to one server port while a sample runs: the client's (peer port = the port) in this
    namespace, the server's (local port = the port) in the server's namespace when it is ours. `adopting`: the ssh
    client `run_timed` starts is told (`adopt`) and its own socket borrowed, read from `run_timed`'s wake-ups
    (`tick`: no thread) from where its steady part begins (its login's end too, for a row's first transfer of a
    size); a thread dumps only where there is nothing to borrow."""

    def __init__(
        self,
        port: int,
        ours: Callable[[], Iterator[int]],
        server_netns: str | None = None,
        server_local: bool = False,
        interval: float = POLL_SECONDS,
        adopting: bool = False,
        kept: Kept | None = None,
    ) -> None:
        self.port, self.ours, self.interval, self.adopting = port, ours, interval, adopting
        self.kept = kept  # sockets and settings shared with the sampler's other samples (closed by its owner)
        self.server_local = server_local  # an embedded server: its session's socket is read too
        self.server_netns = server_netns
        self.sockets = (kept or Kept()).sockets(server_netns if server_local else None, server_local)
        self.series: dict[str, Series] = {}
        self.inodes: set[int] = set()
        self.families = FAMILIES  # narrowed to the transfer's family once its socket is found
        self.stopped = False  # the sample is over: no more readings
        self.stop: threading.Event | None = None  # made with the thread, which waits on it
        self.thread: threading.Thread | None = None  # made only where it polls (dumps): most samples need none
        self.seconds = 0.0  # CPU seconds this watcher spent (its own cost, measured)
        self.cc = ""  # the borrowed socket's congestion control
        self.pid: int | None = None  # the ssh client `run_timed` started: its socket is borrowed, no dump needed
        self.borrowed: Borrowed | None = None
        self.asked = b""  # the request for the borrowed connection's server end, by its four-tuple
        self.tries = BORROW_TRIES  # readings left to find the adopted process's socket before dumping instead
        self.lock = threading.Lock()  # the polls' thread and the exit's reading share the series
        self.fresh: set[str] = set()  # sides whose series begins anew at their next reading (the steady part's)

    def __enter__(self) -> Watcher:
        if not self.adopting:
            self._start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped = True
        if exc[0] is not None and self.kept is not None:
            self.kept.interrupted = True  # a read may have been cut between its request and its reply
        if self.stop is not None and self.thread is not None:
            self.stop.set()
            self.thread.join()
        if self.borrowed is not None:
            self.borrowed.close()  # its process's exit was never seen: the copy must not keep the connection open
        if self.kept is None:
            for sock in {id(s): s for s in self.sockets.values()}.values():
                sock.close()

    def _start(self) -> None:
        """Start the polling thread (once)."""
        if self.thread is None and not self.stopped:
            self.stop = threading.Event()
            self.thread = threading.Thread(target=self._run, name="sshbench-tcpinfo", daemon=True)
            self.thread.start()

    def _run(self) -> None:
        """Poll until stopped: at once, then every interval."""
        self.poll()
        assert self.stop is not None
        while not self.stop.wait(self.interval):
            self.poll()

    def adopt(self, pid: int, marked: bool = False) -> None:
        """Watch this process's own socket to the port (the ssh client `run_timed` has just started); `marked`: its
        login's end will be said, and `tick` reads from there (nothing moves before); else the thread polls now."""
        if self.pid is None:
            self.pid = pid
            if not marked:
                self._start()

    def tick(self) -> float | None:
        """Read the adopted process's socket now (`run_timed` calls as its steady part begins, at its login's end too
        where `Dense.from_steady` does not say otherwise, and then as asked) and return the seconds to the next
        reading; None once the thread polls instead (nothing to borrow at the login's end, when its socket is there:
        a copy's ssh is scp's child, so it dumps at once)."""
        if self.thread is not None or self.stopped:
            return None
        start = time.thread_time()
        read = self._poll_borrowed()
        self.seconds += time.thread_time() - start
        if read:
            return TICK_SECONDS
        self._start()
        return None

    def ended(self, pid: int) -> None:
        """Read the borrowed socket's both ends a last time as its process exits, then let the copy go (the
        connection closes now, as it would have without it)."""
        if pid != self.pid or self.borrowed is None:
            return
        start = time.thread_time()
        with self.lock:
            self._server_end()
            self.cc = self.borrowed.congestion()  # read once, after the transfer: the series' last reading has it
            self._client_end(self.borrowed.close())
        self.seconds += time.thread_time() - start

    def _client_end(self, data: bytes | None) -> None:
        """Add a reading of the borrowed client socket to the client's series."""
        if data is None:
            return
        self._add("client", Reading(0, self.port, 0, self.cc, tcp_info(data)))

    def _server_end(self) -> None:
        """Add a reading of the server's end of the borrowed connection (by its four-tuple, no dump)."""
        if not self.server_local:
            return
        try:
            r = read_tuple(self.sockets["server"], self.asked)
        except OSError:
            return
        if r is not None:
            self._add("server", r)

    def steady(self) -> None:
        """The transfer's steady part is under way (`run_timed`'s probe found it): each side's series begins anew at
        its next reading, so that the evidence covers the timed part (what was read at the login's end, where a
        short transfer had no such probe, is dropped)."""
        with self.lock:
            self.fresh = {"client", "server"}

    def _add(self, side: str, r: Reading) -> None:
        """Add a reading to a side's series (begun by it when there is none, or anew as the steady part begins: a
        reading taken mid-transfer, whose rates count as those of bytes moving)."""
        mid = side in self.fresh
        if side not in self.series or mid:
            self.fresh.discard(side)
            self.series[side] = Series(r, r)
        self.series[side].add(r, mid)

    def _poll_borrowed(self) -> bool:
        """Read the adopted process's socket, borrowing it first; return False when there is none to read."""
        if self.borrowed is None and self.pid is not None and self.tries > 0:
            self.tries -= 1
            self.borrowed = borrow(self.pid, self.port)
            if self.borrowed is not None:
                self.asked = tuple_request(self.borrowed.family, self.borrowed.sockid(peer=True))
        if self.borrowed is None:
            return False
        with self.lock:
            self._server_end()
            self._client_end(self.borrowed.info())
        return True

    def poll(self) -> None:
        """Read both namespaces once and add the readings of our sockets to their side's series."""
        start = time.thread_time()
        if self._poll_borrowed():
            self.seconds += time.thread_time() - start
            return
        try:
            seen: dict[int, list[Reading]] = {}  # one dump per namespace, both sides read from it
            for side, sock in self.sockets.items():
                known = self.series.get(side)
                if known is not None and known.moved and (again := read_one(sock, known.last)) is not None:
                    known.add(again)  # the socket that is moving bytes, asked for by name: no dump, no inode scan
                    continue
                if id(sock) not in seen:
                    seen[id(sock)] = read(sock, self.port, self.families)
                readings = seen[id(sock)]
                wanted = [r for r in readings if (r.peer_port if side == "client" else r.local_port) == self.port]
                if self.server_local:
                    mine = wanted  # our own server's port: every connection to it is one of ours, no scan needed
                else:
                    if any(r.inode not in self.inodes for r in wanted):
                        self.inodes = socket_inodes(self.ours())
                    mine = [r for r in wanted if r.inode in self.inodes]
                if mine:
                    self.families = (mine[0].family,)
                    r = max(mine, key=lambda x: x.info.get("bytes_acked", 0) + x.info.get("bytes_received", 0))
                    if side not in self.series or self.series[side].first.inode != r.inode:
                        self.series[side] = Series(r, r)
                    self.series[side].add(r)
        except OSError:
            return  # a namespace that went away with its server: what was read stays
        finally:
            self.seconds += time.thread_time() - start

    def evidence(self) -> dict[str, Any]:
        """Return the summary per side that was seen (client, server) with that side's TCP buffer settings where
        readable, and the watcher's own CPU seconds (its polls and this summary)."""
        start = time.thread_time()
        out: dict[str, Any] = {side: s.summary() for side, s in self.series.items() if s.polls >= 2}
        for side, figures in out.items():
            if side == "client" or not self.server_netns:  # sysctls are per namespace: ours is readable here
                figures |= self.kept.buffers() if self.kept is not None else buffers()
        out["harness_cpu_s"] = self.seconds + time.thread_time() - start
        return out
