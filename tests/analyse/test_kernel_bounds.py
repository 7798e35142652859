"""What the kernel's evidence of a transfer's sockets says bounds it, where no setting does (a remote host, a
plain loopback run): the sender's socket decides, the receiver's alone is labelled so."""

from __future__ import annotations

import dataclasses
from typing import Any

from fakes import GCM, transfer
from sshbench.analyse.claims import bounds
from sshbench.analyse.results import Row, ranked
from sshbench.environment import Environment
from sshbench.model import BoundKind, Direction
from sshbench.samples import Sample

BUSY = {
    "rtt_ms": 20.4,
    "min_rtt_ms": 20.0,
    "cwnd_segments": 180,
    "delivery_MBps": 12.4,
    "app_limited_share": 0.0,
    "rwnd_limited_share": 0.0,
    "sndbuf_limited_share": 0.0,
    "retransmits": 0,
    "peer_window_bytes": 6e6,
}


def _row(rate: float, direction: Direction, **sides: dict[str, Any]) -> Row:
    """Return a ranked throughput row at `rate` MB/s whose samples hold this kernel evidence."""
    st = transfer(GCM, None, rate, direction)
    samples = tuple(dataclasses.replace(s, tcp=dict(sides)) if not s.warmup else s for s in st.samples)
    group = ranked([dataclasses.replace(st, samples=samples)], 0.05)
    return next(iter(group.values()))[0]


def _bound(row: Row) -> bounds.Bound:
    lim = bounds.limits(Environment(), evidence=True)
    assert lim is not None
    found = bounds.diagnose(row, lim)
    assert found is not None
    return found.bound


def test_a_busy_sender_on_a_full_path_is_network_bound_with_its_delivery_rate_and_rtt() -> None:
    b = _bound(_row(12.3, Direction.UP, client=BUSY))
    assert b.kind is BoundKind.NETWORK and b.limit == 12.4
    assert b.evidence["side"] == "sender" and b.evidence["rtt_ms"] == 20.4 and "the path" in b.evidence["limited_by"]


def test_a_sender_waiting_on_the_receivers_window_is_tcp_window_bound() -> None:
    b = _bound(_row(60.0, Direction.DOWN, server=BUSY | {"rwnd_limited_share": 0.9, "peer_window_bytes": 1.5e6}))
    assert b.kind is BoundKind.TCP_WINDOW and "receiver's TCP window" in b.evidence["limited_by"]
    assert "tcp_rmem" in b.remedy and b.evidence["socket"] == "server"
    # a window that grew while it was used: its median (128 KiB / 103 ms = 1.27 MB/s) below the rate limits nothing
    grown = _bound(
        _row(
            1.96, Direction.UP, client=BUSY | {"rtt_ms": 103.3, "rwnd_limited_share": 0.51, "peer_window_bytes": 131072}
        )
    )
    assert grown.kind is BoundKind.TCP_WINDOW and grown.limit is None and grown.evidence["peer_window_bytes"] == 131072


def test_an_application_limited_sender_at_the_channel_window_per_rtt_is_ssh_window_bound() -> None:
    long_fat = BUSY | {"rtt_ms": 100.0, "min_rtt_ms": 100.0, "app_limited_share": 0.9}
    b = _bound(_row(20.5, Direction.DOWN, server=long_fat))
    assert b.kind is BoundKind.SSH_WINDOW and b.limit is not None and abs(b.limit - 20.97) < 0.01
    busy_loopback = long_fat | {"rtt_ms": 11.0, "min_rtt_ms": 0.02}  # late ACKs of a busy receiver, not the path
    assert _bound(_row(184.0, Direction.UP, client=busy_loopback)).kind is not BoundKind.SSH_WINDOW
    bursts = long_fat | {"app_limited_share": 0.47}  # ss over a login read a window-bound sshd so (1 Gbit/100 ms)
    assert _bound(_row(20.0, Direction.DOWN, server=bursts)).kind is BoundKind.SSH_WINDOW
    assert _bound(_row(12.5, Direction.DOWN, server=bursts | {"min_rtt_ms": 20.0})).kind is BoundKind.NETWORK
    slow = _bound(_row(5.0, Direction.DOWN, server=long_fat))  # app-limited far below the window: not the window
    assert slow.kind is BoundKind.UNKNOWN and slow.evidence["kernel"]["evidence"]["limited_by"].endswith("(ssh)")
    said = bounds.describe(slow)  # issue 34: "below every known limit" beside evidence naming the sender's ssh
    assert "below every known limit" not in said and said.startswith(
        "not the path or TCP: the kernel shows the sender limited by the application (ssh)"
    )


def test_a_busy_sender_whose_path_delivered_far_more_than_the_rate_is_not_network_bound() -> None:
    # the quick start's aes192-cbc upload on loopback: 431 MB/s while the socket delivered up to 9355 MB/s
    loopback = BUSY | {
        "rtt_ms": 0.02,
        "min_rtt_ms": 0.004,
        "app_limited_share": 0.33,
        "delivery_MBps": 2000.0,
        "delivery_max_MBps": 9354.7,
    }
    b = _bound(_row(431.0, Direction.UP, client=loopback))
    assert b.kind is BoundKind.UNKNOWN, b
    assert bounds.describe(b) == (
        "below every known limit (the kernel shows the sender limited by neither its "
        "windows nor the path, which delivered up to 9355 MB/s)"
    )
    lan = BUSY | {"rtt_ms": 0.3, "min_rtt_ms": 0.2, "delivery_MBps": 110.0, "delivery_max_MBps": 118.0}  # 1 GbE
    assert _bound(_row(112.0, Direction.UP, client=lan)).kind is BoundKind.NETWORK


