"""What the kernel's evidence of a transfer's sockets says bounds it (pure; see analyse/claims/bounds.py).

By the sender's socket (the server's for downloads, the client's for uploads): receive-window- or send-buffer-limited
half its busy time -> `tcp-window`; application-limited at 80 % or more of the channel window / minimum RTT ->
`ssh-window`; otherwise busy -> `network`. From the receiver's socket alone: the channel window per RTT, else the
path by elimination when both CPUs were measured idle and nothing was throttled."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sshbench.analyse.claims.core import NEAR_LIMIT, TOLERANCE
from sshbench.analyse.claims.cpu import busy, throttled
from sshbench.analyse.claims.limits import CLIENT_WINDOW, MB, Bound, Limits
from sshbench.analyse.claims.remedies import remedy
from sshbench.analyse.results import Row
from sshbench.model import BoundKind, Direction

HALF = 0.5  # a socket limited this share of its busy time (or of the polls) is limited by that
QUARTER = 0.25  # app-limited this share of the polls at the channel window per RTT: the window binds
PATH_RTT = 1e-3  # below this RTT (loopback, a fast LAN) the kernel cannot tell the path from the processes at its ends
RAMP_ROUNDS = 10  # a transfer whose data moved in fewer round trips is mostly TCP's start-up (samples aim for 20)


def from_kernel(row: Row, lim: Limits, rate: float, group: Sequence[Row] = ()) -> Bound | None:
    """Return the bound the kernel's evidence of a row's sockets shows (None without evidence); see the module."""
    tcp, down = row.tcp or {}, row.scenario.direction is Direction.DOWN
    server = None if (tcp.get("server") or {}).get("read_by") else tcp.get("server")  # ss's polls: kept, not judged
    sender, receiver = (server, tcp.get("client")) if down else (tcp.get("client"), server)
    window, whose = (
        (CLIENT_WINDOW, "the ssh client's")
        if down
        else (lim.server_window or CLIENT_WINDOW, f"the {lim.server_product or 'server'}'s")
    )
    if sender:
        side = "sender" + (f" (its socket read by {sender['read_by']})" if sender.get("read_by") else "")
        seen = {
            "side": side,
            "socket": "server" if down else "client",
            "rate_MBps": rate / MB,
            **{k: sender.get(k) for k in EVIDENCE},
        }
        tcp_window = _tcp_window(sender, seen, row, lim, rate, group)
        if tcp_window is not None:
            return tcp_window
        path_rtt = max(float(sender.get("min_rtt_ms") or sender.get("rtt_ms") or 0), 1e-3) / 1e3
        cap = window / path_rtt  # the path's RTT: a busy receiver's late ACKs stretch srtt, not the path
        app_share = sender.get("app_limited_share") or 0
        app = app_share >= HALF
        # at the window per RTT, a sender that ran out of data for a quarter of the polls waited on the window: it
        # sends the window in a burst each round trip, so the flag is up about half the time, polled at random
        if rate >= NEAR_LIMIT * cap and (app or (app_share >= QUARTER and rate <= (1 + TOLERANCE) * cap)):
            return _kernel_bound(
                BoundKind.SSH_WINDOW, cap, rate, seen | {"window_bytes": window, "window_of": whose}, row, group, lim
            )
        delivery = float(sender.get("delivery_max_MBps") or sender.get("delivery_MBps") or 0) * MB
        # the transfer ran at what the path delivered (a lower reading is too coarse to be a limit; a higher one
        # says the path could carry more than the transfer asked of it)
        delivered = rate / (1 + TOLERANCE) <= delivery <= rate / NEAR_LIMIT
        if app_share >= QUARTER and rate >= HALF * cap:  # near the window per RTT and waiting on it at times
            return Bound(BoundKind.UNKNOWN, None, "MB/s", None, seen | {"limited_by": "the window or the path"})
        more = path_rtt < PATH_RTT and delivery > rate / NEAR_LIMIT  # loopback carried far more (9355 MB/s for 431)
        if (path_rtt >= PATH_RTT and delivered) or not (app or more):
            why = "the path: data in flight at the rate the path delivered, no window limiting it"
            return _kernel_bound(
                BoundKind.NETWORK, delivery if delivered else None, rate, seen | {"limited_by": why}, row, group, lim
            )
        carried = f"neither its windows nor the path, which delivered up to {delivery / MB:.0f} MB/s"
        why = "the application (ssh)" if app else carried
        return Bound(BoundKind.UNKNOWN, None, "MB/s", None, seen | {"limited_by": why})
    if receiver:
        return _from_receiver(receiver, row, lim, rate, group, window, whose, down)
    return None


def _tcp_window(
    sender: Mapping[str, Any], seen: dict[str, Any], row: Row, lim: Limits, rate: float, group: Sequence[Row]
) -> Bound | None:
    """Return a `tcp-window` bound when the sender was receive-window- or send-buffer-limited half its busy time."""
    if (sender.get("rwnd_limited_share") or 0) >= HALF:
        rtt = max(float(sender.get("rtt_ms") or 0), 1e-3) / 1e3
        peer = float(sender.get("peer_window_bytes") or 0) / rtt  # the median window: it grows as it is used,
        cap = peer if peer * (1 + TOLERANCE) >= rate else None  # so a median below the rate limits nothing
        return _kernel_bound(
            BoundKind.TCP_WINDOW, cap, rate, seen | {"limited_by": "the receiver's TCP window"}, row, group, lim
        )
    if (sender.get("sndbuf_limited_share") or 0) >= HALF:
        return _kernel_bound(
            BoundKind.TCP_WINDOW, None, rate, seen | {"limited_by": "the sender's send buffer"}, row, group, lim
        )
    return None


def _from_receiver(
    receiver: Mapping[str, Any],
    row: Row,
    lim: Limits,
    rate: float,
    group: Sequence[Row],
    window: int,
    whose: str,
    down: bool,
) -> Bound:
    """Return the bound seen from the receiver's socket alone (a download from a remote host): the channel window
    per RTT, else the path by elimination when both CPUs were measured idle and nothing was throttled."""
    rtt_ms = float(receiver.get("min_rtt_ms") or receiver.get("rcv_rtt_ms") or receiver.get("rtt_ms") or 0)
    seen = {
        "side": "receiver (the sender's socket cannot be read here)",
        "socket": "client" if down else "server",
        "rate_MBps": rate / MB,
        **{k: receiver.get(k) for k in EVIDENCE},
    }
    if rtt_ms > 0 and rate >= NEAR_LIMIT * window / (rtt_ms / 1e3):
        return _kernel_bound(
            BoundKind.SSH_WINDOW,
            window / (rtt_ms / 1e3),
            rate,
            seen | {"window_bytes": window, "window_of": whose},
            row,
            group,
            lim,
        )
    moved = receiver.get("connection_bytes") or receiver.get("bytes_received")  # the whole transfer (evidence
    # stored before session 27 began at the login's end: its bytes_received was)
    rounds = float(moved or 0) / rate / (rtt_ms / 1e3) if rtt_ms > 0 and rate > 0 else None
    if rounds is not None and 0 < rounds < RAMP_ROUNDS:  # nothing is eliminated while the window still grows
        why = f"its data moved in about {rounds:.0f} round trips, too few to tell the path from TCP's start-up"
        return Bound(BoundKind.UNKNOWN, None, "MB/s", None, seen | {"limited_by": why})
    client_busy, server_busy = busy(row, lim, rate)
    held = throttled(row, lim, {}, group) is not None
    near = rtt_ms > 0 and rate >= HALF * window / (rtt_ms / 1e3)  # 50-80 % of the window per RTT: either could bind
    if client_busy is False and server_busy is False and not held and rtt_ms / 1e3 >= PATH_RTT and not near:
        why = (
            "the path, by elimination: neither side's CPU is busy and the rate is below the channel window per "
            f"RTT (a receive-buffer limit would look the same from here: tcp_rmem {receiver.get('tcp_rmem', '?')})"
        )
        return _kernel_bound(BoundKind.NETWORK, None, rate, seen | {"limited_by": why}, row, group, lim)
    return Bound(BoundKind.UNKNOWN, None, "MB/s", None, seen)


EVIDENCE = (
    "rtt_ms",
    "min_rtt_ms",
    "rcv_rtt_ms",
    "cwnd_segments",
    "delivery_MBps",
    "delivery_max_MBps",
    "app_limited_share",
    "moving_polls",
    "rwnd_limited_share",
    "sndbuf_limited_share",
    "retransmits",
    "peer_window_bytes",
    "receive_space_bytes",
    "cc",
    "samples",
)


def _kernel_bound(
    kind: BoundKind,
    cap: float | None,
    rate: float,
    evidence: dict[str, Any],
    row: Row,
    group: Sequence[Row],
    lim: Limits,
) -> Bound:
    """Return a bound the kernel showed, with its limit in MB/s where one can be computed."""
    return Bound(
        kind,
        None if cap is None else cap / MB,
        "MB/s",
        None if not cap else rate / cap,
        evidence,
        remedy(kind, row, group, lim.server_product, lim.aes, lim.elsewhere(row)),
    )
