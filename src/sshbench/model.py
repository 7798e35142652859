"""The data model: scenarios to measure, samples taken, and the plan that schedules them."""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass
from typing import Any

AEAD_CIPHERS = frozenset({"chacha20-poly1305@openssh.com", "aes128-gcm@openssh.com", "aes256-gcm@openssh.com"})
STRICT_PROFILE = {
    "Ciphers": "chacha20-poly1305@openssh.com",
    "HostKeyAlgorithms": "ssh-ed25519",
    "KexAlgorithms": "curve25519-sha256",
}
PHASES = ("startup", "tcp", "version", "kex", "auth", "session")


class Kind(enum.StrEnum):
    """What a scenario measures."""

    LATENCY = "latency"
    THROUGHPUT = "throughput"


class Direction(enum.StrEnum):
    """Which way the payload flows."""

    DOWN = "down"  # server -> client
    UP = "up"  # client -> server


def is_aead(cipher: str) -> bool:
    """Return True when the cipher authenticates itself and ignores the negotiated MAC."""
    return cipher in AEAD_CIPHERS


@dataclass(frozen=True)
class Scenario:
    """One configuration to measure: a connection (kex x host key) or a transfer (cipher x MAC x direction)."""

    kind: Kind
    kex: str | None = None  # None: whatever the client's default proposal negotiates
    hostkey: str | None = None
    cipher: str | None = None
    mac: str | None = None
    direction: Direction | None = None
    server: str | None = None  # embedded server name in a `servers` run (not an ssh option)
    profile: str | None = None  # client profile (default / strict) a `servers` latency scenario stands for

    @property
    def key(self) -> str:
        """Return a stable identifier, unique within a run."""
        parts = [self.kind.value]
        for name in ("server", "profile", "kex", "hostkey", "cipher", "mac", "direction"):
            value = getattr(self, name)
            if value is not None:
                parts.append(f"{name}={value}")
        return " ".join(parts)

    @property
    def label(self) -> str:
        """Return a short human label."""
        where = "" if self.server is None else f"{self.server}: "
        if self.kind is Kind.LATENCY:
            if self.profile is not None:
                return f"{where}{self.profile} profile, host key {self.hostkey}"
            return f"{where}{self.kex or 'default kex'} / {self.hostkey or 'default host key'}"
        mac = "" if self.mac is None else f" + {self.mac}"
        return f"{where}{self.cipher}{mac} {self.direction}"

    def ssh_options(self) -> list[str]:
        """Return the `-o` options that pin this scenario's algorithms."""
        pinned = {
            "KexAlgorithms": self.kex,
            "HostKeyAlgorithms": self.hostkey,
            "Ciphers": self.cipher,
            "MACs": self.mac,
        }
        return [arg for opt, v in pinned.items() if v is not None for arg in ("-o", f"{opt}={v}")]

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict of the fields that are set."""
        return {k: str(v) for k, v in dataclasses.asdict(self).items() if v is not None}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Scenario:
        """Rebuild a scenario stored with `to_dict`."""
        direction = data.get("direction")
        return cls(
            kind=Kind(data["kind"]),
            kex=data.get("kex"),
            hostkey=data.get("hostkey"),
            cipher=data.get("cipher"),
            mac=data.get("mac"),
            direction=Direction(direction) if direction else None,
            server=data.get("server"),
            profile=data.get("profile"),
        )


@dataclass(frozen=True)
class Sample:
    """One measurement of one scenario, successful or not; every sample is stored."""

    scenario: Scenario
    round: int  # 0 for warm-up
    warmup: bool
    ok: bool
    value: float | None  # seconds (latency) or MB/s (throughput)
    wall: float  # seconds from spawn to exit
    nbytes: int | None = None
    client_cpu: float | None = None  # user + system seconds of the ssh client
    phases: tuple[tuple[str, float], ...] = ()
    error: str | None = None
    server_cpu: float | None = None  # user + system seconds of every embedded-server process (cgroup)
    client_rss: int | None = None  # peak RSS of the ssh client, bytes
    server_rss: int | None = None  # peak RSS of the server's per-connection processes during the sample, bytes


@dataclass(frozen=True)
class Plan:
    """How many samples to take and when to stop."""

    warmup: int = 1
    min_rounds: int = 6
    max_rounds: int = 20
    ci_target: float = 0.05  # relative half-width of the median's 95 % CI
    max_time: float | None = None  # seconds for the whole measurement


@dataclass(frozen=True)
class MemoryRecord:
    """Memory of one process role (or the client) of one server in one state, summed over its processes."""

    server: str
    state: str  # idle | session | transfer
    role: str  # listener | monitor | pre-auth | session | command | client
    processes: int
    vsz: int  # bytes
    rss: int  # bytes
    pss: int | None  # bytes (None when /proc/PID/smaps_rollup is not readable)
