"""Samples of clients other than ssh (`sshbench clients`), taken as ssh's are, through a `Launcher` (a client's
command lines: clients/launch.py makes them; measuring imports no client).

- Connection time, cold: one process from spawn to exit that connects, logs in, runs `true` and closes (a driver's
  interpreter start and library import included, as a script's are); its `startup` phase lasts until the driver
  says `ready`.
- Connection time, in-process: a library's second connection inside one process (connect, log in, `true`, close),
  as the driver timed it; no process starts in it, and the process's CPU is not this connection's (none is kept).
- Exec-channel transfers: ssh's payload and counting (`samplers.py`): `head -c N /dev/zero` down, a local file into
  the server's own timed count up; a download's steady rate from the client's I/O counters, valid when the kernel
  counted at least N bytes written and a driver says it wrote exactly N to stdout. A driver's download ends when it
  says so (`received N`, once the command has ended), not at its exit: Python's teardown after the last byte (tens
  of ms) read as a 18-43 % lower rate for 32 MiB downloads here (benchmarks/bench_clients_plain.py).
- SFTP copies: `ToolSampler` (a file into tmpfs, counted as it grows) with the client's get/put command line; a
  driver's copy ends when it says `copied`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Protocol

from sshbench.joboptions import JobOptions
from sshbench.measure.samplers import (
    CALIBRATION_SIZE,
    MIN_SIZE,
    PROBE_INTERVAL,
    ThroughputSampler,
    failed_sample,
    measured_sample,
)
from sshbench.measure.steady import MB, server_timed_rate, steady_rate, upload_command, upload_count
from sshbench.measure.tools import Binaries, ToolSampler
from sshbench.model import IN_PROCESS, Direction, Scenario
from sshbench.samples import Sample
from sshbench.ssh.destination import LOGIN_TIMEOUT, Target
from sshbench.ssh.proc import run_timed
from sshbench.ssh.scratch import RemoteScratch
from sshbench.ssh.text import first_time, ssh_failure
from sshbench.ssh.timed import Finished, Watching

READY = "sshbench-driver: ready"
_TOOK = re.compile(r"sshbench-driver: connection (\d+) took ([0-9.]+)")
_RECEIVED = re.compile(r"sshbench-driver: received (\d+)")
RECEIVED, COPIED = "sshbench-driver: received ", "sshbench-driver: copied"
_ERROR = "sshbench-driver: error: "
STALL = 10.0  # seconds without a byte read or written: a transfer the server stopped answering (TinySSH with
# asyncssh, docs/BENCHMARKS.md) is stopped then instead of at its whole timeout


class Launcher(Protocol):
    """A client's command lines against one target."""

    @property
    def mark(self) -> str | None:
        """Return the stderr text that says the command was sent (None: the client prints none)."""

    @property
    def env(self) -> dict[str, str] | None:
        """Return the environment the client runs in (None: this process's)."""

    def argv(self, sc: Scenario, mode: str, *operands: str) -> list[str]:
        """Return the command line: `connect N`, `exec CMD`, `get REMOTE LOCAL` or `put LOCAL REMOTE`."""


def _why(done: Finished, timeout: float) -> str:
    """Return the client's own words for a failure (a driver's error line without its prefix), or that it moved no
    byte for the stall limit."""
    if done.stalled is not None:
        return (
            f"no byte moved for {done.stalled:g} s: the server stopped responding (stopped by sshbench before its "
            f"{timeout:g} s limit)"
        )
    return ssh_failure(done.texts, done.timed_out, timeout).removeprefix(_ERROR)


def connection_sample(launcher: Launcher, sc: Scenario, rnd: int, warmup: bool) -> Sample:
    """Time one connection: a whole process (cold), or a library's second connection in one process."""
    in_process = sc.mode == IN_PROCESS
    timeout = 2 * LOGIN_TIMEOUT
    done = run_timed(launcher.argv(sc, "connect", "2" if in_process else "1"), timeout=timeout, env=launcher.env)
    if done.returncode != 0 or done.timed_out:
        return failed_sample(sc, rnd, warmup, done, _why(done, timeout))
    if in_process:
        took = {int(m[1]): float(m[2]) for m in _TOOK.finditer("\n".join(done.texts))}
        if 2 not in took:
            return failed_sample(sc, rnd, warmup, done, "the driver did not time its second connection")
        return Sample(sc, rnd, warmup, ok=True, value=took[2], wall=done.wall)
    ready = first_time(done.lines, READY)
    phases = (("startup", ready - done.started),) if ready is not None else ()
    return measured_sample(sc, rnd, warmup, done, done.wall, phases=phases)


