"""What bounds a measured rate, in the claims vocabulary, with the evidence and the remedy (pure).

A transfer cannot go faster than the link (`network`: its rate), than one channel window per round trip
(`ssh-window`: the receiver's window / RTT: the client's for downloads, the server's for uploads; OpenSSH's is
2 MiB, Dropbear's is its `-W`, TinySSH's 128 KiB), than OpenSSL encrypts that cipher on the slower side under its
limits (`crypto`: `openssl speed`, targets/limits/ceilings.py), or than the CPU share of the side doing the work
(`client-cpu`, `server-cpu`). A rate at 80 % or more of the tightest of the first three is bound by it; a limit
more than TOLERANCE below the rate it should cap is not a limit here and is reported as broken (a `ceiling`
claim), never as the bound. Otherwise a side whose CPU ran at 85 % or more of what it may use (one CPU at most: ssh
and each server session are single-threaded) while the payload moved (its login's CPU left out) is the bound;
otherwise `unknown`. `tcp-window` needs the kernel's evidence of the sockets.

The kernel's evidence (measure/tcpinfo.py; a remote server's socket as `ss` read it over the login) decides where
no setting does, by the sender's socket (the server's for downloads, the client's for uploads): receive-window- or
send-buffer-limited half its busy time -> `tcp-window`; application-limited at 80 % or more of the channel window /
minimum RTT -> `ssh-window`; otherwise busy -> `network`, unless the link sshbench built carries far more. From the
receiver's socket alone it says so. A settings call keeps the kernel's own call beside it (`kernel`).

A remedy never names the row's own choice (a cipher-bound row: the leader when significantly faster). A `tools`
copy is diagnosed against the link, the window and the crypto only (plaintext: the link): its CPU is a tool's and
its ssh's together, two processes a side, which one CPU does not bound."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sshbench.analyse.claims.core import NEAR_LIMIT, TOLERANCE, Claim, ClaimKind, names
from sshbench.analyse.claims.remedies import remedy
from sshbench.analyse.results import GIB, Costs, Row
from sshbench.environment import Environment
from sshbench.model import BoundKind, Direction, Kind
from sshbench.records import StoredScenario
from sshbench.units import format_value

MB = 1e6
CLIENT_WINDOW = 2 * 2**20  # the OpenSSH client's channel window: what a server may send ahead (downloads)
BUSY = 0.85  # a side at 85 % or more of its CPU share is CPU-bound
THROTTLED = 0.2  # a remote session whose cgroup was throttled this share of the transfer is held by its quota
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
    aes: bool | None = None  # the CPU's AES instructions in use (None: unknown; False: absent or masked by --emulate)


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
        return {"kind": self.kind.value, "limit": self.limit, "unit": self.unit, "used": self.used,
                "evidence": dict(self.evidence), "remedy": self.remedy}  # fmt: skip


@dataclass(frozen=True)
class Diagnosis:
    """A row's bound, and the limits found broken on the way (each a `ceiling` claim)."""

    bound: Bound
    broken: tuple[Claim, ...] = ()


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
    if row.scenario.remedy is not None:
        return None  # a `tune` copy timed with its handshake (or over N connections): no one limit caps that
    rate = row.summary.median * MB
    broken, caps = [], []
    for kind, cap, evidence in _caps(row, lim):
        if rate > cap * (1 + TOLERANCE):
            broken.append(_broken(row, kind, cap, evidence))
        else:
            caps.append((kind, cap, evidence))
    base: dict[str, Any] = {"rate_MBps": rate / MB}
    kernel = from_kernel(row, lim, rate, group)
    if kernel is not None:
        base = base | {"kernel": kernel.to_dict()}
    if caps:
        kind, cap, evidence = min(caps, key=lambda c: c[1])
        if rate >= NEAR_LIMIT * cap:
            lifts = remedy(kind, row, group, lim.server_product, lim.aes)
            bound = Bound(kind, cap / MB, "MB/s", rate / cap, base | evidence, lifts)
            return Diagnosis(bound, tuple(broken))
    cpu = _cpu_bound(row, lim, rate, base, group)
    if cpu is not None:
        return Diagnosis(cpu, tuple(broken))
    refused = kernel is not None and kernel.kind is BoundKind.NETWORK and rate < NEAR_LIMIT * (lim.link or 0)  # built
    if kernel is not None and kernel.kind is not BoundKind.UNKNOWN and not refused:
        return Diagnosis(kernel, tuple(broken))
    unknown = base | {"limits_MBps": {k.value: c / MB for k, c, _ in caps}}
    return Diagnosis(Bound(BoundKind.UNKNOWN, None, "MB/s", None, unknown), tuple(broken))


