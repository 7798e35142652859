"""What lifts a bound, in words: never the row's own choice (a cipher-bound row is pointed at the group's leader only
when that is significantly faster); a server whose window an option sets is named with that option (products.py)."""

from __future__ import annotations

from collections.abc import Sequence

from sshbench import products
from sshbench.analyse.results import Row
from sshbench.model import BoundKind, Direction
from sshbench.ratios import Standing


def remedy(
    kind: BoundKind,
    row: Row,
    group: Sequence[Row],
    server_product: str = "",
    aes: bool | None = None,
    elsewhere: str = "",
) -> str:
    """Return what would lift a bound, never the row's own choice (in a `tune` run: its remedies, measured);
    `server_product`: the embedded server whose window bounds uploads (OpenSSH, Dropbear, TinySSH); `aes`: whether
    the CPU's AES instructions were in use (None: unknown); `elsewhere`: a faster server measured beside it on this
    CPU, in words (a `servers` run)."""
    if any(r.scenario.remedy for r in group):
        return "what helps is measured in this run: each remedy against the default copy (tune)"
    if kind is BoundKind.NETWORK:
        return "the path is the limit: a faster cipher will not help"
    if kind is BoundKind.TCP_WINDOW:
        return (
            "raise the receiver's TCP buffer (net.ipv4.tcp_rmem, its maximum) or the sender's (tcp_wmem), or "
            "several connections in parallel"
        )
    if kind is BoundKind.SSH_WINDOW:
        server = products.by_name(server_product)
        if row.scenario.direction is not Direction.DOWN and server and server.window_option:
            return (
                f"a larger {server.window_option} for {server.name}, HPN-SSH's larger windows, or several "
                "connections in parallel"
            )
        return "the cipher hardly matters; what helps: HPN-SSH's larger windows, or several connections in parallel"
    return _faster_choice(row, group, aes, elsewhere)


def _faster_choice(row: Row, group: Sequence[Row], aes: bool | None = None, elsewhere: str = "") -> str:
    """Return the cipher remedy for a CPU- or crypto-bound row: the group's leader if this row is significantly
    slower than it (or may be: not told apart yet), else that no cipher measured here is faster."""
    leader = next((r for r in group if r.standing is Standing.LEADER), None)
    if leader is not None and leader is not row and leader.summary:
        metric = leader.scenario.metric
        named = f"{metric.labels.name(leader.scenario)} ({metric.format(leader.summary.median)} {metric.unit})"
        if row.standing is Standing.SLOWER:
            return f"a faster cipher measured here helps: {named}"
        if row.standing is Standing.INCONCLUSIVE:  # not "only a faster CPU helps" beside a leader twice as fast
            return f"a faster cipher measured here may help (not told apart from this one yet): {named}"
    none = "no cipher measured here is significantly faster"
    if elsewhere:  # not "only a faster CPU helps" beside another server twice as fast on this one
        return f"{none} on this server; {elsewhere}: another implementation helps"
    cipher = row.scenario.cipher or ""
    if cipher and "aes" not in cipher:  # its speed owes nothing to the CPU's AES instructions
        return f"{none}: this cipher uses no AES instructions; a faster CPU or another SSH implementation helps"
    if aes is True:
        return f"{none}: this CPU's AES instructions were in use already; only a faster CPU helps"
    if aes is False:
        return f"{none} without AES instructions: a CPU with them (or without --emulate no-aesni) or a faster one helps"
    return f"{none}: only a faster CPU (or one with AES instructions) helps"
