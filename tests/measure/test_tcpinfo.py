"""The kernel as a witness: sock_diag readings of real loopback sockets (no ssh), and the netlink parser."""

from __future__ import annotations

import os
import socket
import struct
import threading
import time
from collections.abc import Iterator

import pytest

from sshbench.measure import grab, tcpinfo, witness

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/ns/net"), reason="Linux only")


def test_a_slow_reader_shows_as_the_receivers_window_on_the_senders_socket() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    stop = threading.Event()

    def slow_reader() -> None:
        conn, _ = server.accept()
        with conn:
            while not stop.is_set() and conn.recv(1 << 14):
                time.sleep(0.001)

    reader = threading.Thread(target=slow_reader, daemon=True)
    reader.start()
    client = socket.create_connection(("127.0.0.1", port))
    client.setblocking(False)
    deadline = time.monotonic() + 1.5
    with tcpinfo.Watcher(port, lambda: iter([os.getpid()]), server_local=True, interval=0.1) as watcher:
        while time.monotonic() < deadline:
            try:
                client.send(b"x" * (1 << 16))
            except BlockingIOError:
                time.sleep(0.001)
    stop.set()
    client.close()
    server.close()
    found = watcher.evidence()
    sender, receiver = found["client"], found["server"]
    assert sender["polls"] >= 5 and sender["bytes_acked"] > 0 and receiver["bytes_received"] > 0
    assert sender["rwnd_limited_share"] > 0.5  # the reader, not the path, held it back
    assert sender["cc"] and sender["min_rtt_ms"] > 0
    assert 0 < found["harness_cpu_s"] < 0.5


def test_an_error_reply_is_raised_and_a_short_tcp_info_is_read_as_far_as_it_goes() -> None:
    error = struct.pack("=IHHII", 36, tcpinfo.NLMSG_ERROR, 0, 1, 0) + struct.pack("=i", -13) + bytes(16)
    with pytest.raises(OSError):
        tcpinfo.parse(error)
    assert tcpinfo._tcp_info(bytes(100)) == {k: 0 for k, off, f in tcpinfo._FIELDS if off + struct.calcsize(f) <= 100}


def test_our_sockets_are_found_by_inode() -> None:
    with socket.socket() as mine:
        assert os.fstat(mine.fileno()).st_ino in grab.socket_inodes(iter([os.getpid()]))
    assert witness.netns_of(os.getpid()) is None  # our own namespace: read here


def test_connections_to_our_own_servers_port_are_ours_without_a_scan() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    client = socket.create_connection(("127.0.0.1", port))
    conn, _ = server.accept()
    scans: list[int] = []

    def ours() -> Iterator[int]:
        scans.append(1)
        return iter([os.getpid()])

    with tcpinfo.Watcher(port, ours, server_local=True, interval=0.05) as watcher:
        for _ in range(20):
            client.sendall(b"x" * 4096)
            conn.recv(1 << 16)
            time.sleep(0.02)
    for s in (client, conn, server):
        s.close()
    found = watcher.evidence()
    assert found["client"]["polls"] >= 2 and scans == []
    assert watcher.families in ((socket.AF_INET,),)  # narrowed to the connection's family once found
