"""Test doubles and hand-made data: a fake clock and sampler (like hyperfine's mock executor), a progress
recorder, stored scenarios with chosen values, and a fake bench on which every job runs with no server, so that
scheduling, statistics, jobs and rendering are exact."""

from __future__ import annotations

import contextlib
import dataclasses
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sshbench.clients.launch import Address, Detected, Launcher
from sshbench.discovery import Discovery, Negotiated, Profile, ServerOffer
from sshbench.environment import EmbeddedInfo, Emulation, Environment
from sshbench.errors import SshbenchError
from sshbench.joboptions import JobOptions, LoadOptions
from sshbench.jobs.endpoints import Endpoint, Unavailable, refuse_remote_limits
from sshbench.jobs.staging import Bench, Stager, Staging
from sshbench.loadsteps import StepKey
from sshbench.measure.budget import Probe
from sshbench.measure.remedies import Sizing
from sshbench.measure.scheduler import Progress, Sampler
from sshbench.measure.tools import Binaries
from sshbench.model import Direction, Kind, Scenario
from sshbench.records import MemoryRecord, RunRecord, StoredScenario
from sshbench.runkinds import RunKind
from sshbench.samples import RunStatus, Sample
from sshbench.ssh.destination import Target
from sshbench.storage.store import Store

CHACHA, GCM, CTR = "chacha20-poly1305@openssh.com", "aes128-gcm@openssh.com", "aes128-ctr"
SNTRUP = "sntrup761x25519-sha512@openssh.com"


def stored_values(sc: Scenario, values: list[float]) -> StoredScenario:
    """Return a stored scenario with the given measured values (plus one warm-up)."""
    samples = [Sample(sc, 0, True, True, values[0] * 0.5, 1.0)]
    samples += [Sample(sc, i, False, True, v, 1.0, nbytes=2**28) for i, v in enumerate(values, 1)]
    return StoredScenario(0, 0, sc, None, tuple(samples))


def stored_copies(sc: Scenario, steady: float, fixed: float, size: int = 128 * 2**20) -> StoredScenario:
    """Return 6 rounds of `tune` copies of `size` bytes at `steady` MB/s past `fixed` seconds (+-2 % a round)."""
    samples = []
    for i, noise in enumerate((0.98, 1.0, 1.02, 0.99, 1.01, 1.0), 1):
        wall = (fixed + size / (steady * 1e6)) * noise
        samples.append(Sample(sc, i, False, True, size / wall / 1e6, wall, nbytes=size, phases=(("fixed", fixed),)))
    return StoredScenario(0, 0, sc, None, tuple(samples))


def transfer(cipher: str, mac: str | None, rate: float, d: Direction) -> StoredScenario:
    """Return a throughput scenario around `rate` MB/s (+-1 %)."""
    sc = Scenario(Kind.THROUGHPUT, cipher=cipher, mac=mac, direction=d)
    return stored_values(sc, [rate * f for f in (0.99, 1.0, 1.01, 0.995, 1.005, 1.0)])


def connection(kex: str, hostkey: str, seconds: float) -> StoredScenario:
    """Return a latency scenario around `seconds`."""
    values = [seconds * f for f in (0.99, 1, 1.01, 1, 1, 1)]
    return stored_values(Scenario(Kind.LATENCY, kex=kex, hostkey=hostkey), values)


def failed_connection(kex: str, hostkey: str, reason: str) -> StoredScenario:
    """Return a latency scenario whose every sample failed, marked failed with `reason` (as the store keeps it)."""
    sc = Scenario(Kind.LATENCY, kex=kex, hostkey=hostkey)
    samples = tuple(Sample(sc, 0, True, False, None, 0.1, error=reason) for _ in range(1))
    return StoredScenario(0, 0, sc, reason, samples)