def test_the_receivers_socket_alone_says_so() -> None:
    b = _bound(_row(20.0, Direction.DOWN, client={"rcv_rtt_ms": 100.0, "rtt_ms": 100.0}))
    assert b.kind is BoundKind.SSH_WINDOW and b.evidence["side"].startswith("receiver")
    far = _bound(_row(2.0, Direction.DOWN, client={"rcv_rtt_ms": 100.0}))
    assert far.kind is BoundKind.UNKNOWN and far.evidence["kernel"]["evidence"]["side"].startswith("receiver")


def test_settings_still_decide_and_the_kernels_call_is_kept_beside_them() -> None:
    from sshbench.environment import LinkInfo

    wan = LinkInfo(name="wan", rate_bits=100e6, rtt_s=0.02, measured_rtt_s=0.0204)
    lim = bounds.limits(Environment(link=wan), evidence=True)
    assert lim is not None
    found = bounds.diagnose(_row(12.3, Direction.UP, client=BUSY), lim)
    assert found is not None and found.bound.kind is BoundKind.NETWORK
    assert found.bound.evidence["kernel"]["kind"] == "network"  # the two agree


def test_old_runs_without_evidence_say_nothing_new() -> None:
    assert bounds.limits(Environment()) is None
    assert not bounds.has_evidence([transfer(GCM, None, 500.0, Direction.DOWN)])
    assert Sample.__dataclass_fields__["tcp"].default is None


def _with_costs(row: Row, client_gib: float, server_gib: float) -> Row:
    """Return the row with CPU seconds per GiB for both sides."""
    from sshbench.analyse.results import Costs

    return dataclasses.replace(row, costs=Costs(client_gib, server_gib, None, None, None))


def test_a_remote_download_below_the_window_with_both_cpus_idle_is_the_path_by_elimination() -> None:
    row = _with_costs(
        _row(11.0, Direction.DOWN, client={"rcv_rtt_ms": 20.0, "tcp_rmem": "4096 131072 6291456"}), 0.5, 0.5
    )
    b = _bound(row)
    assert b.kind is BoundKind.NETWORK and "by elimination" in b.evidence["limited_by"]
    assert "6291456" in b.evidence["limited_by"] and b.evidence["side"].startswith("receiver")


def test_a_remote_download_whose_data_moved_in_a_few_round_trips_eliminates_nothing() -> None:
    # seen on a 1 Gbit/100 ms path: 4 MiB at 9.4 MB/s (0.4 s: 4 round trips) while 2 connections moved 17 MB/s
    seen = {"rcv_rtt_ms": 103.0, "min_rtt_ms": 100.1, "tcp_rmem": "4096 131072 33554432", "bytes_received": 3555705}
    short = _bound(_with_costs(_row(9.43, Direction.DOWN, client=seen), 0.5, 0.5))
    assert short.kind is BoundKind.UNKNOWN, short
    said = bounds.describe(short)
    assert said == (
        "below every known limit (from the receiver's socket: its data moved in about 4 round trips, "
        "too few to tell the path from TCP's start-up)"
    )
    longer = _bound(
        _with_costs(_row(9.43, Direction.DOWN, client=seen | {"bytes_received": 12 * 9.43e6 * 0.1}), 0.5, 0.5)
    )  # 12 round trips of data
    assert longer.kind is BoundKind.NETWORK and "by elimination" in longer.evidence["limited_by"]
    timed = seen | {"bytes_received": 6 * 9.43e6 * 0.1, "connection_bytes": 12 * 9.43e6 * 0.1}  # session 27 on:
    judged = _bound(_with_costs(_row(9.43, Direction.DOWN, client=timed), 0.5, 0.5))  # the totals are the timed
    assert judged.kind is BoundKind.NETWORK  # part's (half a small payload), the transfer's length the connection's


def test_a_remote_session_at_its_cgroup_quota_is_server_cpu_bound() -> None:
    quota = {"remote_session": {"cpu": 1.0, "rss": 8e6, "quota": 0.2}}
    row = _with_costs(_row(40.0, Direction.DOWN, client={"rcv_rtt_ms": 0.1}, **quota), 0.5, 5.0)  # 0.19 CPU of 0.2
    b = _bound(row)
    assert b.kind is BoundKind.SERVER_CPU and b.evidence["cpu_share"] == 0.2


def test_a_bound_without_a_limit_or_a_share_is_named_by_what_limited_it_never_as_zero_percent() -> None:
    grown = _bound(
        _row(
            1.96, Direction.UP, client=BUSY | {"rtt_ms": 103.3, "rwnd_limited_share": 0.51, "peer_window_bytes": 131072}
        )
    )
    assert bounds.describe(grown) == "tcp-window-bound (limited by the receiver's TCP window)"
    held = bounds.Bound(BoundKind.SERVER_CPU, 0.15, "CPU", None, {"throttled_share": 0.44})
    assert bounds.describe(held) == "server-cpu-bound (its cgroup's quota held it 44% of the transfer)"
    busy = bounds.Bound(BoundKind.CLIENT_CPU, 1.0, "CPU", 0.97, {})
    assert bounds.describe(busy) == "client-cpu-bound (97% of its CPU share)"
