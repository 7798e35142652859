"""What bounds a measured rate: the link, the SSH channel window, the crypto, a side's CPU, or none (pure).

A transfer cannot go faster than the link (its rate), than one channel window per round trip (the
receiver's window / RTT: the client's for downloads, the server's for uploads; OpenSSH's is 2 MiB,
Dropbear's is its `-W`, TinySSH's 128 KiB), than OpenSSL encrypts that cipher on the slower side under
its limits (`openssl speed`, targets/ceilings.py), or than the CPU share of the side doing the work. A rate
within 20 % of the tightest of the first three is bound by it; otherwise a side whose CPU ran at 85 % or
more of what it may use (one CPU at most: ssh and each server session are single-threaded) is.

A `tools` copy is diagnosed against the link, the window and the crypto only (a plaintext copy against the
link only: it has no channel window). Its CPU time is the tool's and its ssh's together (two processes on
each side, e.g. scp and ssh), which one CPU does not bound, and which of the two is busy is not known.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sshbench.analyse.results import GIB, Row
from sshbench.environment import Environment
from sshbench.model import Direction, Kind

MB = 1e6
CLIENT_WINDOW = 2 * 2**20  # the OpenSSH client's channel window: what a server may send ahead (downloads)
NEAR_LIMIT = 0.8  # a rate at 80 % or more of a limit is bound by it
BUSY = 0.85  # a side at 85 % or more of its CPU share is CPU-bound
REMEDIES = {
    "link": "a faster cipher will not help",
    "window": "the cipher hardly matters; what helps: HPN-SSH (large windows), several connections in parallel, "
    "or a larger -W for Dropbear",
    "crypto": "the cipher itself is the limit on this CPU: a faster one for it helps (chacha20-poly1305 without AES "
    "instructions, AES-GCM with them)",
    "client CPU": "a cheaper cipher helps (chacha20-poly1305 without AES instructions, AES-GCM with them)",
    "server CPU": "a cheaper cipher helps (chacha20-poly1305 without AES instructions, AES-GCM with them)",
}


@dataclass(frozen=True)
class Limits:
    """What can bound a transfer in one run (None where unknown or absent)."""

    link: float | None = None  # bytes/s each way
    rtt: float | None = None  # seconds, measured
    server_window: int | None = None
    client_share: float = 1.0  # CPUs the ssh client may use (at most one: it is single-threaded)
    server_share: float = 1.0
    ceilings: Mapping[str, float] = field(default_factory=dict)  # cipher -> MB/s OpenSSL manages on the slower side


@dataclass(frozen=True)
class Bound:
    """What bounds one row: its kind, the limit in MB/s (link, window) and how close the rate came to it."""

    kind: str  # link | window | crypto | client CPU | server CPU
    limit: float | None  # MB/s for link, window and crypto; None for CPU
    used: float  # rate / limit, or CPU used / CPU share


def limits(env: Environment) -> Limits | None:
    """Return the run's limits, or None when nothing constrains it (no emulated link, CPU limit or emulated CPU)."""
    link, embedded = env.link, env.embedded
    share = embedded.cpu_share if embedded else None
    if link is None and share is None and env.client_limit is None and not env.crypto_ceilings:
        return None
    return Limits(
        link=link.rate_bits / 8 if link else None,
        rtt=(link.measured_rtt_s or link.rtt_s) if link else None,
        server_window=embedded.receive_window if embedded else None,
        server_share=min(1.0, share) if share else 1.0,
        client_share=min(1.0, _client_share(env.client_limit)),
        ceilings={c: min(sides.values()) * MB for c, sides in env.crypto_ceilings.items() if sides},
    )


def _client_share(text: str | None) -> float:
    """Return the client's CPU share from its stored description (`50% of one CPU (...)`), 1 when unlimited."""
    if not text:
        return 1.0
    try:
        return float(text.split("%", 1)[0]) / 100
    except ValueError:
        return 1.0


def diagnose(row: Row, lim: Limits) -> Bound | None:
    """Return what bounds a throughput row, or None when no known limit explains its rate."""
    if row.summary is None or row.scenario.kind not in (Kind.THROUGHPUT, Kind.TOOL):
        return None
    rate = row.summary.median * MB
    over_ssh = row.scenario.kind is Kind.THROUGHPUT or row.scenario.cipher is not None  # not a plaintext baseline
    window = CLIENT_WINDOW if row.scenario.direction is Direction.DOWN else lim.server_window
    caps = []
    if lim.link:
        caps.append(("link", lim.link))
    if window and lim.rtt and over_ssh:
        caps.append(("window", window / lim.rtt))
    ceiling = lim.ceilings.get(row.scenario.cipher or "")
    if ceiling:
        caps.append(("crypto", ceiling))
    if caps:
        kind, cap = min(caps, key=lambda c: c[1])
        if rate >= NEAR_LIMIT * cap:
            return Bound(kind, cap / MB, rate / cap)
    costs = row.costs
    if costs is not None and row.scenario.kind is Kind.THROUGHPUT:  # a copy tool's CPU is two processes: see above
        for kind, per_gib, share in (
            ("server CPU", costs.server_cpu_gib, lim.server_share),
            ("client CPU", costs.client_cpu_gib, lim.client_share),
        ):
            if per_gib is not None and per_gib * rate / GIB >= BUSY * share:
                return Bound(kind, None, per_gib * rate / GIB / share)
    return None


def describe(bound: Bound | None) -> str:
    """Return a short label: `link-bound (100 % of 12.5 MB/s)`, `server CPU-bound (97 % of its share)`."""
    if bound is None:
        return "no known limit"
    if bound.limit is not None:
        return f"{bound.kind}-bound ({bound.used:.0%} of {bound.limit:.3g} MB/s)"
    return f"{bound.kind}-bound ({bound.used:.0%} of its CPU share)"


def summary_lines(groups: dict[str, list[Row]], lim: Limits) -> list[str]:
    """Return one line per direction naming what bounds its rows (rows with the same bound and limit together),
    with the remedy for each kind of bound."""
    lines = []
    for group in ("download", "upload", "tool download", "tool upload"):
        rows = [r for r in groups.get(group, []) if r.summary is not None]
        together: dict[tuple[str, str], list[Row]] = {}
        for r in rows:
            bound = diagnose(r, lim)
            if bound is None:
                key = ("", "below every known limit")
            else:
                at = f" at {bound.limit:.3g} MB/s" if bound.limit is not None else ""
                key = (bound.kind, f"{bound.kind}-bound{at}: {REMEDIES[bound.kind]}")
            together.setdefault(key, []).append(r)
        if together:
            every = "every copy" if group.startswith("tool") else "every cipher"
            parts = [
                f"{_who(members, len(rows), every)}{' ' if kind else ': '}{text}"
                for (kind, text), members in together.items()
            ]
            lines.append(f"{group}: " + "; ".join(parts))
    return lines


def _who(rows: Sequence[Row], total: int, every: str) -> str:
    """Name the rows sharing one bound: `every cipher` (or copy), or their names."""
    if len(rows) == total > 1:
        return every
    return ", ".join(r.scenario.metric.labels.name(r.scenario) for r in rows)
