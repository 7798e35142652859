"""Take one sample: a connection (spawn -> authenticated -> `true` -> exit) or a verified transfer.

Throughput is the steady rate of a transfer: the payload after its first 20 % (at least 8 MiB, at most half) over
the time it took, counted where it is received. Downloads: the ssh client's own I/O counters (/proc/PID/io: bytes
written to /dev/null), read every 10 ms around that point, from the first reading past it (or the point itself,
interpolated, where a reading came before it) up to process exit. Uploads to an embedded server: the server side times
itself (`head -c` the first part, `date`, `wc -c` the rest, `date`: same clock, this machine), since the client
reads ahead of what the server has received by the channel window and both sockets' buffers (most of a second on a
slow link). A remote host times itself the same way (two readings of its own clock: their difference needs no clock
agreement); where its `date` has no `%N` (not GNU), the client's bytes read from the file, up to process exit, are
the fallback (low on slow links: 4.8 against 12.5 MB/s for 4 MiB over 100 Mbit/s at 20 ms here). The handshake and
the start of the stream (the channel window ramp: ~90 ms for uploads on loopback here, see docs/BENCHMARKS.md) are
excluded, so short and long samples measure the same thing. Without readable counters the rate falls back to the
payload over the time from `Sending command:` to exit. Payload bytes are produced and consumed by the real binaries:
remote `head -c N /dev/zero` into the client's /dev/null for download; a local file into remote `wc -c` for upload,
which also counts the bytes exactly.

`ThroughputSampler` sizes each scenario's transfers from its warm-up (about `sample_seconds` per sample);
`latency_sampler` times connections. Both are `Sampler`s for the scheduler."""

from __future__ import annotations

import contextlib
import dataclasses
import socket
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sshbench.joboptions import JobOptions
from sshbench.measure import wire
from sshbench.measure.scheduler import Sampler
from sshbench.measure.session import Session, session_report, socket_report, with_session_report
from sshbench.measure.steady import (
    MB,
    crossing,
    rate_after,
    server_timed_rate,
    steady_point,
    steady_threshold,
    upload_command,
    upload_count,
)
from sshbench.model import Direction, Kind, Scenario, is_local
from sshbench.payloads import Payload
from sshbench.remedy import COMPRESSION
from sshbench.samples import Sample, WireCount
from sshbench.ssh.authsteps import login_steps
from sshbench.ssh.destination import LOGIN_TIMEOUT, SENT, Target, transfer_mark
from sshbench.ssh.proc import run_timed
from sshbench.ssh.scratch import remote_scratch
from sshbench.ssh.text import (
    HOST_KEY_FAILED,
    first_time,
    host_key_missing,
    parse_exit_status,
    parse_transferred,
    phase_breakdown,
    ssh_failure,
    ssh_failure_reason,
)
from sshbench.ssh.timed import Dense, Finished, Watching

COMMAND_MARKER = SENT
PROBE_INTERVAL = 0.01
DENSE_MARGIN = 2**16  # bytes past the steady threshold still probed densely: the probe after the crossing is dense
LATE_PROBES = 2 * PROBE_INTERVAL  # dense probes that begin this late (a known ramp of 30 ms or more) find the steady
# part well before the exit: the kernel's evidence and the memory peaks are read from there on, not from the mark
AIM = 1.4  # dense probes begin at this multiple of the quickest time a transfer of the scenario and size took to
# cross into its steady part: most have crossed by then, and the timed part begins at that one probe
ROOM = 0.25  # ... but no later than this share of that transfer's steady part past it (a ramp that was most of it)
CALIBRATION_SIZE = 128 * 2**20  # for 1 s samples: large enough that TCP and channel windows have ramped up
RANDOM_BLOCK = 16 * 2**20
STAGED_BLOCK = 4 * 2**20  # on a remote host: still 128 times zlib's 32 KiB window, so repeating it compresses no better
MIN_SIZE, MAX_SIZE = 4 * 2**20, 8 * 2**30
RTT_ROUNDS = 20  # a remote sample lasts at least this many round trips
CONNECT_PROBE = 5.0  # seconds for one TCP connect when timing a remote host's round trip


