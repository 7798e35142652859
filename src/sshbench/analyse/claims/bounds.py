"""What bounds a measured rate, in the claims vocabulary, with the evidence and the remedy (pure).

A transfer cannot go faster than the link (`network`: its rate), than one channel window per round trip
(`ssh-window`: the receiver's window / RTT: the client's for downloads, the server's for uploads; OpenSSH's is
2 MiB, Dropbear's is its `-W`, TinySSH's 128 KiB), than OpenSSL encrypts that cipher on the slower side under its
limits (`crypto`: `openssl speed`, targets/limits/ceilings.py), or than the CPU share of the side doing the work
(`client-cpu`, `server-cpu`). A rate at 80 % or more of the tightest of the first three is bound by it; a limit
more than TOLERANCE below the rate it should cap is not a limit here and is reported as broken (a `ceiling`
claim), never as the bound. Otherwise a side whose CPU ran at 85 % or more of what it may use (one CPU at most: ssh
and each server session are single-threaded) is the bound; otherwise `unknown`. `tcp-window` needs the kernel's
evidence of the sockets, which these runs do not hold yet.

A remedy never names the row's own choice: for a cipher-bound row it names the group's leader when the row is
significantly slower than it, and says that no cipher measured here is faster otherwise.

A `tools` copy is diagnosed against the link, the window and the crypto only (a plaintext copy against the link
only: it has no channel window). Its CPU time is the tool's and its ssh's together (two processes on each side,
e.g. scp and ssh), which one CPU does not bound, and which of the two is busy is not known.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sshbench.analyse.claims.core import NEAR_LIMIT, TOLERANCE, BoundKind, Claim, ClaimKind, names
from sshbench.analyse.results import GIB, Row
from sshbench.environment import Environment
from sshbench.model import Direction, Kind
from sshbench.ratios import Standing
from sshbench.units import format_value

MB = 1e6
CLIENT_WINDOW = 2 * 2**20  # the OpenSSH client's channel window: what a server may send ahead (downloads)
BUSY = 0.85  # a side at 85 % or more of its CPU share is CPU-bound
GROUPS = ("download", "upload", "tool download", "tool upload")


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


@dataclass(frozen=True)
class Bound:
    """What bounds one row: its kind, the limit (MB/s, or CPUs for a CPU bound), how much of it the row used, and
    the numbers that decided it."""

    kind: BoundKind
    limit: float | None
    unit: str  # MB/s | CPU
    used: float | None  # rate / limit, or CPU used / CPU share
    evidence: Mapping[str, Any]
    remedy: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form: kind, limit, unit, used, evidence, remedy."""
        return {"kind": self.kind.value, "limit": self.limit, "unit": self.unit, "used": self.used,
                "evidence": dict(self.evidence), "remedy": self.remedy}  # fmt: skip


@dataclass(frozen=True)
class Diagnosis:
    """A row's bound, and the limits found broken on the way (each a `ceiling` claim)."""

    bound: Bound
    broken: tuple[Claim, ...] = ()


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
        server_product=embedded.product if embedded else "",
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


def _caps(row: Row, lim: Limits) -> list[tuple[BoundKind, float, dict[str, Any]]]:
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
        caps.append((BoundKind.SSH_WINDOW, window / lim.rtt,
                     {"window_bytes": window, "window_of": whose, "rtt_ms": lim.rtt * 1e3}))  # fmt: skip
    ceiling = lim.ceilings.get(sc.cipher or "")
    if ceiling and over_ssh:
        caps.append((BoundKind.CRYPTO, ceiling, {"openssl_speed_MBps": ceiling / MB, "cipher": sc.cipher}))
    return caps


def diagnose(row: Row, lim: Limits, group: Sequence[Row] = ()) -> Diagnosis | None:
    """Return what bounds a throughput or copy row (`unknown` when no known limit explains it), with the limits
    found broken; None for rows without a median. `group`: the row's result group, for the remedy."""
    if row.summary is None or row.scenario.kind not in (Kind.THROUGHPUT, Kind.TOOL):
        return None
    rate = row.summary.median * MB
    broken, caps = [], []
    for kind, cap, evidence in _caps(row, lim):
        if rate > cap * (1 + TOLERANCE):
            broken.append(_broken(row, kind, cap, evidence))
        else:
            caps.append((kind, cap, evidence))
    base = {"rate_MBps": rate / MB}
    if caps:
        kind, cap, evidence = min(caps, key=lambda c: c[1])
        if rate >= NEAR_LIMIT * cap:
            bound = Bound(kind, cap / MB, "MB/s", rate / cap, base | evidence, remedy(kind, row, group, lim))
            return Diagnosis(bound, tuple(broken))
    cpu = _cpu_bound(row, lim, rate, base, group)
    if cpu is not None:
        return Diagnosis(cpu, tuple(broken))
    considered = {k.value: c / MB for k, c, _ in caps}
    return Diagnosis(Bound(BoundKind.UNKNOWN, None, "MB/s", None, base | {"limits_MBps": considered}), tuple(broken))


