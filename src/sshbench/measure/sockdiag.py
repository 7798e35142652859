"""sock_diag and tcp_info: the kernel's account of TCP sockets, asked for and parsed.

One netlink request (NETLINK_SOCK_DIAG, SOCK_DIAG_BY_FAMILY with INET_DIAG_INFO and INET_DIAG_CONG) returns every
established TCP socket of a network namespace with its `struct tcp_info` (linux/tcp.h) and congestion control: what
`ss -tin` prints, without spawning it. Once a socket is found and moving bytes, it is asked for again by its sockid
alone, with no dump and no look at whose it is (costs per read in docs/BENCHMARKS.md: a dump, a read by sockid, and
spawning `ss`). Every connection to an embedded server's port is ours (sshbench picked that free port); to a host
of the user's, a socket is ours when a process sshbench started holds its inode. An emulated link's namespace is
read through a socket made there by a thread that entered it. Linux only; elsewhere nothing is read.
"""

from __future__ import annotations

import ctypes
import os
import socket
import struct
import threading

from sshbench.measure.tcpseries import Reading

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
INET_DIAG_INFO, INET_DIAG_CONG = 2, 4
TCP_ESTABLISHED = 1
CLOSING_STATES = sum(1 << state for state in (1, 4, 5, 8, 9, 11))  # established, FIN_WAIT1/2, CLOSE_WAIT, LAST_ACK,
# CLOSING: every state whose socket still has its tcp_info (not TIME_WAIT)
CLONE_NEWNET = 0x40000000
_HEADER = struct.Struct("=IHHII")
_REQUEST = struct.Struct("=BBBxI HH16s16sI8s")  # inet_diag_req_v2 with its inet_diag_sockid (ports big-endian)
_MSG = struct.Struct("=BBBB HH16s16sI8s IIIII")  # inet_diag_msg
_SOCKID_END = 4 + struct.calcsize("=HH16s16sI8s")  # the inet_diag_sockid inside inet_diag_msg
_ATTRIBUTE = struct.Struct("=HH")  # a netlink attribute's length and type
FAMILIES: tuple[int, ...] = (socket.AF_INET, socket.AF_INET6)

# struct tcp_info: (name, offset, format). Times in microseconds, rates in bytes per second.
_FIELDS = (
    ("app_limited", 7, "B"),
    ("snd_mss", 16, "I"),
    ("rcv_mss", 20, "I"),
    ("rtt_us", 68, "I"),
    ("rttvar_us", 72, "I"),
    ("snd_cwnd", 80, "I"),
    ("rcv_rtt_us", 92, "I"),
    ("rcv_space", 96, "I"),
    ("total_retrans", 100, "I"),
    ("bytes_acked", 120, "Q"),
    ("bytes_received", 128, "Q"),
    ("min_rtt_us", 148, "I"),
    ("delivery_rate", 160, "Q"),
    ("busy_us", 168, "Q"),
    ("rwnd_limited_us", 176, "Q"),
    ("sndbuf_limited_us", 184, "Q"),
    ("snd_wnd", 228, "I"),
)


_UNPACK = tuple((name, offset, struct.Struct("=" + fmt)) for name, offset, fmt in _FIELDS)  # compiled once


def _whole_format() -> struct.Struct:
    """Return one struct for every field at its offset (pad bytes between): one call unpacks a whole tcp_info."""
    out, at = "=", 0
    for _, offset, fmt in _FIELDS:
        out += f"{offset - at}x{fmt}" if offset > at else fmt
        at = offset + struct.calcsize("=" + fmt)
    return struct.Struct(out)


_WHOLE = _whole_format()
_NAMES = tuple(name for name, _, _ in _FIELDS)


def tcp_info(data: bytes | memoryview) -> dict[str, int]:
    """Return the tcp_info fields this kernel's structure holds (older kernels send a shorter one)."""
    if len(data) >= _WHOLE.size:
        out = dict(zip(_NAMES, _WHOLE.unpack_from(data), strict=True))
        out["app_limited"] &= 1  # the first bit of that byte
        return out
    out = {}
    for name, offset, unpack in _UNPACK:
        if len(data) >= offset + unpack.size:
            (value,) = unpack.unpack_from(data, offset)
            out[name] = value & 1 if name == "app_limited" else value
    return out


def parse(buffer: bytes, port: int | None = None) -> tuple[list[Reading], bool]:
    """Return the sockets in one netlink reply buffer (only those with `port` at either end, when given: the
    others' tcp_info is not decoded), and whether the dump is done."""
    readings: list[Reading] = []
    view, offset = memoryview(buffer), 0
    while offset + _HEADER.size <= len(buffer):
        length, kind, _, _, _ = _HEADER.unpack_from(buffer, offset)
        if length < _HEADER.size:
            break
        if kind == NLMSG_DONE:
            return readings, True
        if kind == NLMSG_ERROR:
            (errno,) = struct.unpack_from("=i", buffer, offset + _HEADER.size)
            raise OSError(-errno, "sock_diag request refused")
        reading = _message(view[offset + _HEADER.size : offset + length], port)
        if reading is not None:
            readings.append(reading)
        offset += (length + 3) & ~3
    return readings, False


