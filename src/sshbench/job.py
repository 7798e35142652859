"""One measuring job, from options to stored samples: target, discovery, planning, scheduling.

The job writes to the store as it goes and never prints; the CLI renders what was stored.
"""

from __future__ import annotations

import contextlib
import dataclasses
import shlex
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sshbench import analysis, emulation, envinfo, pinning, policy, scenarios
from sshbench.discover import Discovery, discover
from sshbench.embedded import LocalServer
from sshbench.errors import ExitCode, SshbenchError
from sshbench.measure import MB, Payload, latency_sample, throughput_sample
from sshbench.memory import PeakWatcher
from sshbench.model import Direction, Plan, Sample, Scenario
from sshbench.parsers import ssh_failure_reason
from sshbench.proc import require_binary, run_timed
from sshbench.scheduler import Progress, Sampler, Scheduler
from sshbench.servers import is_local, make_server
from sshbench.store import Store, StoredScenario
from sshbench.target import LOCAL, Target, resolve_remote

CALIBRATION_SIZE = 128 * 2**20  # for 1 s samples: large enough that TCP and channel windows have ramped up
QUICK_KEX = "curve25519-sha256"
RANDOM_BLOCK = 16 * 2**20
STAGE_COMMAND = 'f=$(mktemp "${TMPDIR:-/tmp}/sshbench-payload.XXXXXX") && cat > "$f" && echo "$f"'
MIN_SIZE, MAX_SIZE = 4 * 2**20, 8 * 2**30


@dataclass(frozen=True)
class JobOptions:
    """Everything that defines a job; stored with the run so that `--resume` can finish it."""

    command: str
    target: str = LOCAL
    ssh_config: str | None = None  # -F for remote targets (default: ~/.ssh/config)
    measure_latency: bool = True
    measure_throughput: bool = True
    kex: tuple[str, ...] = ()
    hostkeys: tuple[str, ...] = ()
    ciphers: tuple[str, ...] = ()
    macs: tuple[str, ...] = ()
    mac_mode: str = "default"  # default | each | all (with `macs` given: those MACs)
    full_latency: bool = False
    directions: tuple[Direction, ...] = (Direction.DOWN, Direction.UP)
    size: int | None = None  # bytes; None = about `sample_seconds` per sample
    sample_seconds: float = 1.0
    payload: str = "zero"
    plan: Plan = dataclasses.field(default_factory=Plan)
    servers: tuple[str, ...] = ()  # `servers` command: local:NAME specs
    emulate: str | None = None  # e.g. no-aesni (see emulation.py)
    policy: str = "modern"  # security policy for recommendations: a level or a TOML file
    pin: bool = False  # embedded servers: ssh client on one CPU, server on another

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JobOptions:
        """Rebuild options stored with `to_dict`."""
        fields = dict(data)
        fields["plan"] = Plan(**fields["plan"])
        fields["directions"] = tuple(Direction(d) for d in fields["directions"])
        for name in ("kex", "hostkeys", "ciphers", "macs", "servers"):
            fields[name] = tuple(fields.get(name, ()))
        return cls(**fields)


@contextlib.contextmanager
def open_target(spec: str, ssh: str, ssh_config: str | None = None) -> Iterator[tuple[Target, LocalServer | None]]:
    """Yield (target, server): a fresh embedded server for `local[:NAME]`, else a remote destination."""
    if is_local(spec):
        server = make_server(spec)
        with server as target:
            yield target, server
    else:
        yield resolve_remote(ssh, spec, ssh_config), None