def factorised_sweep() -> list[StoredScenario]:
    """A small factorised sweep: AEAD ciphers, CBC and CTR with the default MAC, MACs with aes128-ctr."""
    rates = {
        (GCM, None): 1000,
        (CHACHA, None): 600,
        ("aes128-cbc", "umac-64-etm@openssh.com"): 1200,
        (CTR, "umac-64-etm@openssh.com"): 500,
        (CTR, "hmac-sha2-256-etm@openssh.com"): 400,
        (CTR, "hmac-sha1"): 450,
    }
    stored = [transfer(c, m, r, d) for (c, m), r in rates.items() for d in Direction]
    stored += [
        connection("sntrup761x25519-sha512@openssh.com", "ssh-ed25519", 0.200),
        connection("curve25519-sha256", "ssh-ed25519", 0.130),
        connection("ecdh-sha2-nistp256", "ssh-ed25519", 0.120),
        connection("sntrup761x25519-sha512@openssh.com", "rsa-sha2-512", 0.210),
    ]
    return stored


DISCOVERY = Discovery(
    client={},
    defaults={},
    server=None,
    server_error=None,
    profiles=(Profile("default", Negotiated(SNTRUP, "ssh-ed25519", CHACHA, None, None), None),),
)
ENVIRONMENT = Environment(
    cpu_model="Test CPU",
    cpus=2,
    cpu_flags={"aes": True, "pclmulqdq": True},
    kernel="6.1",
    openssh_client="OpenSSH_9.2p1",
    openssl="OpenSSL 3.0",
    server_banner="SSH-2.0-OpenSSH_9.2p1",
    target="embedded openssh server 127.0.0.1:2222",
)


def stored_run_record(kind: RunKind = RunKind.SWEEP, run_id: int = 1) -> RunRecord:
    """Return a complete run's header with test values."""
    opts = JobOptions(command=kind)
    when = "2026-11-22T10:00:00.000+00:00"
    return RunRecord(run_id, when, when, RunStatus.COMPLETE, kind, "local", opts, ENVIRONMENT, DISCOVERY)


