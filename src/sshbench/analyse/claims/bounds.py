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
from dataclasses import dataclass
from typing import Any

from sshbench.analyse.claims.core import BRIEF_NAMES, NEAR_LIMIT, TOLERANCE, Claim, ClaimKind, names
from sshbench.analyse.claims.cpu import cpu_bound
from sshbench.analyse.claims.kernel import from_kernel
from sshbench.analyse.claims.limits import MB, Bound, Limits, has_evidence, limits, rate_caps
from sshbench.analyse.claims.remedies import remedy
from sshbench.analyse.results import Row
from sshbench.model import BoundKind, Kind
from sshbench.units import format_value

__all__ = ["GROUPS", "Bound", "Diagnosis", "Limits", "bound_claims", "describe", "diagnose", "has_evidence", "limits"]

GROUPS = ("download", "upload", "tool download", "tool upload")


@dataclass(frozen=True)
class Diagnosis:
    """A row's bound, and the limits found broken on the way (each a `ceiling` claim)."""

    bound: Bound
    broken: tuple[Claim, ...] = ()


def diagnose(row: Row, lim: Limits, group: Sequence[Row] = ()) -> Diagnosis | None:
    """Return what bounds a throughput or copy row (`unknown` when no known limit explains it), with the limits
    found broken; None for rows without a median. `group`: the row's result group, for the remedy."""
    if row.summary is None or row.scenario.kind not in (Kind.THROUGHPUT, Kind.TOOL):
        return None
    if row.scenario.remedy is not None:
        return None  # a `tune` copy timed with its handshake (or over N connections): no one limit caps that
    rate = row.summary.median * MB
    broken, caps = [], []
    for kind, cap, evidence in rate_caps(row, lim):
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
            lifts = remedy(kind, row, group, lim.server_product, lim.aes, lim.elsewhere(row))
            bound = Bound(kind, cap / MB, "MB/s", rate / cap, base | evidence, lifts)
            return Diagnosis(bound, tuple(broken))
    cpu = cpu_bound(row, lim, rate, base, group)
    if cpu is not None:
        return Diagnosis(cpu, tuple(broken))
    refused = kernel is not None and kernel.kind is BoundKind.NETWORK and rate < NEAR_LIMIT * (lim.link or 0)  # built
    if kernel is not None and kernel.kind is not BoundKind.UNKNOWN and not refused:
        return Diagnosis(kernel, tuple(broken))
    unknown = base | {"limits_MBps": {k.value: c / MB for k, c, _ in caps}}
    return Diagnosis(Bound(BoundKind.UNKNOWN, None, "MB/s", None, unknown), tuple(broken))


def _broken(row: Row, kind: BoundKind, cap: float, evidence: dict[str, Any]) -> Claim:
    """Return the claim that a limit lies below the rate it should cap: a broken measurement, not a bound."""
    rate = row.summary.median if row.summary else 0.0
    what = {
        BoundKind.CRYPTO: "crypto ceiling (openssl speed)",
        BoundKind.NETWORK: "link rate",
        BoundKind.SSH_WINDOW: "channel window / RTT",
    }.get(kind, kind.value)
    label = row.scenario.metric.labels.name(row.scenario)
    text = (
        f"{label}: its {what} of {format_value('MB/s', cap / MB, '.3g')} MB/s is below its measured "
        f"{format_value('MB/s', rate, '.3g')} MB/s, so it is not a limit here (more than "
        f"{format_value('share', TOLERANCE)} below the rate): no {kind.value} bound is claimed"
    )
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
        return (
            f"not the path or TCP: the kernel shows the sender limited by {by}, writing less than the "
            "connection could carry, so its own pace bounds the rate (its CPU or the SSH channel window; "
            "neither was found at its limit here)"
        )
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
        return (
            f"{bound.kind}-bound (all of its CPU share: {format_value('share', bound.used)} of it counting each "
            "sample's login, whose CPU the rate leaves out)"
        )
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
            parts = [
                f"{_who([r for r, _ in members], len(rows), every)}: {text}" for (_, text), members in together.items()
            ]
            evidence = {
                "rows": [
                    {"row": r.scenario.metric.labels.name(r.scenario), "bound": b.to_dict()}
                    for members in together.values()
                    for r, b in members
                ]
            }
            short = _brief(prefix + group, rows, together, every)
            text = f"{prefix}{group}: " + "; ".join(parts)
            out.append(Claim(ClaimKind.BOUND, f"{prefix}{group}", text, evidence, short))
    return out + broken


PLURAL = {"every cipher": "ciphers", "every copy": "copies"}  # rows named by count on a brief screen
BRIEF_BOUNDS = 2  # bound lines a brief screen gives a group in full: past that, the leader's and the rest counted


def _brief(
    group: str, rows: Sequence[Row], together: Mapping[tuple[str, str], Sequence[tuple[Row, Bound]]], every: str
) -> str:
    """Return a group's bounds for a brief screen: a line per bound (its rows counted past BRIEF_NAMES), or, past
    BRIEF_BOUNDS lines, the leader's bound and the other rows counted."""
    lines = [
        f"{group}, {_counted([r for r, _ in members], len(rows), every)}: {text}"
        for (_, text), members in together.items()
    ]
    if len(lines) <= BRIEF_BOUNDS:
        return "\n".join(lines)
    first = next(i for i, members in enumerate(together.values()) if any(r is rows[0] for r, _ in members))
    others = sum(len(members) for i, members in enumerate(together.values()) if i != first)
    return f"{lines[first]}\n{group}: {others} other row(s) bounded otherwise (--details says by what)"


def _counted(rows: Sequence[Row], total: int, every: str) -> str:
    """Name the rows sharing one bound on a brief screen: `every cipher`, up to BRIEF_NAMES names, else a count."""
    if len(rows) == total > 1 or len(rows) <= BRIEF_NAMES:
        return _who(rows, total, every)
    return f"{len(rows)} {PLURAL[every]}"


def _who(rows: Sequence[Row], total: int, every: str) -> str:
    """Name the rows sharing one bound: `every cipher` (or copy), or their names."""
    if len(rows) == total > 1:
        return every
    return names([r.scenario.metric.labels.name(r.scenario) for r in rows], most=12)