def metered(take: Sampler, server: LocalServer | None, watch_memory: bool) -> Sampler:
    """Add peak client/server RSS (when watching memory) and the embedded server's CPU seconds to each sample."""

    def sample(sc: Scenario, rnd: int, warmup: bool) -> Sample:
        """Take one sample between two readings of the server's cgroup."""
        before = server.cpu_seconds() if server else None
        watcher = PeakWatcher(server)
        if watch_memory:
            with watcher:
                taken = take(sc, rnd, warmup)
        else:
            taken = take(sc, rnd, warmup)
        if server is None:
            return dataclasses.replace(taken, client_rss=watcher.client_peak)
        server.wait_idle()  # the session's last processes exit: their CPU is counted too
        after = server.cpu_seconds()
        cpu = None if before is None or after is None else after - before
        return dataclasses.replace(
            taken, server_cpu=cpu, client_rss=watcher.client_peak, server_rss=watcher.server_peak
        )

    return sample


class StoreSink:
    """Scheduler sink that writes each sample to the run's scenarios in the store."""

    def __init__(self, store: Store, ids: dict[str, int]) -> None:
        self.store, self.ids = store, ids

    def sample(self, sample: Sample) -> None:
        """Store one sample now."""
        self.store.add_sample(self.ids[sample.scenario.key], sample)

    def failed(self, scenario: Scenario, reason: str) -> None:
        """Record an unmeasurable scenario."""
        self.store.mark_failed(self.ids[scenario.key], reason)


class ThroughputSampler:
    """Take throughput samples, sizing each scenario's transfer for about `sample_seconds` after warm-up."""

    def __init__(self, ssh: str, target: Target, opts: JobOptions, workdir: Path) -> None:
        self.ssh, self.target, self.opts = ssh, target, opts
        self.payload = Payload(opts.payload, workdir)
        if opts.payload == "random" and Direction.DOWN in opts.directions:
            self.payload = dataclasses.replace(self.payload, remote_file=stage_random(ssh, target, self.payload))
        self.sizes: dict[str, int] = {}

    def prime(self, sc: Scenario, samples: tuple[Sample, ...]) -> None:
        """Reuse the size chosen by an interrupted run."""
        for s in samples:
            if s.ok and s.nbytes:
                self.sizes[sc.key] = s.nbytes if not s.warmup else self._size_for(s.value)

    def _size_for(self, rate: float | None) -> int:
        """Return the payload size for about `sample_seconds` at `rate` MB/s (whole MiB)."""
        wanted = (rate or 1.0) * MB * self.opts.sample_seconds
        return int(min(max(wanted, MIN_SIZE), MAX_SIZE)) // 2**20 * 2**20

    def cleanup(self) -> None:
        """Remove the random payload staged on a remote server."""
        remote = self.payload.remote_file
        if remote is not None and not self.target.embedded:
            run_timed(self.target.argv(self.ssh, [], f"rm -f -- {shlex.quote(remote)}"), timeout=60)

    def __call__(self, sc: Scenario, rnd: int, warmup: bool) -> Sample:
        """Take one sample; the warm-up sample calibrates the size."""
        calibration = int(CALIBRATION_SIZE * min(1.0, self.opts.sample_seconds)) // 2**20 * 2**20
        size = self.opts.size or self.sizes.get(sc.key, calibration)
        sample = throughput_sample(self.ssh, self.target, sc, size, self.payload, rnd, warmup)
        if warmup and sample.ok and self.opts.size is None:
            self.sizes[sc.key] = self._size_for(sample.value)
        return sample


def stage_random(ssh: str, target: Target, payload: Payload) -> str:
    """Put a 16 MiB random file on the server for random downloads and return its path there."""
    source = payload.upload_source(RANDOM_BLOCK)
    if target.embedded:
        return str(source)  # the embedded server runs on this machine, as this user
    with open(source, "rb") as f:
        done = run_timed(target.argv(ssh, [], STAGE_COMMAND), stdin=f, capture_stdout=True, timeout=300)
    path = done.stdout.decode(errors="replace").strip()
    if done.returncode != 0 or not path.startswith("/"):
        raise SshbenchError(
            f"could not stage the random payload on the server: {ssh_failure_reason(done.texts)}",
            place=target.describe(),
            fix="use --payload zero, or free space in the server's temp dir",
            code=ExitCode.MEASUREMENT_FAILED,
        )
    return path


