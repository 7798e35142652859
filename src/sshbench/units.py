"""Units: how every number sshbench shows reads, in one table, and the one formatter (as pyperf's
`format_value(unit, value)`). A `Unit` names the unit a value is stored in, its scale to the unit shown and the
format of a shown value; `model.METRICS` names the unit of each kind of measurement, and every table, claim,
chart and export formats through `format_value` (or reads `FIELD_UNITS` for what a stored field holds)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Unit:
    """How values of one unit read: the symbol shown, the unit they are stored in, the scale between the two
    (shown = stored x scale) and the format of a shown value."""

    symbol: str
    stored: str
    scale: float
    spec: str  # a format spec: ".1f", ".0%"
    small: str | None = None  # the format of a shown value below 10 (a rate on a slow line: 1.22, not 1)


UNITS: dict[str, Unit] = {
    "ms": Unit("ms", "s", 1e3, ".1f"),  # a time stored in seconds: connections, phases, server CPU per sample
    "MB/s": Unit("MB/s", "MB/s", 1.0, ".0f", ".3g"),  # a rate stored in MB/s (10^6 bytes per second): transfers, copies
    "B/s": Unit("MB/s", "B/s", 1e-6, ".1f"),  # a rate stored in bytes per second (a link check's counters)
    "s/GiB": Unit("s/GiB", "s/GiB", 1.0, ".2f"),  # CPU seconds per GiB moved
    "MiB": Unit("MiB", "bytes", 2**-20, ".1f"),  # memory stored in bytes
    "share": Unit("%", "fraction", 1.0, ".0%"),  # a fraction shown as a percentage
}

# What each field of a stored sample or result holds (the `units` of a run document).
FIELD_UNITS = {
    "value": "per result's `unit`: s (connection time) or MB/s (10^6 bytes per second, throughput)",
    "wall": "s",
    "client_cpu": "s",
    "client_system": "s",
    "server_cpu": "s",
    "client_cpu_setup": "s",
    "server_cpu_setup": "s",
    "phases": "s",
    "client_rss": "bytes",
    "server_rss": "bytes",
    "nbytes": "bytes",
    "memory": "bytes",
    "costs": "client_cpu_gib/server_cpu_gib: CPU s per GiB moved; server_cpu: s per sample; *_rss: bytes; "
    "client_busy/server_busy: CPUs used while the payload moved (the login's CPU left out)",
}


def symbol(unit: str) -> str:
    """Return the symbol a unit is shown with (table titles, sentences)."""
    return UNITS[unit].symbol


def shown(unit: str, value: float) -> float:
    """Return a stored value in the unit shown."""
    return value * UNITS[unit].scale


def format_value(unit: str, value: float | None, spec: str | None = None, missing: str = "-") -> str:
    """Format a stored value in the unit shown, without the symbol (`missing` when there is none); `spec`
    overrides the unit's format where a line needs fewer digits."""
    if value is None:
        return missing
    u, value = UNITS[unit], shown(unit, value)
    return format(value, spec or (u.small if u.small and abs(value) < 10 else u.spec))
