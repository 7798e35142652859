"""The settings that can bound a run's transfers (pure): its link, the receiver's channel window per RTT and the
crypto ceiling of each cipher, read from the run's environment; a row's bound as the claims carry it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sshbench.analyse.results import Row
from sshbench.environment import Environment
from sshbench.model import BoundKind, Direction, Kind
from sshbench.records import StoredScenario

MB = 1e6
CLIENT_WINDOW = 2 * 2**20  # the OpenSSH client's channel window: what a server may send ahead (downloads)


@dataclass(frozen=True)
class Limits:
    """What can bound a transfer in one run (None where unknown or absent)."""

    link: float | None = None  # bytes/s each way
    rtt: float | None = None  # seconds, measured
    server_window: int | None = None
    server_product: str = ""  # whose window bounds uploads (OpenSSH, Dropbear, TinySSH)
    client_share: float = 1.0  # CPUs the ssh client may use (at most one: it is single-threaded)
    server_share: float = 1.0
    ceilings: Mapping[str, float] = field(default_factory=dict)  # cipher -> bytes/s OpenSSL manages on the slower side
    aes: bool | None = None  # the CPU's AES instructions in use (None: unknown; False: absent or masked by --emulate)
    peers: Mapping[str, tuple[str, float, str]] = field(default_factory=dict)  # direction -> the fastest server
    # measured beside this one on this CPU (a `servers` run): its name, median MB/s and row

    def elsewhere(self, row: Row) -> str:
        """Return, for a row, the server beside it that was faster on this CPU in its direction, in words ("": none
        was, or this is no `servers` run); medians of separate servers, not a paired verdict."""
        found = self.peers.get(row.scenario.direction.value if row.scenario.direction else "")
        if found is None or row.summary is None or found[1] <= row.summary.median * 1.1:
            return ""
        name, rate, label = found
        return f"{name} did {rate:.0f} MB/s ({label}) beside it, on this CPU"


@dataclass(frozen=True)
class Bound:
    """What bounds one row: kind, limit (MB/s, or CPUs), how much of it the row used, and what decided it."""

    kind: BoundKind
    limit: float | None
    unit: str  # MB/s | CPU
    used: float | None  # rate / limit, or CPU used / CPU share
    evidence: Mapping[str, Any]
    remedy: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form: kind, limit, unit, used, evidence, remedy."""
        return {
            "kind": self.kind.value,
            "limit": self.limit,
            "unit": self.unit,
            "used": self.used,
            "evidence": dict(self.evidence),
            "remedy": self.remedy,
        }


def has_evidence(stored: Sequence[StoredScenario]) -> bool:
    """Return True when some sample of the run holds the kernel's evidence of its sockets."""
    return any(s.tcp for st in stored for s in st.samples)


def limits(env: Environment, evidence: bool = False) -> Limits | None:
    """Return the run's limits, or None when nothing constrains it (no emulated link, CPU limit or emulated CPU)
    and no sample holds the kernel's evidence (`evidence`)."""
    link, embedded = env.link, env.embedded
    share = embedded.cpu_share if embedded else None
    if link is None and share is None and env.client_limit is None and not env.crypto_ceilings and not evidence:
        return None
    return Limits(
        link=link.rate_bits / 8 if link else None,
        rtt=(link.measured_rtt_s or link.rtt_s) if link else None,
        server_window=embedded.receive_window if embedded else None,
        server_product=embedded.product if embedded else "",
        server_share=min(1.0, share) if share else 1.0,
        client_share=min(1.0, _client_share(env.client_limit)),
        ceilings={c: min(sides.values()) * MB for c, sides in env.crypto_ceilings.items() if sides},
        aes=env.aes_in_use(),
    )


def _client_share(text: str | None) -> float:
    """Return the client's CPU share from its stored description (`50% of one CPU (...)`), 1 when unlimited."""
    head = (text or "").split("%", 1)[0]
    return float(head) / 100 if head.replace(".", "", 1).isdigit() else 1.0


def rate_caps(row: Row, lim: Limits) -> list[tuple[BoundKind, float, dict[str, Any]]]:
    """Return the rate limits that apply to a row: (kind, bytes/s, evidence)."""
    sc = row.scenario
    over_ssh = sc.kind is Kind.THROUGHPUT or sc.cipher is not None  # not a plaintext baseline
    down = sc.direction is Direction.DOWN
    window = CLIENT_WINDOW if down else lim.server_window
    caps: list[tuple[BoundKind, float, dict[str, Any]]] = []
    if lim.link:
        caps.append((BoundKind.NETWORK, lim.link, {"link_MBps": lim.link / MB}))
    if window and lim.rtt and over_ssh:
        whose = "the ssh client's" if down else f"the {lim.server_product or 'server'}'s"
        caps.append(
            (
                BoundKind.SSH_WINDOW,
                window / lim.rtt,
                {"window_bytes": window, "window_of": whose, "rtt_ms": lim.rtt * 1e3},
            )
        )
    ceiling = lim.ceilings.get(sc.cipher or "")
    if ceiling and over_ssh:
        caps.append((BoundKind.CRYPTO, ceiling, {"openssl_speed_MBps": ceiling / MB, "cipher": sc.cipher}))
    return caps