def calibration_size(opts: JobOptions) -> int:
    """Return the warm-up transfer's size, which calibrates --size auto (whole MiB). Across an emulated link, or to
    a host of the user's (whose path nobody told us), the rate may be a thousand times lower than on loopback (a
    small window on a long RTT, a 10 Mbit/s line): start small there."""
    if opts.link or not all(is_local(t) for t in (opts.target, *opts.servers)):
        return MIN_SIZE
    return int(CALIBRATION_SIZE * min(1.0, opts.sample_seconds)) // 2**20 * 2**20


def measured_sample(sc: Scenario, rnd: int, warmup: bool, done: Finished, value: float, **more: Any) -> Sample:
    """Return a successful sample of `value` with the client's wall time and CPU (`more`: the kind's own fields)."""
    return Sample(
        sc,
        rnd,
        warmup,
        ok=True,
        value=value,
        wall=done.wall,
        client_cpu=done.cpu_user + done.cpu_system,
        client_system=done.cpu_system,
        **more,
    )


def failed_sample(scenario: Scenario, rnd: int, warmup: bool, done: Finished, why: str) -> Sample:
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
        client_system=done.cpu_system,
    )


def latency_sample(
    ssh: str, target: Target, scenario: Scenario, rnd: int, warmup: bool, tally: Path | None = None
) -> Sample:
    """Time one full connection running `true`, with its phase breakdown; a warm-up with a `tally` file goes through
    the counting relay (measure/wire.py) and carries the key exchange's bytes (`wire`): never a timed sample. A
    relayed login that fails is taken again without the relay (the relay's failure is no failure of the server)."""
    relayed = tally is not None and warmup and not target.proxied
    extra = scenario.ssh_options()
    if relayed and tally:
        tally.unlink(missing_ok=True)  # an earlier row's count
        extra += wire.proxy_options(tally)
    done = run_timed(target.argv(ssh, extra, "true"), timeout=LOGIN_TIMEOUT)
    if relayed and (done.returncode != 0 or done.timed_out):
        why = ssh_failure(done.texts, done.timed_out, LOGIN_TIMEOUT)
        direct = latency_sample(ssh, target, scenario, rnd, warmup)
        problem = {"problem": f"not counted: the login through the counting relay failed ({why})"}
        return dataclasses.replace(direct, wire=problem) if direct.ok else direct
    if done.returncode != 0 or done.timed_out:
        why = ssh_failure(done.texts, done.timed_out, LOGIN_TIMEOUT)
        if scenario.hostkey and HOST_KEY_FAILED in why and not target.embedded:
            why = host_key_missing(scenario.hostkey, target.host, target.port)
        return failed_sample(scenario, rnd, warmup, done, why)
    counted = wire.read_count(tally) if relayed and tally else None
    return measured_sample(
        scenario,
        rnd,
        warmup,
        done,
        done.wall,
        phases=_phases(done),
        wire=_wire_record(counted) if relayed else None,
    )


def _phases(done: Finished) -> tuple[tuple[str, float], ...]:
    """Return a login's phases and, inside its authentication and session, the steps `ssh -v` says
    (ssh/authsteps.py)."""
    phases = phase_breakdown(done.lines, done.started, done.ended)
    return (*phases, *login_steps(done.lines, done.ended)) if phases else ()


def _wire_record(counted: WireCount | str | None) -> dict[str, Any]:
    """Return what a counted warm-up stores: the count, or why there is none."""
    if isinstance(counted, WireCount):
        return dict(counted.to_json())
    return {"problem": counted or "not counted: the relay wrote nothing before the login ended"}


def latency_sampler(ssh: str, target: Target, tally: Path | None = None) -> Sampler:
    """Return the sampler that times connections to one target (warm-ups counted through the relay into `tally`)."""
    return lambda sc, rnd, warmup: latency_sample(ssh, target, sc, rnd, warmup, tally)