HALF = 0.5  # a socket limited this share of its busy time (or of the polls) is limited by that
QUARTER = 0.25  # app-limited this share of the polls at the channel window per RTT: the window binds
PATH_RTT = 1e-3  # below this RTT (loopback, a fast LAN) the kernel cannot tell the path from the processes at its ends
RAMP_ROUNDS = 10  # a transfer whose data moved in fewer round trips is mostly TCP's start-up (samples aim for 20)


def from_kernel(row: Row, lim: Limits, rate: float, group: Sequence[Row] = ()) -> Bound | None:
    """Return the bound the kernel's evidence of a row's sockets shows (None without evidence); see the module."""
    tcp, down = row.tcp or {}, row.scenario.direction is Direction.DOWN
    server = None if (tcp.get("server") or {}).get("read_by") else tcp.get("server")  # ss's polls: kept, not judged
    sender, receiver = (server, tcp.get("client")) if down else (tcp.get("client"), server)
    window, whose = (CLIENT_WINDOW, "the ssh client's") if down else (lim.server_window or CLIENT_WINDOW,
                                                                      f"the {lim.server_product or 'server'}'s")
    if sender:
        rtt = max(float(sender.get("rtt_ms") or 0), 1e-3) / 1e3
        side = "sender" + (f" (its socket read by {sender['read_by']})" if sender.get("read_by") else "")
        seen = {"side": side, "socket": "server" if down else "client", "rate_MBps": rate / MB,
                **{k: sender.get(k) for k in EVIDENCE}}  # fmt: skip
        if (sender.get("rwnd_limited_share") or 0) >= HALF:
            peer = float(sender.get("peer_window_bytes") or 0) / rtt  # the median window: it grows as it is used,
            cap = peer if peer * (1 + TOLERANCE) >= rate else None  # so a median below the rate limits nothing
            return _kernel_bound(BoundKind.TCP_WINDOW, cap, rate, seen | {"limited_by":
                                 "the receiver's TCP window"}, row, group, lim)  # fmt: skip
        if (sender.get("sndbuf_limited_share") or 0) >= HALF:
            return _kernel_bound(BoundKind.TCP_WINDOW, None, rate, seen | {"limited_by": "the sender's send buffer"},
                                 row, group, lim)  # fmt: skip
        path_rtt = max(float(sender.get("min_rtt_ms") or sender.get("rtt_ms") or 0), 1e-3) / 1e3
        cap = window / path_rtt  # the path's RTT: a busy receiver's late ACKs stretch srtt, not the path
        app_share = sender.get("app_limited_share") or 0
        app = app_share >= HALF
        # at the window per RTT, a sender that ran out of data for a quarter of the polls waited on the window: it
        # sends the window in a burst each round trip, so the flag is up about half the time, polled at random
        if rate >= NEAR_LIMIT * cap and (app or (app_share >= QUARTER and rate <= (1 + TOLERANCE) * cap)):
            return _kernel_bound(BoundKind.SSH_WINDOW, cap, rate, seen | {"window_bytes": window,
                                 "window_of": whose}, row, group, lim)  # fmt: skip
        delivery = float(sender.get("delivery_max_MBps") or sender.get("delivery_MBps") or 0) * MB
        # the transfer ran at what the path delivered (a lower reading is too coarse to be a limit; a higher one
        # says the path could carry more than the transfer asked of it)
        delivered = rate / (1 + TOLERANCE) <= delivery <= rate / NEAR_LIMIT
        if app_share >= QUARTER and rate >= HALF * cap:  # near the window per RTT and waiting on it at times
            return Bound(BoundKind.UNKNOWN, None, "MB/s", None, seen | {"limited_by": "the window or the path"})
        more = path_rtt < PATH_RTT and delivery > rate / NEAR_LIMIT  # loopback carried far more (9355 MB/s for 431)
        if (path_rtt >= PATH_RTT and delivered) or not (app or more):
            why = "the path: data in flight at the rate the path delivered, no window limiting it"
            return _kernel_bound(BoundKind.NETWORK, delivery if delivered else None, rate, seen | {"limited_by": why},
                                 row, group, lim)  # fmt: skip
        carried = f"neither its windows nor the path, which delivered up to {delivery / MB:.0f} MB/s"
        why = "the application (ssh)" if app else carried
        return Bound(BoundKind.UNKNOWN, None, "MB/s", None, seen | {"limited_by": why})
    if receiver:
        return _from_receiver(receiver, row, lim, rate, group, window, whose, down)
    return None


