"""A fleet: many hosts, `--forks` at a time. Each reached host gets a run of its own under the fleet run:
its discovery (KEXINIT offer, default and strict negotiation), its connection time per key exchange the policy
allows (plus today's default), and with `--throughput` a few ciphers both ways, one host at a time so that
hosts never share this machine's CPU. A host that cannot be reached, or refuses the login, is recorded with
its reason and the others go on. Every sample is stored as it is taken; `--resume` measures again the hosts
that did not finish.
"""

from __future__ import annotations

import contextlib
import dataclasses
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from sshbench import kex
from sshbench.discovery import Discovery
from sshbench.environment import Environment
from sshbench.errors import ExitCode, SshbenchError
from sshbench.joboptions import FleetOptions, JobOptions
from sshbench.jobs.endpoints import Endpoint, require_connectable
from sshbench.jobs.recording import Job, Recording
from sshbench.jobs.staging import Bench, Staging
from sshbench.measure.plan import check_requested, cipher_mac_pairs, throughput_scenarios
from sshbench.measure.scheduler import Progress, Sampler
from sshbench.model import Kind, Scenario
from sshbench.records import Fleet, FleetHost, StoredScenario
from sshbench.runkinds import RunKind
from sshbench.samples import RunStatus, Sample
from sshbench.ssh import inventory
from sshbench.ssh.destination import Target
from sshbench.ssh.discover import client_algorithms
from sshbench.storage.store import Store

# The ciphers `--throughput` measures by default (those the policy allows and the host offers): the usual
# candidates, so that a production host moves a few hundred MB, not every cipher it offers.
FLEET_CIPHERS = (
    "aes128-gcm@openssh.com",
    "aes256-gcm@openssh.com",
    "chacha20-poly1305@openssh.com",
    "aes128-ctr",
)
Allows = Callable[[str, str], bool]  # (kind, algorithm) -> the security policy allows it


class Stopped(BaseException):
    """A worker's host measurement was stopped (Ctrl-C, SIGTERM, or another host's storage error)."""


@dataclass(frozen=True)
class Planned:
    """A reached host, ready for its transfers: where it is, its run, and what it measures."""

    index: int
    endpoint: Endpoint
    run_id: int
    opts: JobOptions
    latency: tuple[Scenario, ...]
    throughput: tuple[Scenario, ...]


@dataclass(frozen=True)
class Work:
    """What every host's worker shares: the fleet's state, the bench, the run's options and policy, the stop."""

    state: FleetState
    bench: Bench
    env: Environment
    opts: JobOptions
    allows: Allows
    stop: threading.Event


def select_hosts(opts: JobOptions) -> tuple[str, list[FleetHost]]:
    """Return where the hosts come from (for people) and the hosts of the fleet's one source."""
    own = opts.own_as(FleetOptions)
    if own.inventory:
        limit = f" (--limit {own.limit})" if own.limit else ""
        return f"Ansible inventory {own.inventory}{limit}", inventory.from_inventory(own.inventory, own.limit)
    if own.hosts:
        config = Path(opts.ssh_config) if opts.ssh_config else Path.home() / ".ssh" / "config"
        return f"{config} Host {own.hosts}", inventory.from_ssh_config(config, own.hosts)
    assert own.hosts_file, "the CLI requires one source"
    return f"hosts file {own.hosts_file}", inventory.from_file(Path(own.hosts_file))


class FleetState:
    """The fleet run's host list, updated from several threads and stored as each host changes."""

    def __init__(self, run_id: int, source: str, hosts: Sequence[FleetHost]) -> None:
        self.run_id, self.source, self.hosts = run_id, source, list(hosts)
        self.lock = threading.Lock()
        self.planned: dict[int, Planned] = {}

    def update(self, store: Store, index: int, **changes: object) -> None:
        """Change one host and store the whole list at once."""
        with self.lock:
            self.hosts[index] = dataclasses.replace(self.hosts[index], **changes)  # type: ignore[arg-type]
            store.set_fleet(self.run_id, Fleet(self.source, tuple(self.hosts)))


class FleetProgress:
    """One progress bar for several hosts measured at once: the sum of their rounds, the latest host's step."""

    def __init__(self, outer: Progress) -> None:
        self.outer, self.lock = outer, threading.Lock()
        self.steps: dict[str, tuple[int, int]] = {}

    def host(self, name: str) -> Progress:
        """Return the progress of one host."""
        return _HostProgress(self, name)

    def update(self, name: str, description: str, done: int, total: int) -> None:
        """Record one host's progress and show the fleet's."""
        with self.lock:
            self.steps[name] = (done, total)
            finished = sum(d for d, _ in self.steps.values())
            self.outer.update(f"{name}: {description}", finished, sum(t for _, t in self.steps.values()))