def throughput_sample(
    ssh: str,
    target: Target,
    scenario: Scenario,
    size: int,
    payload: Payload,
    rnd: int,
    warmup: bool,
    first_probe: float = 0.0,
) -> Sample:
    """Transfer `size` bytes one way, verify the count, and return MB/s without the handshake. The client's I/O
    counters are probed densely from `first_probe` seconds after the command until the steady part is under way
    (the ticks riding on them read mid-transfer there, and begin there when `first_probe` is LATE_PROBES or more);
    phase `ramp` is when that part began by those counters."""
    assert scenario.kind is Kind.THROUGHPUT
    timeout = 30 + size / (2 * MB)  # generous: 2 MB/s is far below any cipher here
    remote = not target.embedded  # a remote server reports its own session's CPU and memory over the login

    def command(text: str) -> str:
        """Return the remote command as sent."""
        return with_session_report(text) if remote else text

    column = 2 if scenario.direction is Direction.DOWN else 1  # wchar to /dev/null, or rchar from the file
    # dense until the steady part is under way: its probe is the one the kernel's evidence and the memory peaks
    # are read at mid-transfer (an upload the server times itself needs it for that alone)
    dense = Dense(column, steady_threshold(size) + DENSE_MARGIN, first_probe, first_probe >= LATE_PROBES)
    if scenario.direction is Direction.DOWN:
        argv = target.argv(ssh, scenario.ssh_options(), command(payload.download_command(size)), marks_only=True)
        done = run_timed(
            argv, timeout=timeout, watch=Watching(probe=PROBE_INTERVAL, mark=transfer_mark(ssh), dense=dense)
        )
    else:
        with open(payload.upload_source(size), "rb") as source:
            argv = target.argv(ssh, scenario.ssh_options(), command(upload_command(size, True)), marks_only=True)
            mark = transfer_mark(ssh)
            done = run_timed(
                argv,
                stdin=source,
                capture_stdout=True,
                timeout=timeout,
                watch=Watching(probe=PROBE_INTERVAL, mark=mark, dense=dense),
            )
    problem = _transfer_problem(done, scenario.direction, size, scenario.remedy == COMPRESSION)
    if problem:
        return failed_sample(scenario, rnd, warmup, done, problem)
    return _transferred(done, scenario, size, rnd, warmup, remote)


def _transferred(done: Finished, scenario: Scenario, size: int, rnd: int, warmup: bool, remote: bool) -> Sample:
    """Return the sample of a transfer that moved its whole payload."""
    started = done.marked or first_time(done.lines, COMMAND_MARKER)  # the login's end, as the mark said it
    assert started is not None
    column = 2 if scenario.direction is Direction.DOWN else 1
    timed = server_timed_rate(done.stdout, size)
    start = steady_point(done.progress, column, size, started, done.ended)
    crossed = crossing(start, size, done.ended)  # where the next sample's probes aim
    rate = timed or rate_after(start, size, done.ended)
    session = session_report(done.texts) if remote else None
    ramp = (("ramp", crossed - started),) if crossed is not None else ()
    return Sample(
        scenario,
        rnd,
        warmup,
        ok=True,
        value=rate if rate is not None else size / (done.ended - started) / MB,
        wall=done.wall,
        nbytes=size,
        client_cpu=done.cpu_user + done.cpu_system,
        client_system=done.cpu_system,
        client_cpu_setup=done.cpu_at_mark,
        phases=(("login", started - done.started), *ramp),  # spawn -> command sent: when client_cpu_setup was spent
        server_cpu=session.cpu if session else None,
        server_rss=session.rss if session else None,
        tcp=_remote_evidence(session, socket_report(done.texts), done.wall) if remote else None,
    )


def _remote_evidence(session: Session | None, sock: dict[str, Any] | None, wall: float) -> dict[str, Any] | None:
    """Return what a remote session reported of itself: its process and cgroup, and its socket (`server`)."""
    out: dict[str, Any] = {}
    if session is not None:
        out["remote_session"] = vars(session) | {"wall_s": wall}
    if sock is not None:
        out["server"] = sock
    return out or None