def _from_receiver(receiver: Mapping[str, Any], row: Row, lim: Limits, rate: float, group: Sequence[Row],
                   window: int, whose: str, down: bool) -> Bound:  # fmt: skip
    """Return the bound seen from the receiver's socket alone (a download from a remote host): the channel window
    per RTT, else the path by elimination when both CPUs were measured idle and nothing was throttled."""
    rtt_ms = float(receiver.get("min_rtt_ms") or receiver.get("rcv_rtt_ms") or receiver.get("rtt_ms") or 0)
    seen = {"side": "receiver (the sender's socket cannot be read here)", "socket": "client" if down else "server",
            "rate_MBps": rate / MB, **{k: receiver.get(k) for k in EVIDENCE}}  # fmt: skip
    if rtt_ms > 0 and rate >= NEAR_LIMIT * window / (rtt_ms / 1e3):
        return _kernel_bound(BoundKind.SSH_WINDOW, window / (rtt_ms / 1e3), rate, seen | {"window_bytes": window,
                             "window_of": whose}, row, group, lim)  # fmt: skip
    rounds = float(receiver.get("bytes_received") or 0) / rate / (rtt_ms / 1e3) if rtt_ms > 0 and rate > 0 else None
    if rounds is not None and 0 < rounds < RAMP_ROUNDS:  # nothing is eliminated while the window still grows
        why = f"its data moved in about {rounds:.0f} round trips, too few to tell the path from TCP's start-up"
        return Bound(BoundKind.UNKNOWN, None, "MB/s", None, seen | {"limited_by": why})
    client_busy, server_busy = _busy(row, lim, rate)
    held = _throttled(row, lim, {}, group) is not None
    near = rtt_ms > 0 and rate >= HALF * window / (rtt_ms / 1e3)  # 50-80 % of the window per RTT: either could bind
    if client_busy is False and server_busy is False and not held and rtt_ms / 1e3 >= PATH_RTT and not near:
        why = ("the path, by elimination: neither side's CPU is busy and the rate is below the channel window per "
               f"RTT (a receive-buffer limit would look the same from here: tcp_rmem {receiver.get('tcp_rmem', '?')})")
        return _kernel_bound(BoundKind.NETWORK, None, rate, seen | {"limited_by": why}, row, group, lim)
    return Bound(BoundKind.UNKNOWN, None, "MB/s", None, seen)


EVIDENCE = ("rtt_ms", "min_rtt_ms", "rcv_rtt_ms", "cwnd_segments", "delivery_MBps", "delivery_max_MBps",
            "app_limited_share", "moving_polls", "rwnd_limited_share", "sndbuf_limited_share", "retransmits",
            "peer_window_bytes", "receive_space_bytes", "cc", "samples")  # fmt: skip