def transfer_problem(done: Finished, down: bool, size: int, timeout: float) -> str | None:
    """Return why a transfer is not a valid sample, or None when all `size` bytes arrived."""
    if done.timed_out or done.returncode != 0:
        return _why(done, timeout)
    if not down:
        counted = upload_count(done.stdout, size)
        return None if counted == size else f"short transfer: the server counted {counted or 'nothing'} of {size} bytes"
    said = [int(m[1]) for m in _RECEIVED.finditer("\n".join(done.texts))]
    if said and said[-1] != size:
        return f"short transfer: the client says it received {said[-1]} of {size} bytes"
    written = done.progress[-1][2] if done.progress else 0
    return None if written >= size else f"short transfer: the client wrote {written} of {size} bytes"


class ClientTransfers(ThroughputSampler):
    """Exec-channel transfers with another client, sized as ssh's are (a warm-up starts small: a library may move
    a hundredth of ssh's rate)."""

    first_size = MIN_SIZE

    def __init__(self, launcher: Launcher, ssh: str, target: Target, opts: JobOptions, workdir: Path) -> None:
        super().__init__(ssh, target, opts, workdir)
        self.launcher = launcher

    def transfer(self, sc: Scenario, size: int, rnd: int, warmup: bool) -> Sample:
        """Move `size` bytes one way with the client; return MB/s of the steady part."""
        launch, down = self.launcher, sc.direction is Direction.DOWN
        timeout = float(30 + size // MB)  # a library at 1 MB/s still finishes
        if down:
            argv = launch.argv(sc, "exec", self.payload.download_command(size))
            done = run_timed(
                argv,
                timeout=timeout,
                env=launch.env,
                watch=Watching(probe=PROBE_INTERVAL, mark=launch.mark, stall=STALL),
            )
        else:
            with open(self.payload.upload_source(size), "rb") as source:
                argv = launch.argv(sc, "exec", upload_command(size, True))
                done = run_timed(
                    argv,
                    stdin=source,
                    capture_stdout=True,
                    timeout=timeout,
                    env=launch.env,
                    watch=Watching(probe=PROBE_INTERVAL, mark=launch.mark, stall=STALL),
                )
        why = transfer_problem(done, down, size, timeout)
        if why is not None:
            return failed_sample(sc, rnd, warmup, done, why)
        sent = first_time(done.lines, launch.mark) if launch.mark else None
        start = sent if sent is not None else done.started
        end = first_time(done.lines, RECEIVED) or done.ended  # a driver's last byte, before Python's exit (~30 ms)
        timed = None if down else server_timed_rate(done.stdout, size)
        rate = timed or steady_rate(done.progress, 2 if down else 1, size, start, end)
        return Sample(
            sc,
            rnd,
            warmup,
            ok=True,
            value=rate or size / (end - start) / MB,
            wall=done.wall,
            nbytes=size,
            client_cpu=done.cpu_user + done.cpu_system,
            client_system=done.cpu_system,
            client_cpu_setup=done.cpu_at_mark,
            phases=(("login", sent - done.started),) if sent is not None else (),
        )


class ClientCopies(ToolSampler):
    """SFTP copies with a library's get and put."""

    def __init__(
        self,
        launcher: Launcher,
        bins: Binaries,
        target: Target,
        opts: JobOptions,
        local: Path,
        remote: Path | RemoteScratch,
    ) -> None:
        super().__init__(bins, target, opts, local, remote, None)
        self.launcher, self.mark = launcher, launcher.mark

    def finished(self, done: Finished, inbox: Path, size: int) -> float:
        """Return when the driver said its copy returned (before the connection closes and Python exits), else when
        the file was whole."""
        said = first_time(done.lines, COPIED)
        return said if said is not None and done.returncode == 0 else super().finished(done, inbox, size)

    def command(self, sc: Scenario, source: str, dest: str, workdir: Path) -> list[str]:
        """Return the driver's get (down) or put (up) of one file."""
        return self.launcher.argv(sc, "get" if sc.direction is Direction.DOWN else "put", source, dest)

    def __call__(self, sc: Scenario, rnd: int, warmup: bool) -> Sample:
        """Copy one file; a first warm-up starts at MIN_SIZE and grows 8 times while a copy takes under a quarter
        of `sample_seconds` (libssh's SFTP put moved 1.1 MB/s here: a 128 MiB start took two minutes)."""
        if not warmup or self.opts.size is not None or sc.key in self.sizes:
            return super().__call__(sc, rnd, warmup)
        size = MIN_SIZE
        while True:
            self.sizes[sc.key] = size
            sample = super().__call__(sc, rnd, warmup)
            quick = sample.ok and sample.value and size / MB / sample.value < self.opts.sample_seconds / 4
            if not quick or size >= CALIBRATION_SIZE:
                return sample
            size = min(size * 8, CALIBRATION_SIZE)