def _transfer_problem(done: Finished, direction: Direction | None, size: int, compressed: bool = False) -> str | None:
    """Return why a transfer sample is not valid, or None when the full payload was moved (a compressed download is
    checked by what the client wrote, since fewer bytes cross the wire than arrive)."""
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
        counted = upload_count(done.stdout, size)
        if counted != size:
            shown = done.stdout.decode(errors="replace").strip()[:80] if counted is None else counted
            return f"short transfer: the server counted {shown or 'nothing'} of {size} bytes"
        return None
    moved = None if compressed else parse_transferred(done.texts)  # ssh -v's count of the bytes on the wire
    if moved is None:  # compressed (fewer bytes cross the wire), or logged without it (MARKS_ONLY): what it wrote
        # in all: its writes since the mark would do, but the mark's reading is taken as sshbench sees the mark's
        # line, which on a busy machine comes after the payload began (1.8 MB of 8 MiB once): the payload would
        # then read short. Its login's few KB are in the total; a cut transfer is short by far more, and fails ssh.
        written = done.progress[-1][2] if done.progress else 0
        return None if written >= size else f"short transfer: the client wrote {written} bytes in all for {size}"
    if moved[1] < size:
        return f"short transfer: received {moved[1]} bytes on the wire for a {size}-byte payload"
    return None