def _cpu_bound(row: Row, lim: Limits, rate: float, base: dict[str, Any], group: Sequence[Row]) -> Bound | None:
    """Return a CPU bound when a side ran at BUSY or more of its CPU share (SSH transfers only: see above)."""
    costs = row.costs
    if costs is None or row.scenario.kind is not Kind.THROUGHPUT:
        return None
    for kind, per_gib, share in (
        (BoundKind.SERVER_CPU, costs.server_cpu_gib, lim.server_share),
        (BoundKind.CLIENT_CPU, costs.client_cpu_gib, lim.client_share),
    ):
        if per_gib is not None and per_gib * rate / GIB >= BUSY * share:
            used = per_gib * rate / GIB
            evidence = base | {"cpu_s_per_GiB": per_gib, "cpus_used": used, "cpu_share": share}
            return Bound(kind, share, "CPU", used / share, evidence, remedy(kind, row, group, lim))
    return None


def _broken(row: Row, kind: BoundKind, cap: float, evidence: dict[str, Any]) -> Claim:
    """Return the claim that a limit lies below the rate it should cap: a broken measurement, not a bound."""
    rate = row.summary.median if row.summary else 0.0
    what = {BoundKind.CRYPTO: "crypto ceiling (openssl speed)", BoundKind.NETWORK: "link rate",
            BoundKind.SSH_WINDOW: "channel window / RTT"}.get(kind, kind.value)  # fmt: skip
    label = row.scenario.metric.labels.name(row.scenario)
    text = (
        f"{label}: its {what} of {format_value('MB/s', cap / MB, '.3g')} MB/s is below its measured "
        f"{format_value('MB/s', rate, '.3g')} MB/s, so it is not a limit here (more than "
        f"{format_value('share', TOLERANCE)} below the rate): no {kind.value} bound is claimed"
    )
    return Claim(ClaimKind.CEILING, label, text, {**evidence, "rate_MBps": rate, "limit_MBps": cap / MB})


def remedy(kind: BoundKind, row: Row, group: Sequence[Row], lim: Limits) -> str:
    """Return what would lift a bound, never the row's own choice."""
    if kind is BoundKind.NETWORK:
        return "the path is the limit: a faster cipher will not help"
    if kind is BoundKind.SSH_WINDOW:
        if row.scenario.direction is not Direction.DOWN and lim.server_product == "Dropbear":
            return "a larger -W for Dropbear, HPN-SSH's larger windows, or several connections in parallel"
        return "the cipher hardly matters; what helps: HPN-SSH's larger windows, or several connections in parallel"
    return _faster_choice(row, group)


def _faster_choice(row: Row, group: Sequence[Row]) -> str:
    """Return the cipher remedy for a CPU- or crypto-bound row: the group's leader if this row is significantly
    slower than it, else that no cipher measured here is faster."""
    leader = next((r for r in group if r.standing is Standing.LEADER), None)
    if leader is not None and leader is not row and row.standing is Standing.SLOWER and leader.summary:
        metric = leader.scenario.metric
        name = metric.labels.name(leader.scenario)
        return f"a faster cipher measured here helps: {name} ({metric.format(leader.summary.median)} {metric.unit})"
    return "no cipher measured here is significantly faster: only a faster CPU (or one with AES instructions) helps"


def describe(bound: Bound) -> str:
    """Return a short label: `network-bound (100 % of 12.5 MB/s)`, `server-cpu-bound (97 % of its CPU share)`."""
    if bound.kind is BoundKind.UNKNOWN:
        return "below every known limit"
    if bound.unit == "CPU":
        return f"{bound.kind}-bound ({format_value('share', bound.used or 0)} of its CPU share)"
    limit = format_value("MB/s", bound.limit or 0, ".3g")
    return f"{bound.kind}-bound ({format_value('share', bound.used or 0)} of {limit} MB/s)"


def bound_claims(groups: Mapping[str, Sequence[Row]], lim: Limits, prefix: str = "") -> list[Claim]:
    """Return one claim per result group naming what bounds its rows (rows with the same bound, limit and remedy
    together), then every broken limit found on the way."""
    out: list[Claim] = []
    broken: list[Claim] = []
    for group in GROUPS:
        rows = [r for r in groups.get(group, []) if r.summary is not None]
        together: dict[tuple[str, str], list[tuple[Row, Bound]]] = {}
        for r in rows:
            found = diagnose(r, lim, groups.get(group, []))
            if found is None:
                continue
            broken += found.broken
            b = found.bound
            at = "" if b.unit == "CPU" or b.limit is None else f" at {format_value('MB/s', b.limit, '.3g')} MB/s"
            text = "below every known limit" if b.kind is BoundKind.UNKNOWN else f"{b.kind}-bound{at}: {b.remedy}"
            together.setdefault((b.kind.value, text), []).append((r, b))
        if together:
            every = "every copy" if group.startswith("tool") else "every cipher"
            parts = [f"{_who([r for r, _ in members], len(rows), every)}: {text}" for (_, text), members in
                     together.items()]  # fmt: skip
            evidence = {"rows": [{"row": r.scenario.metric.labels.name(r.scenario), "bound": b.to_dict()}
                                 for members in together.values() for r, b in members]}  # fmt: skip
            out.append(Claim(ClaimKind.BOUND, f"{prefix}{group}", f"{prefix}{group}: " + "; ".join(parts), evidence))
    return out + broken


def _who(rows: Sequence[Row], total: int, every: str) -> str:
    """Name the rows sharing one bound: `every cipher` (or copy), or their names."""
    if len(rows) == total > 1:
        return every
    return names([r.scenario.metric.labels.name(r.scenario) for r in rows], most=12)