@dataclass(frozen=True)
class _HostProgress:
    """A host's view of the fleet's progress bar."""

    fleet: FleetProgress
    name: str

    def update(self, description: str, done: int, total: int) -> None:
        """Report this host's progress."""
        self.fleet.update(self.name, description, done, total)


def run_fleet(job: Job) -> int:
    """Run (or resume) a fleet under the job's policy (`Job.allows`); return the fleet run's id."""
    opts = job.opts
    ssh = job.ssh
    client = client_algorithms(ssh)
    for kind, names in (("kex", opts.kex), ("cipher", opts.ciphers)):
        check_requested(kind, names, client[kind], None)  # a bad name fails before any host is reached
    if job.resume is None:
        source, hosts = select_hosts(opts)
        if not hosts:
            raise SshbenchError(
                "the host source selects no hosts", place=source, fix="check the source or --limit", code=ExitCode.USAGE
            )
    with job.stage(Staging((), ssh), opts, job.progress) as bench:
        env = bench.environment()
        if job.resume is None:
            rec = job.record(source, env)
        else:
            rec = job.record("", env)
            stored = job.store.run(rec.run_id).fleet
            assert stored is not None, "only fleet runs are resumed here"
            source, hosts = stored.source, list(stored.hosts)
        state = FleetState(rec.run_id, source, hosts)
        job.store.set_fleet(rec.run_id, Fleet(source, tuple(hosts)))
        with rec.status():
            try:
                _measure(job, state, bench, env)
            except BaseException:
                with contextlib.suppress(Exception):  # best effort: the error that stopped the fleet is the one to tell
                    _settle_children(job.store, state, interrupted=True)
                raise
        return rec.run_id


def _measure(job: Job, state: FleetState, bench: Bench, env: Environment) -> None:
    """Reach and time every host (forks at a time), then move data to one host at a time."""
    progress = FleetProgress(job.progress)
    todo = [i for i, h in enumerate(state.hosts) if _needs_work(job.store, h)]
    shared = Work(state, bench, env, job.opts, job.allows, threading.Event())
    bench.hooks.append(lambda take: stoppable(take, shared.stop))  # a host's schedule stops with the fleet

    def work(index: int) -> None:
        """Reach one host and time its connections, in a thread of its own with a store of its own."""
        store = Store(job.store.path)
        try:
            _reach(shared, store, index, progress.host(state.hosts[index].name))
        finally:
            store.close()

    parallel(todo, job.opts.own_as(FleetOptions).forks, work, shared.stop)
    for index in sorted(state.planned):
        _transfers(job.store, state, state.planned[index], bench, progress)
    _settle_children(job.store, state, interrupted=False)


def _needs_work(store: Store, host: FleetHost) -> bool:
    """Return True for a host not yet measured to the end (a resumed fleet skips the finished ones, and a host its
    source refused, e.g. `ansible_connection=local`, is never reached)."""
    if host.run is None:
        return not (host.failure or "").startswith(inventory.REFUSED)
    return store.run(host.run).status is not RunStatus.COMPLETE


def parallel(items: Sequence[int], forks: int, work: Callable[[int], None], stop: threading.Event) -> None:
    """Run `work` on every item with at most `forks` at once; on Ctrl-C or an error, stop the others and re-raise."""
    pending: queue.Queue[int] = queue.Queue()
    for item in items:
        pending.put(item)
    failures: list[BaseException] = []

    def worker() -> None:
        """Take items until none are left or the fleet is stopped."""
        while not stop.is_set():
            try:
                item = pending.get_nowait()
            except queue.Empty:
                return
            try:
                work(item)
            except Stopped:
                return
            except BaseException as exc:  # a storage error: the whole fleet stops, with that cause
                failures.append(exc)
                stop.set()
                return

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(min(forks, len(items)))]
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join()
    except BaseException:
        stop.set()  # workers stop before their next sample; their ssh clients die with the client cgroup
        for t in threads:
            t.join(timeout=2.0)
        raise
    if failures:
        raise failures[0]


