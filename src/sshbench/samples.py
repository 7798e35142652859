"""What a measurement gives: one sample of one scenario, successful or not (every sample is stored), and where a
stored run and each of its rows stand (complete, interrupted, incomplete; a row not measurable for a reason of its
own)."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sshbench.model import Scenario


@dataclass(frozen=True)
class Sample:
    """One measurement of one scenario, successful or not; every sample is stored."""

    scenario: Scenario
    round: int  # 0 for warm-up
    warmup: bool
    ok: bool
    value: float | None  # in the scenario's Metric.stored_unit: seconds (latency) or MB/s (throughput)
    wall: float  # seconds from spawn to exit
    nbytes: int | None = None
    client_cpu: float | None = None  # user + system seconds of the ssh client
    client_system: float | None = None  # of which system seconds (None in runs stored before schema 3)
    phases: tuple[tuple[str, float], ...] = ()
    error: str | None = None
    server_cpu: float | None = None  # user + system seconds of every embedded-server process (cgroup)
    client_rss: int | None = None  # peak RSS of the ssh client, bytes
    server_rss: int | None = None  # peak RSS of the server's per-connection processes during the sample, bytes
    tcp: Mapping[str, Any] | None = None  # the kernel's evidence of the transfer's sockets (measure/tcpinfo.py)
    client_cpu_setup: float | None = None  # CPU s before the command was sent (start, login): not the transfer's
    server_cpu_setup: float | None = None  # the same, an embedded server's (a remote session counts its command only)
    wire: Mapping[str, Any] | None = None  # a counted warm-up login's key exchange on the wire (measure/wire.py)

    @property
    def measured(self) -> bool:
        """Return True for a successful, non-warm-up sample with a value (what statistics are taken from)."""
        return self.ok and not self.warmup and self.value is not None


@dataclass(frozen=True)
class WireCount:
    """A counted login's key exchange on the wire (measure/wire.py): bytes client to server and server to client up
    to and including each side's NEWKEYS, and the client's flights that waited for new data from the server (round
    trips; TCP's own handshake not included). Stored as a warm-up sample's `wire`."""

    kex_sent: int
    kex_received: int
    round_trips: int

    def to_json(self) -> dict[str, int]:
        """Return the count as stored."""
        return {"kex_sent": self.kex_sent, "kex_received": self.kex_received, "round_trips": self.round_trips}

    @classmethod
    def read(cls, stored: Mapping[str, Any]) -> WireCount | str:
        """Return a stored count, or why there is none."""
        if "problem" in stored:
            return str(stored["problem"])
        return cls(int(stored["kex_sent"]), int(stored["kex_received"]), int(stored["round_trips"]))


class RunStatus(enum.StrEnum):
    """Where a stored run stands."""

    RUNNING = "running"
    COMPLETE = "complete"
    INTERRUPTED = "interrupted"  # Ctrl-C or SIGTERM: `--resume` finishes it
    INCOMPLETE = "incomplete"  # the --max-time budget ran out before every row had enough samples
    FAILED = "failed"


SKIPPED = "skipped: "  # a row's failure reason that is no failure of the server: the run stays complete


def not_measurable(failure: str | None) -> bool:
    """Return True for a row that could not be measured for a reason of its own (unsupported, or skipped, such as a
    host key your known_hosts lacks), not because something failed."""
    return failure is not None and (failure.startswith("unsupported") or failure.startswith(SKIPPED))


FIXED = "fixed"  # a `tune` copy's phase: its seconds besides moving its bytes at its steady rate (analyse/sizes.py)