class FakeClock:
    """A clock that moves only when told to."""

    def __init__(self, start: float = 100.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Let time pass."""
        self.now += seconds


@dataclass
class FakeSampler:
    """A sampler returning chosen values (None: a failed sample) and taking `seconds` of fake time per sample."""

    values: Callable[[Scenario, int], float | None]
    clock: FakeClock = field(default_factory=FakeClock)
    seconds: float = 1.0
    calls: list[tuple[str, int, bool]] = field(default_factory=list)  # (label, round, warm-up) in order

    def __call__(self, sc: Scenario, rnd: int, warmup: bool) -> Sample:
        """Take one fake sample."""
        self.calls.append((sc.label, rnd, warmup))
        self.clock.advance(self.seconds)
        value = self.values(sc, rnd)
        if value is None:
            return Sample(sc, rnd, warmup, ok=False, value=None, wall=self.seconds, error="fake: no such cipher")
        nbytes = 2**28 if sc.kind is Kind.THROUGHPUT else None
        phases = (
            ()
            if nbytes
            else (
                ("startup", 0.002),
                ("tcp", 0.001),
                ("version", 0.004),
                ("kex", value / 2),
                ("auth", value / 4),
                ("session", value / 4 - 0.007),
            )
        )
        return Sample(sc, rnd, warmup, True, value, self.seconds, nbytes=nbytes, client_cpu=0.25, phases=phases)


@dataclass
class ListSink:
    """A scheduler sink that keeps what it is given."""

    samples: list[Sample] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)

    def sample(self, sample: Sample) -> None:
        """Keep a sample."""
        self.samples.append(sample)

    def failed(self, scenario: Scenario, reason: str) -> None:
        """Keep a failure."""
        self.failures[scenario.label] = reason


@dataclass
class ListProgress:
    """A progress receiver that keeps every update."""

    updates: list[tuple[str, int, int]] = field(default_factory=list)

    def update(self, description: str, done: int, total: int) -> None:
        """Keep an update."""
        self.updates.append((description, done, total))


# A database of hand-made runs for reading commands (compare, report): runs 1 and 2 differ only in GCM's rate
# (and run 2's environment says it was emulated); run 3 is a servers run with memory snapshots.
OPTIONS = JobOptions(command=RunKind.RUN)


def _samples(sc: Scenario, center: float, spread: float = 0.01, **extra: object) -> list[Sample]:
    """Return one warm-up and eight samples around `center`."""
    factors = (1 - spread, 1, 1 + spread, 1 - spread / 2, 1 + spread / 2, 1, 1 - spread / 3, 1 + spread / 3)
    out = [Sample(sc, 0, True, True, center, 1.0)]
    for i, f in enumerate(factors, 1):
        out.append(Sample(sc, i, False, True, center * f, 1.0, **extra))  # type: ignore[arg-type]
    return out


def _add_run(store: Store, env: Environment, rates: dict[str, float], conn: float) -> int:
    """Store a run with connection and transfer scenarios (values chosen by the test)."""
    run_id = store.create_run(OPTIONS, "local", env)
    phases = (("tcp", 0.001), ("version", 0.004), ("kex", conn * 0.5), ("auth", conn * 0.3), ("session", 0.01))
    lat = Scenario(Kind.LATENCY, kex="curve25519-sha256", hostkey="ssh-ed25519")
    scenarios = {lat.key: (lat, _samples(lat, conn, phases=phases))}
    for cipher, rate in rates.items():
        for d in Direction:
            sc = Scenario(Kind.THROUGHPUT, cipher=cipher, direction=d)
            extra = {"nbytes": 2**28, "client_cpu": 0.2, "server_cpu": 0.25}
            extra |= {"client_rss": 9 << 20, "server_rss": 15 << 20}
            scenarios[sc.key] = (sc, _samples(sc, rate, **extra))
    ids = store.add_scenarios(run_id, [sc for sc, _ in scenarios.values()])
    for key, (_, samples) in scenarios.items():
        for s in samples:
            store.add_sample(ids[key], s)
    default = Negotiated("curve25519-sha256", "ssh-ed25519", CHACHA, None, None)
    store.set_discovery(run_id, dataclasses.replace(DISCOVERY, profiles=(Profile("default", default, None),)))
    store.set_status(run_id, RunStatus.COMPLETE)
    return run_id


def runs_db(path: Path) -> Path:
    """Write a database with run 1, run 2 (GCM 20 % slower, emulated), run 3 (a servers run with memory) and run 4
    (a load run: two steps, the second with failures)."""
    store = Store(path)
    _add_run(store, ENVIRONMENT, {GCM: 1000.0, CHACHA: 600.0}, 0.130)
    emulated = dataclasses.replace(ENVIRONMENT, emulation=Emulation("no-aesni", {}, (), ""))
    _add_run(store, emulated, {GCM: 800.0, CHACHA: 603.0}, 0.131)
    machine = dataclasses.replace(ENVIRONMENT, target=None)  # a servers run has no single target
    servers = store.create_run(JobOptions(command=RunKind.SERVERS), "local:openssh local:dropbear", machine)
    sc = Scenario(Kind.THROUGHPUT, cipher=CHACHA, direction=Direction.DOWN, server="dropbear")
    ids = store.add_scenarios(servers, [sc])
    for s in _samples(sc, 230.0, nbytes=2**27, client_cpu=0.3, server_cpu=0.6):
        store.add_sample(ids[sc.key], s)
    memory = [
        MemoryRecord("dropbear", state, role, 1, 4 << 20, 3 << 20, 1 << 20)
        for state, role in (("idle", "listener"), ("session", "session"))
    ]
    store.add_memory(servers, memory)
    store.set_status(servers, RunStatus.COMPLETE)
    _add_load_run(store)
    store.close()
    return path


def _add_load_run(store: Store) -> None:
    """Store a load run of two 2 s steps: 10/s clean, 20/s with a slow tail and two drops."""
    opts = JobOptions(
        command=RunKind.LOAD, measure_throughput=False, own=LoadOptions(rates=(10.0, 20.0), step_time=2.0)
    )  # as `load` stores it: logins only
    run = store.create_run(opts, "local:openssh", ENVIRONMENT)
    for rate in (10.0, 20.0):
        sc = Scenario(Kind.LATENCY, load=StepKey.rate(rate))
        sid = store.add_scenarios(run, [sc])[sc.key]
        for i in range(int(rate * 2)):
            at = i / rate
            dropped = rate == 20.0 and i in (7, 8)
            latency = 0.080 + (0.4 if rate == 20.0 and i > 30 else 0.0)
            error = "kex_exchange_identification: Connection closed by remote host" if dropped else None
            phases = (("intended", at), ("late", 0.001))
            store.add_sample(
                sid,
                Sample(
                    sc,
                    i + 1,
                    False,
                    not dropped,
                    None if dropped else latency,
                    wall=latency,
                    client_cpu=0.002,
                    phases=phases,
                    error=error,
                ),
            )
    store.set_status(run, RunStatus.COMPLETE)


def add_sessions_run(path: Path) -> int:
    """Store a `load --job session` run of steps 1, 10 and 100 (OpenSSH-like: 1.5 MiB a session and a `cat` of 0.1
    MiB) in the database at `path`; return its id."""
    store = Store(path)
    opts = JobOptions(command=RunKind.SESSIONS, own=LoadOptions(job="session", generator="go", sessions=(1, 10, 100)))
    embedded = EmbeddedInfo("openssh", "OpenSSH", (), None, None)
    run = store.create_run(opts, "local:openssh", dataclasses.replace(ENVIRONMENT, embedded=embedded))
    memory = [MemoryRecord("openssh", "idle", "listener", 1, 0, 12 << 20, 6 << 20)]
    for n in (1, 10, 100):
        sc = Scenario(Kind.LATENCY, load=StepKey.sessions(n))
        sid = store.add_scenarios(run, [sc])[sc.key]
        for i in range(n):
            store.add_sample(sid, Sample(sc, i + 1, False, True, 0.09, 0.09, client_cpu=0.002))
        rest = (("held", float(n)), ("rest", 2.0), ("rest_cgroup", 1.0))
        store.add_sample(sid, Sample(sc, 0, True, True, None, 2.0, phases=rest, server_cpu=0.0004))
        memory += [
            MemoryRecord("openssh", str(sc.load), "listener", 1, 0, 12 << 20, 5 << 20),
            MemoryRecord("openssh", str(sc.load), "session", n, 0, n * (10 << 20), n * (3 << 19)),
            MemoryRecord("openssh", str(sc.load), "command", n, 0, n * (1 << 20), n * (1 << 17)),
        ]
    store.add_memory(run, memory)
    store.set_status(run, RunStatus.COMPLETE)
    store.close()
    return run


# A fake bench (like hyperfine's MockExecutor): `Job(..., stage=fake_stage())` runs a job's whole logic (staging,
# discovery, planning, scheduling, storing) with no servers, no root and no ssh connection.
CURVE, ED25519, UMAC = "curve25519-sha256", "ssh-ed25519", "umac-64-etm@openssh.com"
FAKE_LISTS = {
    "kex": (CURVE, SNTRUP),
    "hostkey": (ED25519, "rsa-sha2-512"),
    "cipher": (GCM, CHACHA, CTR),
    "mac": (UMAC, "hmac-sha2-256-etm@openssh.com"),
}
FAKE_RATES = {GCM: 900.0, CHACHA: 600.0, CTR: 450.0}  # MB/s of a transfer, per cipher
FAKE_CONNECT = {CURVE: 0.110, SNTRUP: 0.160}  # seconds of a connection, per kex


def fake_discovery(banner: str = "SSH-2.0-OpenSSH_9.2p1") -> Discovery:
    """Return a discovery in which both sides offer FAKE_LISTS and both client profiles connect."""
    offer = ServerOffer(banner, FAKE_LISTS["kex"], FAKE_LISTS["hostkey"], FAKE_LISTS["cipher"], FAKE_LISTS["mac"])
    default = Negotiated(CURVE, ED25519, CHACHA, None, banner)
    profiles = (Profile("default", default, None), Profile("strict", default, None))
    return Discovery(dict(FAKE_LISTS), dict(FAKE_LISTS), offer, None, profiles)


def fake_value(sc: Scenario, rnd: int) -> float:
    """Return a fake sample's value: the scenario's rate or connection time, +-1 % by round."""
    wobble = 1 + ((rnd * 7) % 5 - 2) / 200
    if sc.kind is Kind.THROUGHPUT:
        return FAKE_RATES.get(sc.cipher or "", 300.0) * wobble
    return FAKE_CONNECT.get(sc.kex or "", 0.120) * wobble


@dataclass
class FakeTransfers(FakeSampler):
    """A throughput sampler with nothing to stage."""

    primed: list[str] = field(default_factory=list)
    cleaned: bool = False

    def prime(self, sc: Scenario, samples: Sequence[Sample]) -> None:
        """Note which scenarios were sized."""
        self.primed.append(sc.label)

    def cleanup(self) -> None:
        """Note the clean-up."""
        self.cleaned = True


@dataclass
class FakeCopies(FakeTransfers):
    """`tune`'s copy sampler with nothing to stage: it remembers the sizes it was given."""

    copy_sizes: dict[Direction | None, int] = field(default_factory=dict)
    sized: list[Sizing] = field(default_factory=list)  # what each sizing was given

    def size_copies(self, sizing: Sizing) -> None:
        """Give each direction a copy of 8 MiB and note what sized it."""
        self.sized.append(sizing)
        self.copy_sizes.update(dict.fromkeys(sizing.rates, 8 * 2**20))


@dataclass(frozen=True)
class FakeServer:
    """What a job reads of an embedded server, with no process behind it."""

    spec: str
    name: str

    def info(self) -> EmbeddedInfo:
        """Return the server's settings as a run records them."""
        return EmbeddedInfo(self.name, f"fake {self.name}", ("fake settings",), None, None, None, None)


@dataclass
class FakeBench(Bench):
    """A bench whose endpoints answer with FAKE_LISTS, FAKE_RATES and FAKE_CONNECT and take no time."""

    taken: list[tuple[str, str, int, bool]] = field(default_factory=list)  # (endpoint, scenario, round, warm-up)
    copy_samplers: list[FakeCopies] = field(default_factory=list)  # `tune`'s, as handed out
    masters_stopped: int = 0
    widened_to: list[int] = field(default_factory=list)  # the windows of the second servers started
    unverifiable: tuple[str, ...] = ()  # clients whose host key check fails

    def add_remote(self, name: str, options: Sequence[str] = ()) -> Endpoint:
        """Add a fake remote host (`closed-*` names cannot be resolved)."""
        if name.startswith("closed"):
            raise SshbenchError("cannot resolve the host", place=name, fix="none: it is a fake")
        self.endpoints[name] = Endpoint(name, fake_target(name), None)
        return self.endpoints[name]

    def discover(self, endpoint: Endpoint) -> Discovery:
        """Return the fake discovery."""
        return fake_discovery(f"SSH-2.0-{endpoint.name}")

    def probe(self, endpoint: Endpoint) -> Probe | None:
        """Return a probe of 0.1 s per connection and 500 MB/s per transfer."""
        return Probe(0.1, 500.0, 500.0)

    def environment(self, endpoint: Endpoint | None = None, disc: Discovery | None = None, **more: Any) -> Environment:
        """Return the fake environment with the endpoint's name and `more`."""
        target = endpoint.target.describe() if endpoint else None
        return dataclasses.replace(ENVIRONMENT, target=target, **more)

    def ceilings(self, ciphers: list[str], endpoint: Endpoint) -> dict[str, dict[str, float]]:
        """Return ceilings of 2000 MB/s on each side."""
        return {c: {"client": 2000.0, "server": 2000.0} for c in ciphers}

    def memory(self, endpoint: Endpoint) -> tuple[list[MemoryRecord], list[str]]:
        """Return no memory records and no problems."""
        return [], []

    def sampler(self, take: Sampler, endpoint: Endpoint, watch_memory: bool) -> Sampler:
        """Return `take` noting each sample, with the bench's hooks (no costs: nothing runs)."""

        def noted(sc: Scenario, rnd: int, warmup: bool) -> Sample:
            self.taken.append((endpoint.name, sc.label, rnd, warmup))
            return take(sc, rnd, warmup)

        wrapped: Sampler = noted
        for hook in self.hooks:
            wrapped = hook(wrapped)
        return wrapped

    def latency(self, endpoint: Endpoint) -> Sampler:
        """Return a fake connection sampler."""
        return self.sampler(FakeSampler(fake_value, seconds=0.0), endpoint, False)

    def transfers(self, endpoint: Endpoint) -> FakeTransfers:
        """Return a fake throughput sampler."""
        return FakeTransfers(fake_value, seconds=0.0)

    def copies_at_once(self, endpoint: Endpoint) -> FakeCopies:
        """Return a fake copy sampler for `tune` (remembered in `copy_samplers`)."""
        made = FakeCopies(fake_value, seconds=0.0)
        self.copy_samplers.append(made)
        return made

    @contextlib.contextmanager
    def through_master(self, endpoint: Endpoint) -> Iterator[Sampler]:
        """Yield a fake connection sampler through a master connection; note that the master was stopped."""
        try:
            yield self.sampler(FakeSampler(fake_value, seconds=0.0), endpoint, False)
        finally:
            self.masters_stopped += 1

    def can_widen(self, endpoint: Endpoint) -> bool:
        """Return True for a fake embedded Dropbear (its window has an option)."""
        return endpoint.server is not None and endpoint.target.spec == "local:dropbear"

    def widened(self, endpoint: Endpoint, window: int) -> Endpoint:
        """Return a second fake server's endpoint, as if started with the larger window."""
        wide = Endpoint(f"{endpoint.name} (wider window)", fake_target("local:dropbear"), endpoint.server)
        self.widened_to.append(window)
        return wide

    @contextlib.contextmanager
    def tool_dirs(self, endpoint: Endpoint, tmpfs: str | None, baselines: bool = True) -> Iterator[tuple[Path, None]]:
        """Yield the scratch directory as the server's, with no baselines."""
        yield self.workdir, None

    def copies(self, bins: Binaries, endpoint: Endpoint, remote: object, plain: object) -> Sampler:
        """Return a fake file-copy sampler."""
        return FakeSampler(fake_value, seconds=0.0)

    def client(self, endpoint: Endpoint, found: Detected, hostkeys: Sequence[str]) -> Launcher | str:
        """Return a launcher that reaches nothing (a client named in `unverifiable` cannot verify the host)."""
        if found.kind.name in self.unverifiable:
            return f"{found.kind.name} cannot verify the host (fake)"
        return Launcher(found, Address("127.0.0.1", 1, "me", ("key",), ("known_hosts",), False))

    def client_latency(self, endpoint: Endpoint, launcher: Launcher) -> Sampler:
        """Return a fake connection sampler for a client."""
        return self.sampler(FakeSampler(fake_value, seconds=0.0), endpoint, False)

    def client_transfers(self, endpoint: Endpoint, launcher: Launcher) -> FakeTransfers:
        """Return a fake throughput sampler for a client."""
        return FakeTransfers(fake_value, seconds=0.0)

    def client_copies(self, bins: Binaries, endpoint: Endpoint, launcher: Launcher, remote: object) -> Sampler:
        """Return a fake SFTP sampler for a client."""
        return FakeSampler(fake_value, seconds=0.0)


def fake_target(spec: str) -> Target:
    """Return a target that names `spec` and reaches nothing."""
    return Target(spec, spec, (), "127.0.0.1", 1, embedded=spec.startswith("local"))


def fake_stage(
    servers_missing: Sequence[str] = (), unverifiable: Sequence[str] = (), made: list[FakeBench] | None = None
) -> Stager:
    """Return a stager of fake benches: each local spec a fake embedded server (except `servers_missing`, reported as
    not runnable here), each other spec a fake remote host; a private scratch directory; clients in `unverifiable`
    cannot verify any host; each bench made is appended to `made`."""

    @contextlib.contextmanager
    def stage(staging: Staging, opts: JobOptions, progress: Progress) -> Iterator[FakeBench]:
        endpoints: dict[str, Endpoint] = {}
        unavailable: dict[str, Unavailable] = {}
        for spec in staging.specs:
            name = spec.split(":", 1)[1] if staging.tolerant and ":" in spec else spec
            if name in servers_missing:
                unavailable[name] = Unavailable(name, spec, skipped=f"{name}: not found (fake)")
                continue
            if not spec.startswith("local"):
                refuse_remote_limits(opts)  # as the real staging does, before anything starts
            server = FakeServer(spec, name) if spec.startswith("local") else None
            endpoints[name] = Endpoint(name, fake_target(spec), server)  # type: ignore[arg-type]
        with tempfile.TemporaryDirectory(prefix="sbtest-fake-") as scratch, contextlib.ExitStack() as stack:
            bench = FakeBench(
                staging.ssh,
                opts,
                endpoints,
                workdir=Path(scratch),
                unavailable=unavailable,
                stack=stack,
                unverifiable=tuple(unverifiable),
            )
            if made is not None:
                made.append(bench)
            yield bench

    return stage