def _message(body: memoryview, port: int | None) -> Reading | None:
    """Return the socket one inet_diag_msg describes, or None when `port` is at neither end."""
    fields = _MSG.unpack_from(body)
    sport, dport, inode = socket.ntohs(fields[4]), socket.ntohs(fields[5]), fields[14]
    if port is not None and port not in (sport, dport):
        return None
    info, cc, pos = {}, "", _MSG.size
    while pos + 4 <= len(body):
        alen, atype = _ATTRIBUTE.unpack_from(body, pos)
        if alen < 4:
            break
        if atype == INET_DIAG_INFO:
            info = tcp_info(body[pos + 4 : pos + alen])
        elif atype == INET_DIAG_CONG:
            cc = bytes(body[pos + 4 : pos + alen]).split(b"\0", 1)[0].decode(errors="replace")
        pos += (alen + 3) & ~3
    return Reading(sport, dport, inode, cc, info, fields[0], bytes(body[4:_SOCKID_END]))


def request(family: int = socket.AF_INET) -> bytes:
    """Return the netlink dump request for every established TCP socket of one address family."""
    body = _REQUEST.pack(
        family,
        socket.IPPROTO_TCP,
        (1 << (INET_DIAG_INFO - 1)) | (1 << (INET_DIAG_CONG - 1)),
        1 << TCP_ESTABLISHED,
        0,
        0,
        b"",
        b"",
        0,
        b"",
    )
    return _HEADER.pack(_HEADER.size + len(body), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, 1, 0) + body


def request_one(family: int, sockid: bytes, states: int = 1 << TCP_ESTABLISHED) -> bytes:
    """Return the netlink request for one socket, named by the sockid the kernel sent with it (no dump)."""
    head = struct.pack(
        "=BBBxI",
        family,
        socket.IPPROTO_TCP,
        (1 << (INET_DIAG_INFO - 1)) | (1 << (INET_DIAG_CONG - 1)),
        states,
    )
    body = head + sockid
    return _HEADER.pack(_HEADER.size + len(body), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST, 1, 0) + body


def read_one(sock: socket.socket, known: Reading) -> Reading | None:
    """Return a socket's state again by its sockid (one message, no dump); None when it is gone."""
    sock.send(request_one(known.family, known.sockid))
    try:
        found, _ = parse(sock.recv(1 << 16))
    except OSError:
        return None  # ENOENT: closed since
    same = [r for r in found if r.inode == known.inode and r.info]  # not a closed one's TIME_WAIT remains
    return same[0] if same else None


def read_tuple(sock: socket.socket, asked: bytes) -> Reading | None:
    """Return the socket `asked` names by its four-tuple (`tuple_request`), or None: established or closing (the
    server's end as the client exits: it has sent its last bytes and its FIN)."""
    sock.send(asked)
    try:
        found, _ = parse(sock.recv(1 << 16))
    except OSError:
        return None  # ENOENT: not there (closed)
    return next((r for r in found if r.info), None)


def tuple_request(family: int, sockid: bytes) -> bytes:
    """Return the request for the socket with this four-tuple (an inet_diag_sockid without a cookie), established
    or closing."""
    return request_one(family, sockid, CLOSING_STATES)


def read(sock: socket.socket, port: int | None = None, families: tuple[int, ...] = FAMILIES) -> list[Reading]:
    """Return the established TCP sockets of these address families (default IPv4 and IPv6) the diag socket's
    namespace holds, with `port` at either end when given."""
    out: list[Reading] = []
    for family in families:
        sock.send(request(family))
        done = False
        while not done:
            found, done = parse(sock.recv(1 << 20), port)
            out += found
    return out


DRAIN_READS = 64  # at most this many stale replies dropped before a sample (a dump's parts: a few)


def drain(sock: socket.socket) -> None:
    """Drop whatever replies wait unread on a sock_diag socket (a read interrupted between request and reply)."""
    for _ in range(DRAIN_READS):
        try:
            sock.recv(1 << 16, socket.MSG_DONTWAIT)
        except OSError:  # EAGAIN: nothing left (or an error the next read will meet again)
            return


def diag_socket(netns: str | None = None) -> socket.socket:
    """Return a sock_diag socket in this namespace, or in the one at `netns` (/proc/PID/ns/net: made by a thread
    that enters it, since a socket stays in the namespace it was made in)."""
    if netns is None:
        return socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG)
    made: list[socket.socket | BaseException] = []

    def enter() -> None:
        """Enter the namespace (this thread only), make the socket, and end (the thread's namespace ends too)."""
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = os.open(netns, os.O_RDONLY)
            try:
                if libc.setns(fd, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), f"cannot enter the network namespace {netns}")
            finally:
                os.close(fd)
            made.append(socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG))
        except BaseException as exc:  # handed to the caller below
            made.append(exc)

    thread = threading.Thread(target=enter, name="sshbench-netns")
    thread.start()
    thread.join()
    if isinstance(made[0], BaseException):
        raise made[0]
    return made[0]


def buffers() -> dict[str, str]:
    """Return this namespace's TCP buffer settings (min default max, bytes) as the kernel prints them."""
    out = {}
    for name in ("tcp_rmem", "tcp_wmem"):
        try:
            fd = os.open(f"/proc/sys/net/ipv4/{name}", os.O_RDONLY)
        except OSError:
            continue
        try:
            out[name] = " ".join(os.read(fd, 256).decode().split())
        except OSError:
            continue
        finally:
            os.close(fd)
    return out