def _kernel_bound(kind: BoundKind, cap: float | None, rate: float, evidence: dict[str, Any], row: Row,
                  group: Sequence[Row], lim: Limits) -> Bound:  # fmt: skip
    """Return a bound the kernel showed, with its limit in MB/s where one can be computed."""
    return Bound(kind, None if cap is None else cap / MB, "MB/s", None if not cap else rate / cap, evidence,
                 remedy(kind, row, group, lim.server_product, lim.aes))  # fmt: skip


def _cpu_bound(row: Row, lim: Limits, rate: float, base: dict[str, Any], group: Sequence[Row]) -> Bound | None:
    """Return a CPU bound when a side ran at BUSY or more of its CPU share (SSH transfers only: see above)."""
    costs = row.costs
    if costs is None or row.scenario.kind is not Kind.THROUGHPUT or streams_of(row) > 1:
        return None  # N connections at once: N processes a side, which one CPU does not bound
    held = _throttled(row, lim, base, group)
    if held is not None:
        return held
    for kind, per_gib, share in (
        (BoundKind.SERVER_CPU, costs.server_cpu_gib, _server_share(row, lim)),
        (BoundKind.CLIENT_CPU, costs.client_cpu_gib, lim.client_share),
    ):
        used = _cpus_used(costs, kind, rate)
        if per_gib is not None and used is not None and used >= BUSY * share:
            evidence = base | {"cpu_s_per_GiB": per_gib, "cpus_used": used, "cpu_share": share}
            lifts = remedy(kind, row, group, lim.server_product, lim.aes)
            return Bound(kind, share, "CPU", used / share, evidence, lifts)
    return None


def streams_of(row: Row) -> int:
    """Return how many connections a row's copy used (`tune`'s streams=N; 1 otherwise)."""
    remedy = row.scenario.remedy or ""
    return int(remedy.split("=", 1)[1]) if remedy.startswith("streams=") else 1


def _throttled(row: Row, lim: Limits, base: dict[str, Any], group: Sequence[Row]) -> Bound | None:
    """Return a server-cpu bound when a remote session's cgroup was throttled by its quota for THROTTLED or more of
    the transfer (the quota holds it back in bursts even when its average CPU is low)."""
    session = (row.tcp or {}).get("remote_session") or {}
    held, wall, quota = session.get("throttled"), session.get("wall_s"), session.get("quota")
    if not isinstance(held, int | float) or not isinstance(wall, int | float) or wall <= 0 or held < THROTTLED * wall:
        return None
    evidence = base | {"throttled_s": held, "wall_s": wall, "throttled_share": held / wall, "cpu_share": quota}
    lifts = remedy(BoundKind.SERVER_CPU, row, group, lim.server_product, lim.aes)
    return Bound(BoundKind.SERVER_CPU, quota, "CPU", None, evidence, lifts)


def _server_share(row: Row, lim: Limits) -> float:
    """Return the CPUs the server's session may use: the run's limit, or a remote session's own cgroup quota."""
    quota = ((row.tcp or {}).get("remote_session") or {}).get("quota")
    return min(lim.server_share, float(quota)) if isinstance(quota, int | float) and quota > 0 else lim.server_share


def _cpus_used(costs: Costs, kind: BoundKind, rate: float) -> float | None:
    """Return the CPUs a side used while the payload moved: measured apart from its login's CPU where it was, else
    its CPU per GiB times the rate (runs before schema 8, and a remote session, whose CPU is its command's)."""
    busy, per_gib = ((costs.server_busy, costs.server_cpu_gib) if kind is BoundKind.SERVER_CPU
                     else (costs.client_busy, costs.client_cpu_gib))  # fmt: skip
    return busy if busy is not None else None if per_gib is None else per_gib * rate / GIB


