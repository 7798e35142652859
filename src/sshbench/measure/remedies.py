"""`tune`'s samplers: a copy over N connections at once, and a connection through a master connection.

Every `tune` transfer is timed as a user's copy is: from the first ssh spawned to the last one's exit, handshakes
included, so that one connection and N connections are compared alike. Each of N connections carries 1/N of the
bytes (whole 64 KiB: N connections move what one does, however small the copy), each verified as
`throughput_sample` verifies one; the sample is their sum. A connection through a master is `true` run over an
existing ControlMaster socket (ControlMaster=no, the master's ControlPath): what `ControlMaster auto` +
`ControlPersist` give every connection after the first.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sshbench.discovery import Negotiated
from sshbench.kex import same
from sshbench.measure.samplers import MAX_SIZE, ThroughputSampler, calibration_size, measured_sample, throughput_sample
from sshbench.measure.steady import MB
from sshbench.model import Direction, Kind, Scenario
from sshbench.ratios import DECIDING_PAIRS
from sshbench.remedy import ONE_CONNECTION
from sshbench.samples import FIXED, Sample
from sshbench.ssh.destination import LOGIN_TIMEOUT, Target
from sshbench.ssh.proc import run_quick, run_timed
from sshbench.ssh.text import parse_conninfo, ssh_failure

MIB = 2**20
PART = 2**16  # a part of a copy over N connections is whole 64 KiB (1 MiB parts made 8 connections move 8 MiB)
COPY_LOGINS = 5  # a default copy lasts this many logins at least: a login is a sixth of it at most
COPY_RTTS = 50  # and this many round trips of the path
SLOW_STARTS = 4  # each part of a copy over N connections moves this many times what its slow start sends
COPY_ROUNDS = DECIDING_PAIRS  # the rounds a verdict on a remedy needs: the budget must give copies that many


def streams(sc: Scenario) -> int:
    """Return how many connections a scenario's copy uses."""
    return sc.remedy.connections if sc.remedy else 1


def baseline(direction: Direction | None) -> Scenario:
    """Return the default copy one way as remedies are timed: the client's own algorithms, one connection, from
    spawn to exit."""
    return Scenario(Kind.THROUGHPUT, direction=direction, remedy=ONE_CONNECTION)


def is_steady(sc: Scenario) -> bool:
    """Return True for a default transfer's steady rate (step 1's, read by the diagnosis, never raced)."""
    return sc.kind is Kind.THROUGHPUT and sc.remedy is None


def steady(direction: Direction | None) -> Scenario:
    """Return the default transfer one way, its steady rate (handshake excluded): what the diagnosis reads."""
    return Scenario(Kind.THROUGHPUT, direction=direction)


@dataclass(frozen=True)
class Sizing:
    """What sizes `tune`'s copies: each direction's steady rate (MB/s), a login's seconds, the path's round trip
    (seconds, 0 when not seen) and the most connections one copy is split over."""

    rates: Mapping[Direction | None, float]
    login: float | None
    rtt: float = 0.0
    most: int = 1

    def rules(self, least: float) -> list[tuple[float, str]]:
        """Return each rule's seconds of a default copy with its words: a sample's worth, COPY_LOGINS logins,
        COPY_RTTS round trips, and for N connections each part SLOW_STARTS times what its slow start sends (about
        twice the window: two round trips at the rate one connection holds, which N at once hold too at best)."""
        out = [(least, f"{least:g} s, a sample's worth")]
        if self.login:
            out.append((COPY_LOGINS * self.login, f"{COPY_LOGINS} logins of {self.login:.2g} s"))
        if self.rtt > 0:
            out.append((COPY_RTTS * self.rtt, f"{COPY_RTTS} round trips of {self.rtt * 1e3:.3g} ms"))
            if self.most > 1:
                words = f"each of {self.most} connections' part {SLOW_STARTS} times its slow start"
                out.append((self.most * SLOW_STARTS * 2 * self.rtt, words))
        return out

    def seconds(self, least: float) -> tuple[float, str]:
        """Return how long a default copy moves payload at its steady rate, and the rule that set it (the longest:
        what a remedy changes must dominate the copy, never shrunk to a budget, which is checked instead)."""
        return max(self.rules(least), key=lambda rule: rule[0])


