"""The kernel as a witness: sock_diag readings of real loopback sockets (no ssh), and the netlink parser."""

from __future__ import annotations

import os
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sshbench.measure import grab, sockdiag, tcpinfo, witness
from sshbench.measure.steady import steady_threshold

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
    error = struct.pack("=IHHII", 36, sockdiag.NLMSG_ERROR, 0, 1, 0) + struct.pack("=i", -13) + bytes(16)
    with pytest.raises(OSError):
        sockdiag.parse(error)
    assert sockdiag.tcp_info(bytes(100)) == {k: 0 for k, off, f in sockdiag._FIELDS if off + struct.calcsize(f) <= 100}


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_a_borrowed_socket_is_found_past_descriptors_that_are_no_socket_and_knows_its_family(host: str) -> None:
    """The borrow names the kind of socket it takes (no asking the kernel) and learns its family from its peer: a
    file or a pipe in the way is skipped, IPv6 is told from IPv4 (its four-tuple asks for the server's end)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        listener = socket.socket(family, socket.SOCK_STREAM)
        listener.bind((host, 0))
    except OSError:
        pytest.skip(f"no {host} here")
    read_end, write_end = os.pipe()  # descriptors that are no socket, some of them before ours
    with listener, socket.socket(family, socket.SOCK_STREAM) as client:
        listener.listen()
        port = listener.getsockname()[1]
        client.connect((host, port))
        found = grab.borrow(os.getpid(), port)
        assert found is not None and found.family == family and found.peer[1] == port
        end = found.sockid(peer=True)  # the server's end: its port first
        assert struct.unpack("!H", end[:2])[0] == port
        assert found.info() is not None and found.close() is not None and found.info() is None
    os.close(read_end)
    os.close(write_end)


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


@pytest.mark.integration
def test_a_transfers_evidence_and_peaks_are_read_from_run_timeds_wake_ups_with_no_thread(tmp_path: Path) -> None:
    """As `sshbench throughput` wraps its sampler: the kernel's evidence (the borrowed socket, the server's end by
    its four-tuple) and the memory peaks are read at the login's end (a row's first transfer of a size), as the
    steady part begins and as ssh exits, from run_timed's own wake-ups: no thread runs beside the transfer (issue
    40: each wake-up is CPU taken from the measured pair), and the evidence covers the timed part: from the probe
    that found the steady part under way to the exit."""
    from sshbench.joboptions import JobOptions
    from sshbench.measure.costs import metered
    from sshbench.measure.samplers import ThroughputSampler
    from sshbench.model import Direction, Kind, Scenario
    from sshbench.runkinds import RunKind
    from sshbench.ssh.hooks import ticking
    from sshbench.targets.servers import registry

    server = registry.make_server("local:openssh")
    threads: list[str] = []
    size = 32 * 2**20
    with server as target:
        sampler = ThroughputSampler("ssh", target, JobOptions(command=RunKind.THROUGHPUT, size=size), tmp_path)
        take = witness.witnessed(metered(sampler, server, True), target.port, server.pid, True)
        sc = Scenario(Kind.THROUGHPUT, cipher="aes128-gcm@openssh.com", direction=Direction.DOWN)
        with ticking(lambda: threads.extend(t.name for t in threading.enumerate()) or None):
            s = take(sc, 1, False)
    assert s.ok and s.tcp is not None, s.error
    assert not [t for t in threads if t.startswith(("sshbench-tcpinfo", "sshbench-rss"))], threads
    client, sent = s.tcp["client"], s.tcp["server"]
    assert client["polls"] >= 2 and sent["polls"] >= 2, (client["polls"], sent["polls"])  # steady, exit
    timed = size - steady_threshold(size)  # the payload after its untimed start: both ends, framing on top
    assert timed / 2 < sent["bytes_acked"] < timed + 2**20 and timed / 2 < client["bytes_received"] < timed + 2**20
    assert sent["moving_polls"] == sent["polls"]  # both read mid-transfer or after bytes moved: their rates count
    assert s.client_rss and s.server_rss and s.client_rss > 2**20, (s.client_rss, s.server_rss)


def test_the_evidence_begins_anew_where_the_steady_part_does() -> None:
    """A row's first transfer is read at its login's end too (it may end before any probe finds its steady part);
    once one does, each side's series begins there, its first reading counted as one of bytes moving (taken
    mid-transfer), so that the evidence's totals cover the timed part (issue 40)."""

    def reading(acked: int, rate: int) -> tcpinfo.Reading:
        return tcpinfo.Reading(1, 2, 3, "cubic", {"bytes_acked": acked, "delivery_rate": rate, "busy_us": acked})

    watcher = tcpinfo.Watcher(2, iter, adopting=True)
    with watcher:
        watcher._add("client", reading(1_000, 0))  # at the login's end
        watcher.steady()
        watcher._add("client", reading(20_000_000, 400_000_000))  # the steady part's probe
        watcher._add("client", reading(100_000_000, 380_000_000))  # the exit
    found = watcher.evidence()["client"]
    assert found["polls"] == 2 and found["moving_polls"] == 2 and found["bytes_acked"] == 80_000_000
    assert found["delivery_MBps"] == pytest.approx(390) and found["busy_ms"] == pytest.approx(80_000)
