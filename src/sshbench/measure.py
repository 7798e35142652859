"""Take one sample: a connection (spawn -> authenticated -> `true` -> exit) or a verified transfer.

Throughput is payload bytes over the time from `Sending command:` (ssh has connected, authenticated
and asked for the command) to process exit, so the handshake is excluded. The payload is produced
and consumed by the real binaries: remote `head -c N /dev/zero` into the client's /dev/null for
download; a local file into remote `wc -c` for upload, which also counts the bytes exactly.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from sshbench.model import Direction, Kind, Sample, Scenario
from sshbench.parsers import (
    first_time,
    parse_exit_status,
    parse_transferred,
    phase_breakdown,
    ssh_failure_reason,
)
from sshbench.proc import Finished, run_timed
from sshbench.target import Target

COMMAND_MARKER = "Sending command:"
MB = 1_000_000
_REMOTE_PATH = re.compile(r"^/[A-Za-z0-9_./-]{1,200}$")


@dataclass(frozen=True)
class Payload:
    """Where transfer bytes come from: zeros, or a random file (with its copy on the server)."""

    kind: str  # "zero" or "random"
    local_dir: Path
    remote_file: str | None = None  # random payload staged on the server

    def download_command(self, size: int) -> str:
        """Return the fixed remote command that writes `size` payload bytes to stdout."""
        if self.kind == "zero" or self.remote_file is None:
            return f"head -c {int(size)} /dev/zero"
        if not _REMOTE_PATH.match(self.remote_file):
            raise ValueError(f"unsafe remote path {self.remote_file!r}")
        return f"while cat {self.remote_file}; do :; done | head -c {int(size)}"

    def upload_source(self, size: int) -> Path:
        """Return a local file of exactly `size` bytes (sparse zeros, or random data)."""
        path = self.local_dir / f"payload-{self.kind}-{size}"
        if not path.exists() or path.stat().st_size != size:
            with open(path, "wb") as f:
                if self.kind == "zero":
                    f.truncate(size)
                else:
                    _write_random(f.fileno(), size)
            _read_through(path)
        return path


def _read_through(path: Path) -> None:
    """Read a new payload file once, before timing, so the first sample does not pay to fill the page cache."""
    with open(path, "rb", buffering=0) as f:
        while f.read(1 << 20):
            pass


def _write_random(fd: int, size: int) -> None:
    """Fill a file with random bytes before measuring (repeating one 16 MiB random block)."""
    block = os.urandom(min(size, 16 << 20))
    written = 0
    while written < size:
        written += os.write(fd, block[: size - written])


def _failed(scenario: Scenario, rnd: int, warmup: bool, done: Finished, why: str) -> Sample:
    """Return a failed sample carrying ssh's own reason."""
    return Sample(
        scenario,
        rnd,
        warmup,
        ok=False,
        value=None,
        wall=done.wall,
        error=why,
        client_cpu=done.cpu_user + done.cpu_system,
    )


def latency_sample(ssh: str, target: Target, scenario: Scenario, rnd: int, warmup: bool) -> Sample:
    """Time one full connection running `true`, with its phase breakdown."""
    done = run_timed(target.argv(ssh, scenario.ssh_options(), "true"), timeout=120)
    if done.returncode != 0 or done.timed_out:
        return _failed(scenario, rnd, warmup, done, ssh_failure_reason(done.texts))
    return Sample(
        scenario,
        rnd,
        warmup,
        ok=True,
        value=done.wall,
        wall=done.wall,
        client_cpu=done.cpu_user + done.cpu_system,
        phases=phase_breakdown(done.lines, done.started, done.ended),
    )


def throughput_sample(
    ssh: str, target: Target, scenario: Scenario, size: int, payload: Payload, rnd: int, warmup: bool
) -> Sample:
    """Transfer `size` bytes one way, verify the count, and return MB/s without the handshake."""
    assert scenario.kind is Kind.THROUGHPUT
    timeout = 30 + size / (2 * MB)  # generous: 2 MB/s is far below any cipher here
    if scenario.direction is Direction.DOWN:
        argv = target.argv(ssh, scenario.ssh_options(), payload.download_command(size))
        done = run_timed(argv, timeout=timeout)
    else:
        with open(payload.upload_source(size), "rb") as source:
            argv = target.argv(ssh, scenario.ssh_options(), "wc -c")
            done = run_timed(argv, stdin=source, capture_stdout=True, timeout=timeout)
    problem = _transfer_problem(done, scenario.direction, size)
    if problem:
        return _failed(scenario, rnd, warmup, done, problem)
    started = first_time(done.lines, COMMAND_MARKER)
    assert started is not None
    seconds = done.ended - started
    return Sample(
        scenario,
        rnd,
        warmup,
        ok=True,
        value=size / seconds / MB,
        wall=done.wall,
        nbytes=size,
        client_cpu=done.cpu_user + done.cpu_system,
    )


def _transfer_problem(done: Finished, direction: Direction | None, size: int) -> str | None:
    """Return why a transfer sample is not valid, or None when the full payload was moved."""
    if done.timed_out:
        return f"transfer did not finish within {done.wall:.0f} s"
    if done.returncode != 0:
        return ssh_failure_reason(done.texts)
    if first_time(done.lines, COMMAND_MARKER) is None:
        return "ssh did not report sending the command (is LogLevel forced to QUIET in ssh_config?)"
    status = parse_exit_status(done.texts)
    if status not in (0, None):
        return f"remote command exited with status {status}"
    if direction is Direction.UP:
        counted = done.stdout.decode(errors="replace").strip()
        if counted != str(size):
            return f"short transfer: the server counted {counted or 'nothing'} of {size} bytes"
        return None
    moved = parse_transferred(done.texts)
    if moved is None or moved[1] < size:
        got = "unknown" if moved is None else str(moved[1])
        return f"short transfer: received {got} bytes on the wire for a {size}-byte payload"
    return None
