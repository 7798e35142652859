"""What a side's CPU says of a transfer (pure): the CPUs each side used while the payload moved, measured apart
from its login where it was, against the share it may use; a remote session held back by its cgroup's quota."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sshbench.analyse.claims.limits import Bound, Limits
from sshbench.analyse.claims.remedies import remedy
from sshbench.analyse.results import GIB, Costs, Row
from sshbench.model import BoundKind, Kind

BUSY = 0.85  # a side at 85 % or more of its CPU share is CPU-bound
THROTTLED = 0.2  # a remote session whose cgroup was throttled this share of the transfer is held by its quota


def cpu_bound(row: Row, lim: Limits, rate: float, base: dict[str, Any], group: Sequence[Row]) -> Bound | None:
    """Return a CPU bound when a side ran at BUSY or more of its CPU share (SSH transfers only: see above)."""
    costs = row.costs
    if costs is None or row.scenario.kind is not Kind.THROUGHPUT or streams_of(row) > 1:
        return None  # N connections at once: N processes a side, which one CPU does not bound
    held = throttled(row, lim, base, group)
    if held is not None:
        return held
    for kind, per_gib, share in (
        (BoundKind.SERVER_CPU, costs.server_cpu_gib, _server_share(row, lim)),
        (BoundKind.CLIENT_CPU, costs.client_cpu_gib, lim.client_share),
    ):
        used = _cpus_used(costs, kind, rate)
        if per_gib is not None and used is not None and used >= BUSY * share:
            evidence = base | {"cpu_s_per_GiB": per_gib, "cpus_used": used, "cpu_share": share}
            lifts = remedy(kind, row, group, lim.server_product, lim.aes, lim.elsewhere(row))
            return Bound(kind, share, "CPU", used / share, evidence, lifts)
    return None


def streams_of(row: Row) -> int:
    """Return how many connections a row's copy used (`tune`'s streams=N; 1 otherwise)."""
    return row.scenario.remedy.connections if row.scenario.remedy else 1


def throttled(row: Row, lim: Limits, base: dict[str, Any], group: Sequence[Row]) -> Bound | None:
    """Return a server-cpu bound when a remote session's cgroup was throttled by its quota for THROTTLED or more of
    the transfer (the quota holds it back in bursts even when its average CPU is low)."""
    session = (row.tcp or {}).get("remote_session") or {}
    held, wall, quota = session.get("throttled"), session.get("wall_s"), session.get("quota")
    if not isinstance(held, int | float) or not isinstance(wall, int | float) or wall <= 0 or held < THROTTLED * wall:
        return None
    evidence = base | {"throttled_s": held, "wall_s": wall, "throttled_share": held / wall, "cpu_share": quota}
    lifts = remedy(BoundKind.SERVER_CPU, row, group, lim.server_product, lim.aes, lim.elsewhere(row))
    return Bound(BoundKind.SERVER_CPU, quota, "CPU", None, evidence, lifts)


def _server_share(row: Row, lim: Limits) -> float:
    """Return the CPUs the server's session may use: the run's limit, or a remote session's own cgroup quota."""
    quota = ((row.tcp or {}).get("remote_session") or {}).get("quota")
    return min(lim.server_share, float(quota)) if isinstance(quota, int | float) and quota > 0 else lim.server_share


def _cpus_used(costs: Costs, kind: BoundKind, rate: float) -> float | None:
    """Return the CPUs a side used while the payload moved: measured apart from its login's CPU where it was, else
    its CPU per GiB times the rate (runs before schema 8, and a remote session, whose CPU is its command's)."""
    busy, per_gib = (
        (costs.server_busy, costs.server_cpu_gib)
        if kind is BoundKind.SERVER_CPU
        else (costs.client_busy, costs.client_cpu_gib)
    )
    return busy if busy is not None else None if per_gib is None else per_gib * rate / GIB


def busy(row: Row, lim: Limits, rate: float) -> tuple[bool | None, bool | None]:
    """Return whether the client's and the server's CPU were busy (None where not measured)."""
    costs = row.costs
    if costs is None:
        return None, None
    client, server = _cpus_used(costs, BoundKind.CLIENT_CPU, rate), _cpus_used(costs, BoundKind.SERVER_CPU, rate)
    return (
        None if client is None else client >= BUSY * lim.client_share,
        None if server is None else server >= BUSY * _server_share(row, lim),
    )
