"""The key exchange cost table under a connection-time run: each kex against curve25519-sha256 in the same rounds
(analyse/kexcost.py). Never computes."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.console import Console

from sshbench.analyse.kexcost import BASELINE, Difference, KexCost, cost_sentence
from sshbench.model import OPENSSH_CLIENT, client_name
from sshbench.render import screen
from sshbench.render.layout import Column, ms_cell, print_fitted
from sshbench.stats import CONFIDENCE

HOW = (
    f"  time and CPU: the median of each round's difference from {BASELINE} with its 95 % interval (its real "
    "coverage named where fewer rounds give less); CPU: the ssh client's and every server process's for the whole "
    "login."
)
HOW_CLIENT = (
    f"  time and CPU: the median of each round's difference from {BASELINE} with its 95 % interval (its real "
    "coverage named where fewer rounds give less); CPU: the ssh client's for the whole login (no server CPU: a host "
    "of yours reports none for a login)."
)
HOW_BYTES = (
    "  Bytes each way up to each side's NEWKEYS and round trips (the client's flights that waited for the server; "
    "TCP's handshake not included): counted on each row's warm-up login, which ssh made through a counting relay (its "
    "ProxyCommand); timed logins never go through it."
)


def difference_cell(d: Difference | None, baseline: bool) -> str:
    """Return `+1.2 (0.9..1.6)` ms for a difference and its interval, with the interval's real coverage where it is
    under 95 % (`+5.1 (+4.2..+6.0, 75 %)` from 3 paired rounds); `-` on the baseline's own row."""
    if baseline:
        return "-"
    if d is None:
        return ""
    cover = "" if d.coverage >= CONFIDENCE else f", {d.coverage * 100:.0f} %"
    return f"{d.median * 1000:+.1f} ({d.ci_low * 1000:+.1f}..{d.ci_high * 1000:+.1f}{cover})"


def _bytes(c: KexCost) -> str:
    """Return the bytes each way to the new keys, or why they are missing."""
    if c.wire:
        return f"{c.wire.kex_sent}/{c.wire.kex_received}"
    return "n/a" if c.wire_problem else ""


def _extra_bytes(c: KexCost) -> str:
    """Return the bytes beyond the baseline's each way, with what the key shares predict."""
    if c.baseline:
        return "-"
    if c.extra_bytes is None:
        return ""
    got = f"{c.extra_bytes[0]:+d}/{c.extra_bytes[1]:+d}"
    return got if c.share_bytes is None else f"{got} ({c.share_bytes[0]:+d}/{c.share_bytes[1]:+d})"


def measured(costs: Sequence[KexCost]) -> list[KexCost]:
    """Return the rows with a median (a row marked n/a is listed under its own table, with why)."""
    return [c for c in costs if c.time is not None]


def cost_columns(costs: Sequence[KexCost]) -> list[Column]:
    """Return the table's columns that have something to show (a run without server CPU or counted bytes has none
    of those columns)."""
    return [c for c in _all_columns(costs) if any(cell not in ("", "-") for cell in c.cells)]


def _all_columns(costs: Sequence[KexCost]) -> list[Column]:
    """Return every column of the table."""
    cols = [Column("key exchange", tuple(c.scenario.kex or "" for c in costs), fold=True)]
    if len({(c.scenario.client, c.scenario.mode) for c in costs}) > 1:
        cols.insert(
            0, Column("client", tuple(client_name(c.scenario.client or OPENSSH_CLIENT, c.scenario.mode) for c in costs))
        )
    if len({c.scenario.server for c in costs}) > 1:
        cols.append(Column("server", tuple(c.scenario.server or "" for c in costs)))
    if len({c.scenario.hostkey for c in costs}) > 1:
        cols.append(Column("host key", tuple(c.scenario.hostkey or "default" for c in costs), fold=True))
    return [
        *cols,
        Column("post-quantum", tuple("yes" if c.post_quantum else "no" for c in costs)),
        Column("ms", tuple(ms_cell(c.time) for c in costs), right=True),
        _extra_column(_ci_title(costs), costs, lambda c: c.extra_time),
        *_cpu_columns("client", costs, lambda c: c.client_cpu, lambda c: c.extra_client_cpu),
        *_cpu_columns("server", costs, lambda c: c.server_cpu, lambda c: c.extra_server_cpu),
        Column("bytes to new keys out/in", tuple(_bytes(c) for c in costs), right=True),
        Column("+bytes (key shares)", tuple(_extra_bytes(c) for c in costs), right=True, shed=2),
        Column("round trips", tuple(str(c.wire.round_trips) if c.wire else "" for c in costs), right=True, shed=1),
    ]


def _ci_title(costs: Sequence[KexCost]) -> str:
    """Return the time difference's title: `95% CI` while every interval covers 95 %, else `CI` (cells say theirs)."""
    short = any(c.extra_time is not None and c.extra_time.coverage < CONFIDENCE for c in costs)
    return "+ms (CI)" if short else "+ms (95% CI)"


def _cpu_columns(
    side: str,
    costs: Sequence[KexCost],
    figure: Callable[[KexCost], float | None],
    extra: Callable[[KexCost], Difference | None],
) -> list[Column]:
    """Return a side's CPU per login and its paired difference against the baseline."""
    cells = tuple(ms_cell(figure(c)) for c in costs)
    return [
        Column(f"{side} CPU ms", cells, right=True, shed=1, hidden_as="CPU"),
        _extra_column(f"+{side} CPU", costs, extra, shed=3),
    ]


def _extra_column(
    title: str, costs: Sequence[KexCost], extra: Callable[[KexCost], Difference | None], shed: int | None = None
) -> Column:
    """Return a column of paired differences against the baseline (`-` on the baseline's own row)."""
    cells = tuple(difference_cell(extra(c), c.baseline) for c in costs)
    return Column(title, cells, right=True, shed=shed, hidden_as="CPU" if shed else "")


def sentences(costs: Sequence[KexCost]) -> list[str]:
    """Return one sentence per post-quantum kex saying what it costs against the baseline, and why bytes are missing
    where they are."""
    lines = []
    keyed = len({c.scenario.hostkey for c in costs}) > 1  # each sentence names its host key when rows differ in it
    for c in costs:
        if c.wire_problem:
            lines.append(f"  ! {c.scenario.kex}: bytes {c.wire_problem}")
        if c.post_quantum and (text := cost_sentence(c, keyed)):
            lines.append(f"  {text}")
    if costs and not any(c.baseline for c in costs):
        lines.append(f"  add {BASELINE} to --kex to see each key exchange's cost against it, in the same rounds")
    return lines


def print_kex_costs(console: Console, costs: Sequence[KexCost]) -> None:
    """Print the key exchange cost table, its sentences and how it was measured."""
    costs = measured(costs)
    if not costs:
        return
    if screen.brief():  # the table's figures: --details; what post-quantum costs: said here
        screen.say(console, f"Key exchange cost against {BASELINE}: CPU, bytes and round trips per row: --details")
        for line in sentences(costs):
            screen.say(console, line)
        return
    print_fitted(console, f"Key exchange cost against {BASELINE} (same rounds)", cost_columns(costs))
    for line in sentences(costs):
        screen.say(console, line)
    how = HOW if any(c.server_cpu is not None for c in costs) else HOW_CLIENT
    screen.say(console, how, style="dim")
    if any(c.wire for c in costs):
        screen.say(console, HOW_BYTES, style="dim")