def _reach(work: Work, store: Store, index: int, progress: Progress) -> None:
    """Resolve and discover one host, store its run, and time its connections (a failure stays with the host)."""
    state, bench, opts = work.state, work.bench, work.opts
    host = state.hosts[index]
    progress.update("discovery", 0, 1)
    try:
        where = bench.add_remote(host.name, host.options)
    except SshbenchError as exc:
        state.update(store, index, failure=exc.cause)
        return
    disc = bench.discover(where)
    if disc.server is None and disc.default() is None:
        state.update(store, index, failure=_login_failure(disc, where.target))
        return
    host_opts = dataclasses.replace(opts, command=RunKind.RUN, target=host.name)
    banner = disc.server.banner if disc.server else None
    host_env = dataclasses.replace(work.env, server_banner=banner, target=where.target.describe())
    rec = Recording.open(store, host_opts, host.name, host_env, resume=host.run, parent=state.run_id)
    store.set_discovery(rec.run_id, disc)
    if disc.default() is None:
        rec.settle(RunStatus.FAILED)  # its offer is kept, nothing more will be written
        state.update(store, index, run=rec.run_id, failure=_login_failure(disc, where.target))
        return
    state.update(store, index, run=rec.run_id, failure=None)
    lat, thr = connection_scenarios(disc, opts, work.allows), transfer_scenarios(disc, opts, work.allows)
    rec.register([*lat, *thr])
    rec.schedule(lat, bench.latency(where), progress)
    with state.lock:
        state.planned[index] = Planned(index, where, rec.run_id, host_opts, tuple(lat), tuple(thr))


def _login_failure(disc: Discovery, target: Target) -> str:
    """Return why a host cannot be measured, as the single-target commands say it."""
    try:
        require_connectable(disc, target)
    except SshbenchError as exc:
        return exc.cause
    return "unknown"


def stoppable(take: Sampler, stop: threading.Event) -> Sampler:
    """Stop a host's schedule before its next sample once the fleet is stopped."""

    def sample(sc: Scenario, rnd: int, warmup: bool) -> Sample:
        """Take one sample unless the fleet was stopped."""
        if stop.is_set():
            raise Stopped
        return take(sc, rnd, warmup)

    return sample


def connection_scenarios(disc: Discovery, opts: JobOptions, allows: Allows) -> list[Scenario]:
    """Return today's connection (the default kex and host key) first, then each other kex the policy allows."""
    default = disc.default()
    assert default is not None
    shared = disc.shared("kex")
    wanted = [k for k in (opts.kex or shared) if k in shared and allows("kex", k)]
    kexes = dict.fromkeys(k for k in (default.kex, *wanted) if k)
    if not opts.kex:  # one algorithm under two names once: the default's own name first
        kexes = dict.fromkeys(kex.merged(kexes, (default.kex or "",)))
    return [Scenario(Kind.LATENCY, kex=k, hostkey=default.hostkey) for k in kexes]


def transfer_scenarios(disc: Discovery, opts: JobOptions, allows: Allows) -> list[Scenario]:
    """Return the throughput scenarios of `--throughput`: a few allowed ciphers (default MAC), both ways."""
    if not opts.measure_throughput:
        return []
    shared = disc.shared("cipher")
    ciphers = [c for c in (opts.ciphers or FLEET_CIPHERS) if c in shared and (opts.ciphers or allows("cipher", c))]
    macs = [m for m in disc.shared("mac") if allows("mac", m)] or list(disc.shared("mac"))
    mac = next((m for m in disc.defaults.get("mac", ()) if m in macs), macs[0] if macs else "")
    return throughput_scenarios(cipher_mac_pairs(ciphers, [], mac, "default"), opts.directions)


def _transfers(store: Store, state: FleetState, planned: Planned, bench: Bench, progress: FleetProgress) -> None:
    """Measure one host's transfers (no other host is measured meanwhile)."""
    if not planned.throughput:
        return
    rec = Recording(store, planned.run_id, planned.opts.plan, margin=planned.opts.margin)
    rec.register([*planned.latency, *planned.throughput])
    transfers = bench.transfers(planned.endpoint)
    for sc in planned.throughput:
        transfers.prime(sc, rec.samples(sc))
    try:
        name = state.hosts[planned.index].name
        taker = bench.sampler(transfers, planned.endpoint, watch_memory=True)
        rec.schedule(planned.throughput, taker, progress.host(name))
    finally:
        transfers.cleanup()


def _settle_children(store: Store, state: FleetState, interrupted: bool) -> None:
    """Give each host's run its final status, and name the hosts whose measurements all failed."""
    for index, host in enumerate(list(state.hosts)):
        record = None if host.run is None else store.run(host.run)
        if record is None or record.status is not RunStatus.RUNNING:
            continue
        rec = Recording(store, record.id, record.options.plan)
        rec.settle(RunStatus.INTERRUPTED if interrupted else rec.outcome())
        broken = None if interrupted else _all_failed(store.scenarios(record.id))
        if broken:
            state.update(store, index, failure=broken)


def _all_failed(stored: Sequence[StoredScenario]) -> str | None:
    """Return why a host's connections all failed (it was reached, then could not be measured), or None."""
    timed = [st for st in stored if st.scenario.kind is Kind.LATENCY]
    if timed and not any(s.ok for st in timed for s in st.samples):
        errors = [s.error for st in timed for s in st.samples if s.error] + [st.failure for st in timed if st.failure]
        return f"every connection failed: {errors[0] if errors else 'no sample was taken'}"
    return None