class ThroughputSampler:
    """Take throughput samples, sizing each scenario's transfer for about `sample_seconds` after warm-up."""

    first_size: int | None = None  # the warm-up's first size (None: `calibration_size`)

    def __init__(self, ssh: str, target: Target, opts: JobOptions, workdir: Path) -> None:
        self.ssh, self.target, self.opts = ssh, target, opts
        self.payload = Payload(opts.payload, workdir)
        self.staged = contextlib.ExitStack()  # a remote host's scratch directory holding the staged payload
        if opts.payload in ("random", "text") and Direction.DOWN in opts.directions:
            with contextlib.ExitStack() as staging:  # closed at once if staging fails, else kept for cleanup()
                remote = stage_random(ssh, target, self.payload, staging)
                self.staged = staging.pop_all()
            self.payload = dataclasses.replace(self.payload, remote_file=remote)
        self.sizes: dict[str, int] = {}
        self.rtt: float | None = None
        self.ramps: dict[str, tuple[int, float, float]] = {}  # scenario -> (size, seconds its quickest ramp took,
        # seconds from there to that transfer's exit)

    def prime(self, sc: Scenario, samples: Sequence[Sample]) -> None:
        """Reuse the size chosen by an interrupted run."""
        for s in samples:
            if s.ok and s.nbytes:
                self.sizes[sc.key] = s.nbytes if not s.warmup else self._size_for(s.value)

    def _size_for(self, rate: float | None) -> int:
        """Return the payload size for about `sample_seconds` at `rate` MB/s (whole MiB), and on a remote host at
        least RTT_ROUNDS round trips of it (on a long path a short copy is mostly its ramp)."""
        seconds = max(self.opts.sample_seconds, RTT_ROUNDS * self.rtt_seconds())
        wanted = (rate or 1.0) * MB * seconds
        return int(min(max(wanted, MIN_SIZE), MAX_SIZE)) // 2**20 * 2**20

    def rtt_seconds(self) -> float:
        """Return the round trip to a remote host (the quickest of 3 TCP connects to its ssh port), measured once;
        0 for embedded servers and hosts behind a proxy (whose path sshbench cannot time this way)."""
        if self.rtt is None:
            self.rtt = 0.0
            if not self.target.embedded and not self.target.proxied and self.opts.link is None:
                self.rtt = connect_rtt(self.target.host, self.target.port)
        return self.rtt

    def cleanup(self) -> None:
        """Remove the payload staged on a remote server (its scratch directory goes when its session ends, also
        when sshbench dies)."""
        self.staged.close()

    def __call__(self, sc: Scenario, rnd: int, warmup: bool) -> Sample:
        """Take one sample; the warm-up sample calibrates the size."""
        if warmup and self.opts.size is None and sc.key not in self.sizes:
            sample = self._calibrate(sc, rnd)
        else:
            size = self.opts.size or self.sizes.get(sc.key, calibration_size(self.opts))
            sample = self.transfer(sc, size, rnd, warmup)
        if warmup and sample.ok and self.opts.size is None:
            self.sizes[sc.key] = self._size_for(sample.value)
        return sample

    def transfer(self, sc: Scenario, size: int, rnd: int, warmup: bool) -> Sample:
        """Take one transfer of `size` bytes with ssh (`sshbench clients` gives other clients their own), its dense
        probes from a little after the quickest transfer of that size crossed into its steady part (each probe is a
        wake-up of sshbench on a core the measured pair needs: one, most often, finds the steady part begun)."""
        known = self.ramps.get(sc.key)
        quickest = known[1:] if known is not None and known[0] == size else None  # (its ramp, its steady part)
        first = min(AIM * quickest[0], quickest[0] + ROOM * quickest[1]) if quickest is not None else 0.0
        sample = throughput_sample(self.ssh, self.target, sc, size, self.payload, rnd, warmup, first)
        phases = dict(sample.phases)
        ramp, login = phases.get("ramp"), phases.get("login")
        # the quickest ramp of this size is kept (one that stalled waits for no other), with the steady part after it
        if sample.ok and ramp is not None and login is not None and (quickest is None or ramp < quickest[0]):
            self.ramps[sc.key] = (size, ramp, sample.wall - login - ramp)
        return sample

    def _calibrate(self, sc: Scenario, rnd: int) -> Sample:
        """Take the warm-up that sizes a scenario's samples: from `calibration_size`, 8 times larger while a transfer
        lasts under a quarter of `sample_seconds` or, on a remote host, its data moves in under half RTT_ROUNDS round
        trips (a small start on a fast path is all ramp: 4 MiB read 21 MB/s on a host that then moved 150-240; 4 MiB
        moved in 6 round trips at 6-8 MB/s on a 1 Gbit/s, 100 ms path where 12-14 MiB then read 14-19), up to
        CALIBRATION_SIZE."""
        size = self.first_size or calibration_size(self.opts)
        while True:
            sample = self.transfer(sc, size, rnd, True)
            took = size / MB / sample.value if sample.ok and sample.value else None
            ramp = max(self.opts.sample_seconds / 4, RTT_ROUNDS / 2 * self.rtt_seconds())  # too short to size from
            quick = took is not None and took < ramp
            if not quick or size >= CALIBRATION_SIZE:
                return sample
            size = min(size * 8, CALIBRATION_SIZE)


def connect_rtt(host: str, port: int, tries: int = 3) -> float:
    """Return the quickest TCP connect to host:port in seconds (about one round trip), 0 when none succeeds."""
    best = None
    for _ in range(tries):
        start = time.perf_counter()
        try:
            with socket.create_connection((host.strip("[]"), port), timeout=CONNECT_PROBE):
                took = time.perf_counter() - start
        except OSError:
            continue
        best = took if best is None else min(best, took)
    return best or 0.0


def stage_random(ssh: str, target: Target, payload: Payload, stack: contextlib.ExitStack) -> str:
    """Put a random (or text) file on the server for downloads and return its path there: on a remote host, in a
    scratch directory the host removes when the job ends or sshbench dies (ssh/scratch.py), entered on `stack`."""
    if target.embedded:
        return str(payload.upload_source(RANDOM_BLOCK))  # the embedded server runs on this machine, as this user
    scratch = stack.enter_context(remote_scratch(ssh, target, "payload"))
    fix = "use --payload zero, or free memory in the server's /dev/shm (or space in its temp dir)"
    return scratch.put(payload.upload_source(STAGED_BLOCK), "payload", fix)  # over the user's line: 3.4 s at 10 Mbit/s