class CopySampler:
    """Take `tune` copy samples; sizes come from each direction's baseline warm-up (about `sample_seconds`)."""

    def __init__(self, inner: ThroughputSampler) -> None:
        self.inner = inner
        self.copy_sizes: dict[Direction | None, int] = {}  # set by the job once the defaults are measured

    def size_copies(self, sizing: Sizing) -> None:
        """Size each direction's copies (whole MiB) to last `Sizing.seconds` at its steady rate."""
        seconds, _ = sizing.seconds(self.inner.opts.sample_seconds)
        for direction, rate in sizing.rates.items():
            self.copy_sizes[direction] = copy_bytes(rate, seconds)

    def cleanup(self) -> None:
        """Remove the payload files the inner sampler staged."""
        self.inner.cleanup()

    def __call__(self, sc: Scenario, rnd: int, warmup: bool) -> Sample:
        """Take one sample over `streams(sc)` connections (the default without a remedy is its steady rate,
        handshake excluded, as `throughput` measures it; a copy's warm-up is 1 MiB over one connection: copies are
        sized from the default's measured rate, not from their warm-up)."""
        if sc.remedy is None:
            return self.inner(sc, rnd, warmup)
        if warmup:
            return throughput_sample(self.inner.ssh, self.inner.target, sc, MIB, self.inner.payload, rnd, True)
        base = steady(sc.direction).key
        size = self.inner.opts.size or self.inner.sizes.get(base) or self.inner.sizes.get(sc.key)
        size = sc.remedy.copy or self.copy_sizes.get(sc.direction) or size or calibration_size(self.inner.opts)
        n = streams(sc)
        part = max(PART, size // n // PART * PART)
        taken: list[Sample | None] = [None] * n
        ends = [0.0] * n

        def one(i: int) -> None:
            """Move one part; note when it ended."""
            taken[i] = throughput_sample(self.inner.ssh, self.inner.target, sc, part, self.inner.payload, rnd, False)
            ends[i] = time.monotonic() - start

        start = time.monotonic()
        threads = [threading.Thread(target=one, args=(i,), name=f"sshbench-stream-{i}") for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - start
        return combine(sc, rnd, [(s, e) for s, e in zip(taken, ends, strict=True) if s is not None], n, part, wall)


def warmup_seconds(warm: Sequence[Scenario], login: float | None, overhead: float | None = None) -> float:
    """Return what the warm-ups of `warm` take before the first round: a login each, a transfer its `overhead` (its
    1 MiB is small next to its login and ramp)."""
    each = max(login or 0.0, overhead or 0.0)
    return sum(each if sc.kind is Kind.THROUGHPUT else (login or 0.0) for sc in warm)


def rounds_seconds(
    login: float | None,
    scheduled: Sequence[Scenario],
    steady_seconds: float,
    copy_seconds: float,
    overhead: float | None = None,
) -> float:
    """Return what COPY_ROUNDS rounds of `scheduled` take when a default copy moves payload for `copy_seconds`: a
    copy over N connections takes about 1/N of it (compression counts as a whole one), a steady-rate sample about
    `steady_seconds`, every connection a login, and every transfer its `overhead` besides its payload (login and the
    stream's ramp: 2.3-3.6 s on a 100 ms path here; the login when unknown). One more copy per direction is kept in
    reserve: connections that start together can lose packets together (8 took 2.4 times one's time on a 100 ms
    path here)."""
    fixed, whole = _round_shape(login, scheduled, steady_seconds, overhead)
    return COPY_ROUNDS * (fixed + whole * copy_seconds)


def _round_shape(
    login: float | None, scheduled: Sequence[Scenario], steady_seconds: float, overhead: float | None
) -> tuple[float, float]:
    """Return one round's fixed seconds (logins, overheads, steady samples) and how many whole default copies it
    moves (see `rounds_seconds`)."""
    copies = [sc for sc in scheduled if sc.kind is Kind.THROUGHPUT and sc.remedy is not None]
    whole = sum(1.0 / streams(sc) for sc in copies)  # a copy over N connections: 1/N of the default's time each
    whole += len({sc.direction for sc in copies})
    transfers = sum(1 for sc in scheduled if sc.kind is Kind.THROUGHPUT) + len({sc.direction for sc in copies})
    steady_rows = sum(1 for sc in scheduled if is_steady(sc))
    logins = sum(1 for sc in scheduled if sc.kind is not Kind.THROUGHPUT)
    each = max(login or 0.0, overhead or 0.0)
    fixed = (login or 0.0) * logins + each * transfers + steady_rows * steady_seconds
    return fixed, max(whole, 1.0)


def copy_bytes(rate: float, seconds: float) -> int:
    """Return a copy's bytes (whole MiB, 1 MiB to MAX_SIZE) for `seconds` at `rate` MB/s."""
    return int(min(max(rate * MB * seconds, MIB), MAX_SIZE)) // MIB * MIB


def combine(sc: Scenario, rnd: int, parts: list[tuple[Sample, float]], n: int, part: int, wall: float) -> Sample:
    """Return one sample of N parts (each with when it ended, seconds from the copy's start): their bytes over the
    wall time, their CPU summed (failed if any part failed), and phase `fixed`: what the copy took besides moving
    its bytes (`moving`); a copy of any size then takes about fixed + size / (its bytes / moving): analyse/sizes.py."""
    taken = [s for s, _ in parts]
    bad = next((s for s in taken if not s.ok), None)
    if bad is not None or len(taken) < n:
        why = bad.error if bad is not None else "a connection did not report"
        return Sample(sc, rnd, False, ok=False, value=None, wall=wall, error=f"{n} connections at once: {why}")

    def total(field: str) -> float | None:
        """Return a field summed over the parts (None when a part lacks it)."""
        values = [getattr(s, field) for s in taken]
        return None if any(v is None for v in values) else float(sum(values))

    rss = [s.server_rss for s in taken if s.server_rss is not None]
    spans = [(end - part / (s.value * MB), end) for s, end in parts if s.value]
    fixed = ((FIXED, max(0.0, wall - moving(spans))),) if len(spans) == n else ()
    return Sample(
        sc,
        rnd,
        False,
        ok=True,
        value=n * part / wall / MB,
        wall=wall,
        nbytes=n * part,
        client_cpu=total("client_cpu"),
        client_system=total("client_system"),
        server_cpu=total("server_cpu"),
        server_rss=max(rss) if rss else None,
        tcp=taken[0].tcp,
        phases=fixed,  # seconds in which no part moved bytes at its steady rate: logins, ramps, exits
    )


def moving(spans: Sequence[tuple[float, float]]) -> float:
    """Return the seconds in which at least one part moved its bytes at its steady rate (the union of the parts'
    spans): parts that run together share the path and count once, parts that run one after another (their logins
    staggered on a slow path) each count, so their bytes are never credited N paths."""
    out, reach = 0.0, float("-inf")
    for begin, end in sorted(spans):
        if end > reach:
            out += end - max(begin, reach)
            reach = end
    return out


class MasterConnection:
    """A ControlMaster connection kept open for the samples that reuse it (this process's child, stopped by PID)."""

    def __init__(self, ssh: str, target: Target, workdir: Path) -> None:
        self.ssh, self.target = ssh, target
        self.path = workdir / "master"
        self.proc: subprocess.Popen[bytes] | None = None

    def options(self) -> list[str]:
        """Return the options that make a connection go through the master."""
        return ["-o", "ControlMaster=no", "-o", f"ControlPath={self.path}"]

    def start(self) -> str | None:
        """Start the master and wait for its socket; return why it could not start, or None."""
        if self.proc is not None and self.proc.poll() is None and self.path.exists():
            return None
        argv = self.target.argv(self.ssh, ["-N", "-o", "ControlMaster=yes", "-o", f"ControlPath={self.path}"], "")
        argv = [a for a in argv if a not in ("-v", "")]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + LOGIN_TIMEOUT
        while not self.path.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                err = (self.proc.stderr.read() if self.proc.stderr and self.proc.poll() is not None else b"").decode()
                self.stop()
                return f"the master connection did not start: {err.strip() or 'no control socket in time'}"
            time.sleep(0.02)
        return None

    def stop(self) -> None:
        """Stop the master (our child, by its PID) and remove its socket."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=10)
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        with contextlib.suppress(OSError):
            os.unlink(self.path)

    def conninfo(self) -> dict[str, str]:
        """Return what the running master says of its connection (`ssh -O conninfo`, OpenSSH 10.3+): negotiated
        algorithms, rekey limits and traffic; empty when the client has no such command or no master runs."""
        if self.proc is None or self.proc.poll() is not None:
            return {}
        argv = self.target.argv(self.ssh, ["-O", "conninfo", "-o", f"ControlPath={self.path}"], "")
        try:
            done = run_quick([a for a in argv if a not in ("-v", "")], timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return {}
        return parse_conninfo(done.stdout) if done.returncode == 0 else {}

    def sample(self, sc: Scenario, rnd: int, warmup: bool) -> Sample:
        """Time one connection through the master running `true`."""
        why = self.start()
        if why is not None:
            return Sample(sc, rnd, warmup, ok=False, value=None, wall=0.0, error=why)
        done = run_timed(
            self.target.argv(self.ssh, [*sc.ssh_options(), *self.options()], "true"), timeout=LOGIN_TIMEOUT
        )
        if done.returncode != 0 or done.timed_out:
            error = ssh_failure(done.texts, done.timed_out, LOGIN_TIMEOUT)
            return Sample(sc, rnd, warmup, ok=False, value=None, wall=done.wall, error=error)
        return measured_sample(sc, rnd, warmup, done, done.wall)


def conninfo_check(info: Mapping[str, str], expected: Negotiated | None) -> str:
    """Return the master's own account checked against what the default profile negotiated: `agrees` or what
    differs (a failed check: the master row measured other algorithms than the default's)."""
    if expected is None:
        return "not checked: the default profile's negotiation is not known"
    pairs = (
        ("kex", info.get("kexalgorithm"), expected.kex),
        ("host key", info.get("hostkeyalgorithm"), expected.hostkey),
        ("cipher", info.get("cipher"), expected.cipher),
        ("MAC", info.get("mac") or None, expected.mac),
    )
    differ = [
        f"{what} {got} where the default profile negotiated {want}"
        for what, got, want in pairs
        if not (got == want or (what == "kex" and same(got, want)))
    ]
    return "agrees" if not differ else "differs: " + "; ".join(differ)


@contextlib.contextmanager
def master(ssh: str, target: Target, workdir: Path) -> Iterator[MasterConnection]:
    """Yield a master connection that is stopped afterwards, whatever happens."""
    found = MasterConnection(ssh, target, workdir)
    try:
        yield found
    finally:
        found.stop()


def without_remedy(sc: Scenario) -> Scenario:
    """Return the scenario without its remedy (what its ssh options pin)."""
    return dataclasses.replace(sc, remedy=None)