def plan_scenarios(opts: JobOptions, disc: Discovery) -> tuple[list[Scenario], list[Scenario]]:
    """Validate requested algorithms and return (latency, throughput) scenarios."""
    server = disc.server_lists()
    chosen: dict[str, tuple[str, ...]] = {}
    for kind, requested in (
        ("kex", opts.kex),
        ("hostkey", opts.hostkeys),
        ("cipher", opts.ciphers),
        ("mac", opts.macs),
    ):
        scenarios.check_requested(kind, requested, disc.client[kind], server.get(kind))
        chosen[kind] = requested or disc.shared(kind)
    pick = {k: _default_choice(disc, k, chosen[k]) for k in chosen}
    lat: list[Scenario] = []
    if opts.measure_latency:
        lat = scenarios.latency_scenarios(
            chosen["kex"],
            chosen["hostkey"],
            pick["kex"],
            pick["hostkey"],
            full=opts.full_latency or bool(opts.kex and opts.hostkeys),
        )
    thr: list[Scenario] = []
    if opts.measure_throughput:
        mode = "all" if opts.macs else opts.mac_mode
        pairs = scenarios.cipher_mac_pairs(chosen["cipher"], chosen["mac"], pick["mac"], mode)
        # A sweep spends its budget on data: the handshake before each transfer is not timed, so it
        # uses a quick kex instead of the default (sntrup761 costs ~70 ms more here).
        quick = QUICK_KEX if opts.command == "sweep" and QUICK_KEX in disc.shared("kex") else None
        thr = scenarios.throughput_scenarios(pairs, opts.directions, kex=quick)
    return lat, thr


def _default_choice(disc: Discovery, kind: str, chosen: tuple[str, ...]) -> str:
    """Return the client's default algorithm of a kind if it is among those chosen, else the first chosen."""
    preferred = disc.preferred(kind)
    return preferred if preferred in chosen else (chosen[0] if chosen else "")


def require_connectable(disc: Discovery, target: Target) -> None:
    """Fail before measuring when even the default client profile cannot log in."""
    profile = disc.profiles[0]
    if profile.negotiated is not None:
        return
    reason = profile.failure or "unknown"
    code, fix = ExitCode.CONNECTION_FAILED, "check that the host is reachable: ssh -v " + target.spec
    if "Permission denied" in reason:
        code, fix = ExitCode.AUTH_FAILED, "sshbench logs in with your keys or agent: ssh-copy-id or ssh-add"
    elif "Host key verification failed" in reason:
        fix = "connect once with plain ssh to check and accept the host key (sshbench never skips that check)"
    raise SshbenchError(f"cannot log in: {reason}", place=target.describe(), fix=fix, code=code)


def open_run(
    store: Store,
    opts: JobOptions,
    target: str,
    env: dict[str, Any],
    ssh: str,
    resume: int | None,
    on_run: Callable[[int], None],
) -> int:
    """Create the run with its environment, or mark the resumed run running; return its id."""
    if resume is not None:
        store.set_status(resume, "running")
        return resume
    run_id = store.create_run(opts.command, target, opts.to_dict(), {**envinfo.collect(ssh), **env})
    on_run(run_id)
    return run_id


@contextlib.contextmanager
def recording_status(store: Store, run_id: int) -> Iterator[None]:
    """Give the run its final status: complete, failed, or interrupted (Ctrl-C, SIGTERM; --resume finishes it)."""
    try:
        yield
    except Exception:
        store.set_status(run_id, "failed")
        raise
    except BaseException:
        store.set_status(run_id, "interrupted")
        raise
    store.set_status(run_id, "complete")


