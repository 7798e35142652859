"""What a key exchange puts on the wire: the bytes each way up to and including each side's SSH_MSG_NEWKEYS, and the
round trips the client waited for, counted by a relay that ssh runs as its ProxyCommand on one untimed login (the
warm-up) per row.

The kernel's socket counters cannot give this: sock_diag polls too slowly for a loopback handshake of a few ms, and
its totals cover the whole login. The relay walks each direction's plaintext (RFC 4253: identification lines, then
binary packets `uint32 packet_length, byte padding_length, payload, padding` with no MAC before the new keys) until
that direction's NEWKEYS, then only copies. It writes its count the moment both NEWKEYS are seen, before it forwards
the chunk that completed them, so the count is on disk before ssh can finish the login. The stdlib and the count's
record (samples.WireCount) only: it runs as `python -m sshbench.measure.wire HOST PORT OUT` for every counted login.
"""

from __future__ import annotations

import json
import os
import selectors
import shlex
import signal
import socket
import sys
from pathlib import Path

from sshbench.samples import WireCount

NEWKEYS = 21  # SSH_MSG_NEWKEYS
MAX_PACKET = 256 * 1024  # RFC 4253 6.1: implementations need accept 35000; more than this is not SSH
MAX_LINES = 1024  # identification: lines before the version line (RFC 4253 4.2 allows some)


class StreamWalk:
    """One direction of an SSH connection walked packet by packet until its NEWKEYS."""

    def __init__(self) -> None:
        self.buffer = b""
        self.counted = 0  # bytes up to the end of the last whole line or packet walked
        self.banner = False  # the `SSH-` version line was seen
        self.lines = 0
        self.done = False  # NEWKEYS walked: `counted` is final
        self.broken: str | None = None  # not SSH as RFC 4253 frames it: nothing counted is trusted

    def feed(self, data: bytes) -> None:
        """Walk `data`, the next bytes of this direction."""
        if self.done or self.broken:
            return
        self.buffer += data
        while not self.done and not self.broken and self._step():
            pass

    def _step(self) -> bool:
        """Walk one identification line or one binary packet; return False when more bytes are needed."""
        if not self.banner:
            end = self.buffer.find(b"\n")
            if end < 0:
                if len(self.buffer) > 255:
                    self.broken = "an identification line longer than 255 bytes"
                return False
            line, self.buffer = self.buffer[: end + 1], self.buffer[end + 1 :]
            self.counted += len(line)
            self.lines += 1
            self.banner = line.startswith(b"SSH-")
            if not self.banner and self.lines >= MAX_LINES:
                self.broken = "no SSH- version line"
            return True
        if len(self.buffer) < 6:
            return False
        length = int.from_bytes(self.buffer[:4], "big")
        if length < 5 or length > MAX_PACKET:
            self.broken = f"a packet length of {length}"
            return False
        if len(self.buffer) < 4 + length:
            return False
        kind = self.buffer[5]
        self.buffer = self.buffer[4 + length :]
        self.counted += 4 + length
        if kind == NEWKEYS:
            self.done = True
            self.buffer = b""
        return True


class Tally:
    """Both directions of one connection and the order in which their data arrived."""

    def __init__(self) -> None:
        self.sent = StreamWalk()  # client to server
        self.received = StreamWalk()
        self.round_trips = 0
        self.answered = False  # the server sent something since the client's last flight

    def client_data(self, data: bytes) -> None:
        """Account for bytes the client sent."""
        if self.sent.done:
            return
        if self.answered:
            self.round_trips += 1
            self.answered = False
        self.sent.feed(data)

    def server_data(self, data: bytes) -> None:
        """Account for bytes the server sent."""
        if not self.received.done:
            self.answered = True
            self.received.feed(data)

    @property
    def complete(self) -> bool:
        """Return True once both directions walked their NEWKEYS."""
        return self.sent.done and self.received.done

    def count(self) -> WireCount:
        """Return the count (meaningful once complete)."""
        return WireCount(self.sent.counted, self.received.counted, self.round_trips)

    def problem(self) -> str | None:
        """Return why nothing can be counted (a direction that is not SSH framed as RFC 4253 says), or None."""
        broken = self.sent.broken or self.received.broken
        return f"not counted: {broken}" if broken else None


def proxy_options(out: Path) -> list[str]:
    """Return the ssh options that route one login through the counting relay writing to `out` (ssh substitutes %h
    and %p; the paths are quoted for the shell ssh runs the ProxyCommand with)."""
    command = " ".join((shlex.quote(sys.executable), "-m", "sshbench.measure.wire", "%h", "%p", shlex.quote(str(out))))
    return ["-o", f"ProxyCommand={command}"]


def read_count(out: Path) -> WireCount | str | None:
    """Return the relay's count, why it could not count, or None when it wrote nothing (the login ended before the
    new keys)."""
    try:
        doc = json.loads(out.read_text())
    except (OSError, ValueError):
        return None
    return WireCount.read(doc)


def _write(out: Path, doc: dict[str, object]) -> None:
    """Write `doc` to `out` atomically (a reader never sees half of it)."""
    part = out.with_name(out.name + ".part")
    part.write_text(json.dumps(doc))
    part.replace(out)


def relay(host: str, port: int, out: Path) -> None:
    """Connect to host:port and copy stdin to it and it to stdout, counting the key exchange (ssh's ProxyCommand)."""
    tally = Tally()
    written = False
    conn = socket.create_connection((host, port), timeout=30)
    conn.settimeout(None)
    sel = selectors.DefaultSelector()
    sel.register(0, selectors.EVENT_READ, "client")
    sel.register(conn, selectors.EVENT_READ, "server")
    open_ends = 2
    while open_ends:
        for key, _ in sel.select():
            data = os.read(0, 65536) if key.data == "client" else conn.recv(65536)
            if data and not written:
                (tally.client_data if key.data == "client" else tally.server_data)(data)
                why = tally.problem()
                if tally.complete or why:
                    _write(out, {"problem": why} if why else dict(tally.count().to_json()))
                    written = True
            if not data:
                sel.unregister(key.fileobj)
                open_ends -= 1
                if key.data == "client":
                    conn.shutdown(socket.SHUT_WR)
                else:
                    os.close(1)
                continue
            if key.data == "client":
                conn.sendall(data)
            else:
                _write_all(1, data)


def _write_all(fd: int, data: bytes) -> None:
    """Write all of `data` to `fd`."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def main(argv: list[str]) -> int:
    """Run the relay: `HOST PORT OUT`."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)  # ssh ends its ProxyCommand with SIGHUP when the login is over
    host, port, out = argv
    try:
        relay(host, int(port), Path(out))
    except (BrokenPipeError, ConnectionError):
        return 0
    except OSError as e:
        print(f"sshbench wire relay: {host}:{port}: {e.strerror or e}", file=sys.stderr)
        return 255
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