def _busy(row: Row, lim: Limits, rate: float) -> tuple[bool | None, bool | None]:
    """Return whether the client's and the server's CPU were busy (None where not measured)."""
    costs = row.costs
    if costs is None:
        return None, None
    client, server = _cpus_used(costs, BoundKind.CLIENT_CPU, rate), _cpus_used(costs, BoundKind.SERVER_CPU, rate)
    return (None if client is None else client >= BUSY * lim.client_share,
            None if server is None else server >= BUSY * _server_share(row, lim))  # fmt: skip


def _broken(row: Row, kind: BoundKind, cap: float, evidence: dict[str, Any]) -> Claim:
    """Return the claim that a limit lies below the rate it should cap: a broken measurement, not a bound."""
    rate = row.summary.median if row.summary else 0.0
    what = {BoundKind.CRYPTO: "crypto ceiling (openssl speed)", BoundKind.NETWORK: "link rate",
            BoundKind.SSH_WINDOW: "channel window / RTT"}.get(kind, kind.value)  # fmt: skip
    label = row.scenario.metric.labels.name(row.scenario)
    text = (f"{label}: its {what} of {format_value('MB/s', cap / MB, '.3g')} MB/s is below its measured "
            f"{format_value('MB/s', rate, '.3g')} MB/s, so it is not a limit here (more than "
            f"{format_value('share', TOLERANCE)} below the rate): no {kind.value} bound is claimed")  # fmt: skip
    return Claim(ClaimKind.CEILING, label, text, {**evidence, "rate_MBps": rate, "limit_MBps": cap / MB})


def unknown_words(bound: Bound) -> str:
    """Return what an `unknown` bound says: below every limit sshbench knows, and where the kernel saw the sender
    held back by its own application (ssh or sshd writing less than the connection could carry), that its pace is
    the limit (its CPU or its SSH channel window, neither found at its limit here), never a bare "below every limit"
    beside evidence that names one."""
    kernel = bound.evidence.get("kernel")
    seen = kernel.get("evidence", {}) if isinstance(kernel, Mapping) else {}
    by = str(seen.get("limited_by") or "")
    if not by:
        return "below every known limit"
    if str(seen.get("side", "")).startswith("receiver"):
        return f"below every known limit (from the receiver's socket: {by})"
    if by.startswith("the application"):
        return (f"not the path or TCP: the kernel shows the sender limited by {by}, writing less than the "
                "connection could carry, so its own pace bounds the rate (its CPU or the SSH channel window; "
                "neither was found at its limit here)")  # fmt: skip
    return f"below every known limit (the kernel shows the sender limited by {by})"


def describe(bound: Bound) -> str:
    """Return a short label: `network-bound (100 % of 12.5 MB/s)`, `server-cpu-bound (97 % of its CPU share)`."""
    if bound.kind is BoundKind.UNKNOWN:
        return unknown_words(bound)
    held, by = bound.evidence.get("throttled_share"), bound.evidence.get("limited_by")  # where no share is known
    if bound.used is None and isinstance(held, float):
        return f"{bound.kind}-bound (its cgroup's quota held it {format_value('share', held)} of the transfer)"
    if bound.used is None or bound.limit is None:
        return f"{bound.kind}-bound" + (f" (limited by {by})" if by else "")
    limit = "its CPU share" if bound.unit == "CPU" else f"{format_value('MB/s', bound.limit, '.3g')} MB/s"
    if bound.unit == "CPU" and bound.used > 1.05:  # CPU per GiB x rate counts each login's CPU, the rate does not
        return (f"{bound.kind}-bound (all of its CPU share: {format_value('share', bound.used)} of it counting each "
                "sample's login, whose CPU the rate leaves out)")  # fmt: skip
    return f"{bound.kind}-bound ({format_value('share', bound.used)} of {limit})"


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
            text = unknown_words(b) if b.kind is BoundKind.UNKNOWN else f"{b.kind}-bound{at}: {b.remedy}"
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
