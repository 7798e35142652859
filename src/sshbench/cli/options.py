"""Parse and validate option values before anything is measured."""

from __future__ import annotations

import math
import os
import re

from sshbench.errors import ExitCode, SshbenchError

_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b)?$", re.IGNORECASE)
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$")
_SIZE_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
_DURATION_UNITS = {"ms": 0.001, "s": 1, "": 1, "m": 60, "h": 3600}
MIN_SIZE, MAX_SIZE = 2**20, 64 * 2**30


def _usage(option: str, value: str, fix: str) -> SshbenchError:
    """Return a usage error naming the option and the expected form."""
    return SshbenchError(f"bad {option} {value!r}", place=option, fix=fix, code=ExitCode.USAGE)


def client_path(path: str | None) -> str | None:
    """Return `--ssh PATH` as an absolute path (stored with the run for --resume), or None for the system's `ssh`;
    the job checks it is an OpenSSH client before it stores anything (ssh/proc.ssh_client)."""
    return os.path.abspath(path) if path else None


def byte_count(value: str) -> int | None:
    """Return a byte count with optional binary suffix (64K, 512M, 1G, 1GiB) in bytes, None when it is not one."""
    m = _SIZE.match(value.strip())
    return int(float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()]) if m else None


def parse_size(value: str) -> int | None:
    """Parse `auto` or a byte count with optional binary suffix (512M, 1G, 1GiB) into bytes."""
    if value.strip().lower() == "auto":
        return None
    size = byte_count(value)
    fix = "use `auto` or a size from 1M to 64G, e.g. --size 512M"
    if size is None:
        raise _usage("--size", value, fix)
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise _usage("--size", value, fix)
    return size


def _bounded_size(value: str | None, option: str, low: int, high: int, fix: str) -> int | None:
    """Parse an optional byte count (binary suffixes) that must lie from `low` to `high` (None: not given)."""
    if value is None:
        return None
    size = byte_count(value)
    if size is None or not low <= size <= high:
        raise _usage(option, value, fix)
    return size


def parse_for_size(value: str | None) -> int | None:
    """Parse `tune --for-size` (10M, 1G: any size from 64K to 16T, binary suffixes) into bytes (None: not given)."""
    fix = "use the size of the copies you make, from 64K to 16T, e.g. --for-size 1G"
    return _bounded_size(value, "--for-size", 2**16, 2**44, fix)


def parse_rekey(value: str | None) -> int | None:
    """Parse `interop --rekey` (4K, 64K, 1M: from 1K to 64M, binary suffixes) into bytes (None: not given)."""
    fix = "use a RekeyLimit from 1K to 64M, e.g. --rekey 64K (a login moves 4 times it)"
    return _bounded_size(value, "--rekey", 2**10, 2**26, fix)


def parse_duration(
    value: str, option: str = "--max-time", fix: str = "use a positive duration such as 90s, 3m or 1h"
) -> float:
    """Parse a duration such as 90, 90s, 3m or 1h into seconds (0 and negative durations are refused)."""
    m = _DURATION.match(value.strip().lower())
    if not m or float(m.group(1)) <= 0:
        raise _usage(option, value, fix)
    return float(m.group(1)) * _DURATION_UNITS[m.group(2) or ""]


def parse_budget(value: str | None) -> float | None:
    """Parse --max-time: a positive duration, or `none` (also `off`) for no budget; 0 is refused, not read as
    "no limit"."""
    if value is None or value.strip().lower() in ("none", "off"):
        return None
    return parse_duration(value, "--max-time", "use a positive duration such as 90s, 3m or 1h, or `none` (no budget)")


def parse_percent(value: str, option: str = "--ci") -> float:
    """Parse `5%` or `0.05` into a fraction."""
    text = value.strip()
    try:
        number = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise _usage(option, value, "use a percentage such as 5% or 2.5%") from None
    if not 0 < number < 1:
        raise _usage(option, value, "use a percentage between 0% and 100%, such as 5%")
    return number


def parse_list(value: str | None) -> tuple[str, ...]:
    """Split a comma-separated option value."""
    if not value:
        return ()
    return tuple(dict.fromkeys(v.strip() for v in value.split(",") if v.strip()))


def parse_fail_if(spec: str) -> float:
    """Parse `slower:5%` into 5.0 (percent)."""
    kind, _, amount = spec.partition(":")
    if kind != "slower" or not amount:
        raise SshbenchError(
            f"bad --fail-if {spec!r}",
            place="--fail-if",
            fix="use slower:PERCENT, e.g. --fail-if slower:5%",
            code=ExitCode.USAGE,
        )
    return parse_percent(amount, "--fail-if") * 100


def parse_cpu_period(value: str | None, server_cpu: str | None, client_cpu: str | None) -> int | None:
    """Parse `--cpu-period 10ms` into ms (1 to 1000), refusing it without a quota and a quota it makes shorter than
    the kernel's smallest (1 ms)."""
    if value is None:
        return None
    text = value.strip().lower().removesuffix("ms")
    if not text.isdigit() or not 1 <= int(text) <= 1000:
        raise _usage("--cpu-period", value, "use whole milliseconds from 1ms to 1000ms, such as 10ms")
    period = int(text)
    quotas = [(o, v) for o, v in (("--server-cpu", server_cpu), ("--client-cpu", client_cpu)) if v is not None]
    if not quotas:
        raise _usage("--cpu-period", value, "it sets the period of a CPU quota: give --server-cpu or --client-cpu")
    for option, given in quotas:
        share = parse_cpu_share(given, option) or 0.0
        if share * period < 1:
            shortest = math.ceil(1 / share)
            raise _usage(
                "--cpu-period",
                value,
                f"{given} of {period}ms is {share * period:.2g} ms, under the kernel's smallest quota (1 ms): "
                f"use --cpu-period {shortest}ms or more",
            )
    return period


def parse_cpu_share(value: str | None, option: str) -> float | None:
    """Parse `25%` (a quarter of one CPU) or `150%` (one and a half CPUs) into CPUs; None when not given."""
    if value is None:
        return None
    import os

    text = value.strip()
    try:
        share = float(text.removesuffix("%")) / 100
    except ValueError:
        raise _usage(option, value, "use a percentage of one CPU, such as 25% or 150%") from None
    most = os.cpu_count() or 1
    if not 0.01 <= share <= most:
        raise _usage(option, value, f"use 1% to {most * 100}% ({most} CPUs here)")
    return share