def run_job(
    store: Store,
    opts: JobOptions,
    progress: Progress,
    resume: int | None = None,
    on_run: Callable[[int], None] = lambda run_id: None,
) -> int:
    """Run (or resume) a job; every sample is stored as it is taken. Return the run id."""
    ssh = require_binary("ssh", "openssh-client")
    emulated = emulation.apply(opts.emulate, remote=not is_local(opts.target))  # before any ssh/sshd starts
    with (
        open_target(opts.target, ssh, opts.ssh_config) as (target, server),
        tempfile.TemporaryDirectory(prefix="sshbench-payload-") as tmp,
    ):
        pinned = pinning.apply(opts.pin, [server] if server else [])
        disc = discover(ssh, target)
        env = {
            "server_banner": disc.server.banner if disc.server else None,
            "target": target.describe(),
            **server_info(server),
            "emulation": emulated,
            "pinning": pinned,
        }
        run_id = open_run(store, opts, opts.target, env, ssh, resume, on_run)
        store.set_discovery(run_id, disc.to_dict())
        with recording_status(store, run_id):
            if opts.measure_latency or opts.measure_throughput:
                require_connectable(disc, target)
                _measure(store, run_id, opts, disc, ssh, (target, server), Path(tmp), progress)
            if opts.command == "sweep":
                stored = store.scenarios(run_id)
                document = analysis.to_document(stored, disc.to_dict(), policy.resolve(opts.policy), opts.full_latency)
                store.set_analysis(run_id, document)
        return run_id


def _measure(
    store: Store,
    run_id: int,
    opts: JobOptions,
    disc: Discovery,
    ssh: str,
    where: tuple[Target, LocalServer | None],
    workdir: Path,
    progress: Progress,
) -> None:
    """Schedule latency, then throughput, resuming from what the run already stored."""
    target, server = where
    started = time.monotonic()
    lat, thr = plan_scenarios(opts, disc)
    ids = store.add_scenarios(run_id, [*lat, *thr])
    stored = {s.scenario.key: s for s in store.scenarios(run_id)}
    sink = StoreSink(store, ids)
    if lat:
        take = metered(lambda sc, r, w: latency_sample(ssh, target, sc, r, w), server, watch_memory=False)
        schedule(opts.plan, lat, take, sink, progress, stored, "latency")
    if thr:
        sampler = ThroughputSampler(ssh, target, opts, workdir)
        for sc in thr:
            if sc.key in stored:
                sampler.prime(sc, stored[sc.key].samples)
        take = metered(sampler, server, watch_memory=True)
        try:
            schedule(remaining(opts.plan, started), thr, take, sink, progress, stored, "throughput")
        finally:
            sampler.cleanup()


def remaining(plan: Plan, started: float) -> Plan:
    """Return the plan with what is left of its --max-time budget (one budget for the whole job)."""
    if plan.max_time is None:
        return plan
    return dataclasses.replace(plan, max_time=max(plan.max_time - (time.monotonic() - started), 0.0))


def schedule(
    plan: Plan,
    scenarios: list[Scenario],
    take: Sampler,
    sink: StoreSink,
    progress: Progress,
    stored: dict[str, StoredScenario],
    label: str,
) -> None:
    """Run one interleaved schedule, continuing from the samples an interrupted run stored."""
    sched = Scheduler(plan, take, sink, progress)
    for sc in scenarios:
        if sc.key in stored:
            sched.resume_from(sc, stored[sc.key].samples, stored[sc.key].failure)
    sched.run(scenarios, label)


def server_info(server: LocalServer | None) -> dict[str, Any]:
    """Return what the results must say about an embedded server: its settings and CPU accounting."""
    if server is None:
        return {}
    accounting = f"cgroup {server.group.version} ({server.group.path})" if server.group else None
    return {
        "server_name": server.name,
        "server_product": server.product,
        "server_settings": list(server.settings),
        "server_cpu_accounting": accounting,
        "server_cpu_unavailable": server.cpu_note or None,
    }
