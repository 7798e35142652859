"""The delay line: a userspace link delay for kernels without `netem` (python -m sshbench.targets.link.delayline).

It opens two TUN devices (the client's end and the server's end of an emulated link, MTU up to a 9000-byte
jumbo frame so a 1 Gbit/s link is ~14 k packets/s), or with `--packet` a packet socket on one end of each of two veth
pairs (a normal user's link in a user namespace of its own, where /dev/net/tun may be closed to it: the
frames carry their virtio-net header, so checksums left to the device and segmentation offload survive
the copy; a bridge of two ports, frames unchanged), and forwards every packet read from one to the other
after the one-way delay: a FIFO per direction (the delay is constant, so arrival order is release order), bounded
in bytes (a full queue drops, like a router's), with optional random loss. Rate shaping is not its job:
`tbf` on each device's egress shapes the packets before it reads them. It prints `ready` once both devices
exist, takes `delay SECONDS` and `loss PROBABILITY` lines on stdin (the link is calibrated against a
measured RTT, and loss is switched on after the rate is verified), and exits when its parent dies
(setpriv --pdeathsig), on SIGTERM, or when stdin closes. The TUN devices are not persistent: they vanish
with it.

It carries only the emulated link's packets and never the measuring: ssh, scp and the servers time
themselves; docs/BENCHMARKS.md measures what it costs.
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import fcntl
import os
import random
import select
import signal
import socket
import struct
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
PR_SET_TIMERSLACK = 29
MAX_PACKET = 1 << 17  # a TUN packet is at most 64 KiB; a veth frame with offload up to 64 KiB + headers
SOL_PACKET, PACKET_VNET_HDR, PACKET_IGNORE_OUTGOING = 263, 15, 23
ETH_P_ALL = 0x0003
SO_RCVBUFFORCE, SO_SNDBUFFORCE = 33, 32
SOCKET_BUFFER = 32 << 20  # asked of the kernel; a normal user gets at most net.core.rmem_max / wmem_max
BATCH = 64  # packets read from one device before looking at the other


def open_tun(name: str) -> int:
    """Create a non-persistent TUN device `name` (IP packets without a header); return its fd."""
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    return fd


def open_packet(name: str) -> int:
    """Open a packet socket on veth end `name` (frames with their virtio-net header, not our own); return its fd."""
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
    sock.setsockopt(SOL_PACKET, PACKET_VNET_HDR, 1)
    for force, plain in ((SO_RCVBUFFORCE, socket.SO_RCVBUF), (SO_SNDBUFFORCE, socket.SO_SNDBUF)):
        try:
            sock.setsockopt(socket.SOL_SOCKET, force, SOCKET_BUFFER)
        except PermissionError:  # beyond the system's maximum needs CAP_NET_ADMIN over the machine
            sock.setsockopt(socket.SOL_SOCKET, plain, SOCKET_BUFFER)
    sock.bind((name, 0))
    sock.setblocking(False)
    return sock.detach()


class Direction:
    """One direction of the link: packets read from `source`, released to `sink` after the delay."""

    def __init__(self, source: int, sink: int, delay: float, loss: float, limit: int) -> None:
        self.source, self.sink, self.delay, self.loss, self.limit = source, sink, delay, loss, limit
        self.queue: collections.deque[tuple[float, bytes]] = collections.deque()
        self.queued = 0
        self.dropped = 0

    def take(self, now: float) -> None:
        """Read what the source has (up to a batch) into the queue, dropping what does not fit."""
        for _ in range(BATCH):
            try:
                packet = os.read(self.source, MAX_PACKET)
            except BlockingIOError:
                return
            if self.queued + len(packet) > self.limit or (self.loss and random.random() < self.loss):
                self.dropped += 1
                continue
            self.queue.append((now + self.delay, packet))
            self.queued += len(packet)

    def release(self, now: float) -> float | None:
        """Write every packet that is due; return when the next one is due (None: queue empty)."""
        queue = self.queue
        while queue:
            due, packet = queue[0]
            if due > now:
                return due
            queue.popleft()
            self.queued -= len(packet)
            try:
                os.write(self.sink, packet)
            except OSError:  # the device is going away or its receive path is full: the packet is lost
                self.dropped += 1
        return None


def run(client: str, server: str, delay: float, loss: float, limit: int, packet: bool = False) -> None:
    """Open both devices, say `ready`, and forward packets until stdin closes."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0)  # wake up on time: the default slack is 50 µs
    opener = open_packet if packet else open_tun
    client_fd, server_fd = opener(client), opener(server)
    upload = Direction(client_fd, server_fd, delay, loss, limit)
    download = Direction(server_fd, client_fd, delay, loss, limit)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    stdin = sys.stdin.fileno()
    readers = [client_fd, server_fd, stdin]
    clock = time.monotonic
    while True:
        now = clock()
        dues = [d for d in (upload.release(now), download.release(now)) if d is not None]
        timeout = max(0.0, min(dues) - clock()) if dues else None
        ready, _, _ = select.select(readers, [], [], timeout)
        now = clock()
        if client_fd in ready:
            upload.take(now)
        if server_fd in ready:
            download.take(now)
        if stdin in ready and not control(os.read(stdin, 4096), (upload, download)):
            return


def control(text: bytes, directions: tuple[Direction, ...]) -> bool:
    """Apply `delay S` / `loss P` lines to both directions; return False at end of input."""
    if not text:
        return False
    for line in text.decode(errors="replace").splitlines():
        what, _, value = line.partition(" ")
        for d in directions:
            if what == "delay":
                d.delay = float(value)
            elif what == "loss":
                d.loss = float(value)
    return True


def main() -> None:
    """Parse the arguments and run the delay line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("client")
    parser.add_argument("server")
    parser.add_argument("--delay", type=float, required=True, help="one-way delay, seconds")
    parser.add_argument("--loss", type=float, default=0.0, help="probability of dropping a packet")
    parser.add_argument("--limit", type=int, default=64 << 20, help="bytes queued per direction")
    parser.add_argument("--packet", action="store_true", help="client and server are veth ends, not TUN devices")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    run(args.client, args.server, args.delay, args.loss, args.limit, args.packet)


if __name__ == "__main__":
    main()
