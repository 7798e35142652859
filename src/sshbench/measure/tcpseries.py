"""A socket's TCP state over a sample: one reading (`Reading`, what sock_diag or TCP_INFO said at one instant) and
the series a watcher keeps of them (`Series`: first and last, the values a summary needs, points for the report)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SERIES_POINTS = 60  # readings kept per socket and sample for the report's time series


@dataclass(frozen=True)
class Reading:
    """One socket's TCP state at one instant: its ports, inode, congestion control and tcp_info fields."""

    local_port: int
    peer_port: int
    inode: int
    cc: str
    info: Mapping[str, int]
    family: int = 0  # with `sockid`, what asks the kernel for this one socket again (0: not from sock_diag)
    sockid: bytes = b""  # struct inet_diag_sockid as the kernel sent it (ports, addresses, interface, cookie)


@dataclass
class Series:
    """One socket's readings over a sample (mutable, private to the watcher)."""

    first: Reading
    last: Reading
    rtt_us: list[int] = field(default_factory=list)
    cwnd: list[int] = field(default_factory=list)
    delivery: list[int] = field(default_factory=list)
    snd_wnd: list[int] = field(default_factory=list)
    app_limited: int = 0
    moving: int = 0  # polls during which bytes moved since the previous one
    polls: int = 0
    moved: bool = False  # bytes moved at the last poll
    started: float = field(default_factory=time.monotonic)
    points: list[tuple[float, int, int, int]] = field(default_factory=list)  # (s, delivery B/s, rtt us, cwnd)

    def add(self, r: Reading, mid: bool = False) -> None:
        """Add one reading (the app-limited flag and the delivery rate count only while bytes move: since the last
        reading, or, `mid`, because it was taken mid-transfer)."""
        info, before = r.info, self.last.info
        total = info.get("bytes_acked", 0) + info.get("bytes_received", 0)
        moved = mid or total > before.get("bytes_acked", 0) + before.get("bytes_received", 0)
        self.last, self.polls, self.moved = r, self.polls + 1, moved
        self.rtt_us.append(info.get("rtt_us", 0))
        self.cwnd.append(info.get("snd_cwnd", 0))
        self.snd_wnd.append(info.get("snd_wnd", 0))
        self.points.append(
            (
                time.monotonic() - self.started,
                info.get("delivery_rate", 0),
                info.get("rtt_us", 0),
                info.get("snd_cwnd", 0),
            )
        )
        if moved:
            self.moving += 1
            self.delivery.append(info.get("delivery_rate", 0))
            self.app_limited += info.get("app_limited", 0)

    def summary(self) -> dict[str, Any]:
        """Return the compact summary a sample stores: medians over the polls, totals over the sample."""
        a, b = self.first.info, self.last.info

        def delta(key: str) -> int:
            """Return how much a cumulative counter grew during the sample."""
            return max(b.get(key, 0) - a.get(key, 0), 0)

        busy = delta("busy_us")
        return {
            "cc": self.last.cc,
            "polls": self.polls,
            "rtt_ms": statistics.median(self.rtt_us) / 1e3,
            "min_rtt_ms": b.get("min_rtt_us", 0) / 1e3,
            "cwnd_segments": statistics.median(self.cwnd),
            "mss_bytes": b.get("snd_mss", 0),
            "delivery_MBps": statistics.median(self.delivery) / 1e6 if self.delivery else 0.0,
            "delivery_max_MBps": max(self.delivery) / 1e6 if self.delivery else 0.0,
            "app_limited_share": self.app_limited / self.moving if self.moving else None,
            "moving_polls": self.moving,
            "busy_ms": busy / 1e3,
            "rwnd_limited_share": delta("rwnd_limited_us") / busy if busy else None,
            "sndbuf_limited_share": delta("sndbuf_limited_us") / busy if busy else None,
            "retransmits": delta("total_retrans"),
            "peer_window_bytes": statistics.median(self.snd_wnd),
            "receive_space_bytes": b.get("rcv_space", 0),
            "rcv_rtt_ms": b.get("rcv_rtt_us", 0) / 1e3,
            "bytes_acked": delta("bytes_acked"),
            "bytes_received": delta("bytes_received"),
            "connection_bytes": b.get("bytes_acked", 0) + b.get("bytes_received", 0),  # both ways since the connect:
            # the transfer's whole length, where the totals above are those of the readings' span (its timed part)
            "series": self.series(),
        }

    def series(self) -> dict[str, list[float]]:
        """Return the readings over time for the report (at most SERIES_POINTS, evenly picked): seconds since the
        first reading, delivery rate MB/s, smoothed RTT ms, cwnd segments."""
        step = max(1, -(-len(self.points) // SERIES_POINTS))
        picked = self.points[::step]
        return {
            "t_s": [round(p[0], 3) for p in picked],
            "delivery_MBps": [round(p[1] / 1e6, 3) for p in picked],
            "rtt_ms": [round(p[2] / 1e3, 3) for p in picked],
            "cwnd_segments": [p[3] for p in picked],
        }
