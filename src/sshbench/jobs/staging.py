"""Staging: the one step every measuring job takes before it measures, and what it hands over (the `Bench`).

`with stage(staging, opts, progress) as bench:` contains every ssh client (a cgroup that dies with sshbench),
sets the emulated CPU, builds and verifies the emulated link, starts the embedded servers (or resolves the remote
hosts) behind it with their CPU limits, limits the clients, pins both sides, and makes the job's scratch
directory; on the way out it undoes all of that in reverse order. A `Bench` holds the endpoints (one per target:
servers side by side are several, a fleet adds its hosts as it reaches them) and is the only way a job touches
them: discovery, probes, the environment, crypto ceilings, memory snapshots and the samplers all come from it,
and every sampler it hands out passes through its `hooks` (code run around each sample, such as a fleet's stop
check or kernel evidence read while a transfer runs). A fake bench (tests/fakes.py) supplies fakes for all of
these, so a job's logic runs with no servers and no root.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from sshbench import leases
from sshbench.clients.launch import Detected, Launcher, dbclient_home, dbclient_problem, resolve, verifiable
from sshbench.discovery import Discovery
from sshbench.environment import Emulation, Environment, Pinning
from sshbench.errors import ExitCode, SshbenchError
from sshbench.joboptions import JobOptions
from sshbench.jobs.endpoints import Endpoint, Unavailable, constrain, emulated_link, open_endpoints
from sshbench.measure import budget
from sshbench.measure.clientside import ClientCopies, ClientTransfers, connection_sample
from sshbench.measure.costs import metered
from sshbench.measure.memory import measure_states
from sshbench.measure.remedies import CopySampler, Sizing, master
from sshbench.measure.samplers import ThroughputSampler, latency_sampler
from sshbench.measure.scheduler import Progress, Sampler
from sshbench.measure.tools import Binaries, Plain, ToolSampler
from sshbench.measure.witness import witnessed
from sshbench.model import Direction, Scenario, is_local
from sshbench.records import MemoryRecord
from sshbench.samples import Sample
from sshbench.ssh import envinfo
from sshbench.ssh.destination import resolve_remote
from sshbench.ssh.discover import discover
from sshbench.ssh.scratch import RemoteScratch, remote_scratch, remote_stdout
from sshbench.targets.helpers.plain import plain_servers
from sshbench.targets.limits import ceilings, cgroups, emulation, pinning
from sshbench.targets.link.netns import EmulatedLink
from sshbench.targets.servers import registry

Hook = Callable[[Sampler], Sampler]  # wraps a sampler: code run around each of its samples


class Copies(Protocol):
    """`tune`'s copy sampler: sized once the defaults are measured, cleaned up after."""

    copy_sizes: dict[Direction | None, int]

    def size_copies(self, sizing: Sizing) -> None:
        """Size each direction's copies."""

    def cleanup(self) -> None:
        """Remove what the sampler staged."""

    def __call__(self, sc: Scenario, rnd: int, warmup: bool) -> Sample:
        """Take one sample."""


class Transfers(Protocol):
    """A throughput sampler: sized from what a run already stored, cleaned up after."""

    def prime(self, sc: Scenario, samples: Sequence[Sample]) -> None:
        """Size a scenario's transfers from its stored samples."""

    def cleanup(self) -> None:
        """Remove what the sampler staged."""

    def __call__(self, sc: Scenario, rnd: int, warmup: bool) -> Sample:
        """Take one sample."""


@dataclass(frozen=True)
class Staging:
    """What a job asks to be staged: its targets, the ssh client, and its scratch directory."""

    specs: tuple[str, ...]  # `local[:NAME]` specs and remote destinations; empty for a fleet (hosts come later)
    ssh: str
    workdir: str = "sshbench-payload-"  # the scratch directory's prefix
    tmpfs: str | None = None  # where the scratch directory goes (None: the temp dir)
    tolerant: bool = False  # a server that cannot start is reported (`Bench.unavailable`), not fatal


@dataclass
class Bench:
    """A staged job: its endpoints, link, limits and scratch directory, and every way to sample them."""

    ssh: str
    opts: JobOptions
    endpoints: dict[str, Endpoint]
    link: EmulatedLink | None = None
    emulated: Emulation | None = None
    pinned: Pinning | None = None
    client_limit: str | None = None
    workdir: Path = Path()
    unavailable: dict[str, Unavailable] = field(default_factory=dict)
    hooks: list[Hook] = field(default_factory=list)
    stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)
    connection_info: dict[str, dict[str, str]] = field(default_factory=dict)  # endpoint -> its master's conninfo

    @property
    def only(self) -> Endpoint:
        """Return the single endpoint of a one-target job."""
        (endpoint,) = self.endpoints.values()
        return endpoint

    def add_remote(self, name: str, options: Sequence[str] = ()) -> Endpoint:
        """Resolve one more remote host (a fleet's) into an endpoint; fails with the reason it cannot."""
        endpoint = Endpoint(name, resolve_remote(self.ssh, name, self.opts.ssh_config, tuple(options)), None)
        self.endpoints[name] = endpoint
        return endpoint

    def discover(self, endpoint: Endpoint) -> Discovery:
        """Read what the endpoint's server offers and what the client profiles negotiate with it."""
        return discover(self.ssh, endpoint.target)

    def probe(self, endpoint: Endpoint) -> budget.Probe | None:
        """Time one connection (and one calibration transfer) for the budget's estimate."""
        return budget.probe(self.ssh, endpoint.target, self.opts, self.workdir)

    def environment(self, endpoint: Endpoint | None = None, disc: Discovery | None = None, **more: Any) -> Environment:
        """Return the run's environment: this machine and client, the emulation, pinning, client limit and link,
        the endpoint and its server when there is one, and `more`."""
        link = self.link.info() if self.link else None
        env = dataclasses.replace(
            envinfo.collect(self.ssh),
            emulation=self.emulated,
            pinning=self.pinned,
            client_limit=self.client_limit,
            link=link,
        )
        if endpoint is not None:
            env = dataclasses.replace(
                env,
                server_banner=disc.server.banner if disc and disc.server else None,
                target=endpoint.target.describe(),
                embedded=endpoint.server.info() if endpoint.server else None,
            )
        return dataclasses.replace(env, **more)

    def ceilings(self, ciphers: list[str], endpoint: Endpoint) -> dict[str, dict[str, float]]:
        """Measure each cipher's crypto ceiling per side under its limits; a remote host's side over ssh; none for an
        embedded server whose crypto is its own (Dropbear, TinySSH, Go's x/crypto: `openssl speed` says nothing of
        it)."""
        caps = registry.capabilities(endpoint.target.server) if endpoint.server is not None else None
        if caps is not None and caps.own_crypto:
            return {}
        if endpoint.server is not None:
            return ceilings.measure(ciphers, endpoint.server)
        return ceilings.measure(ciphers, None, remote=lambda command: remote_stdout(self.ssh, endpoint.target, command))

    def memory(self, endpoint: Endpoint) -> tuple[list[MemoryRecord], list[str]]:
        """Snapshot an embedded server's memory idle, in a session and in a transfer (records, problems)."""
        assert endpoint.server is not None, "memory is measured on embedded servers only"
        return measure_states(self.ssh, endpoint.server, endpoint.target)

    def sampler(self, take: Sampler, endpoint: Endpoint, watch_memory: bool) -> Sampler:
        """Return `take` with the costs of each sample (server CPU, peak memory), the kernel's evidence of its
        sockets, and the bench's hooks around it."""
        wrapped = metered(take, endpoint.server, watch_memory)
        server = endpoint.server
        if self.opts.kernel_evidence:
            wrapped = witnessed(wrapped, endpoint.target.port, server.pid if server else None, server is not None)
        for hook in self.hooks:
            wrapped = hook(wrapped)
        return wrapped

    def latency(self, endpoint: Endpoint) -> Sampler:
        """Return the connection-time sampler of an endpoint."""
        return self.sampler(
            latency_sampler(self.ssh, endpoint.target, self.workdir / f"wire-{endpoint.target.port}.json"),
            endpoint,
            False,
        )

    def transfers(self, endpoint: Endpoint) -> Transfers:
        """Return a new throughput sampler of an endpoint (without costs: wrap it with `sampler`)."""
        return ThroughputSampler(self.ssh, endpoint.target, self.opts, self.workdir)

    def copies_at_once(self, endpoint: Endpoint) -> Copies:
        """Return `tune`'s copy sampler of an endpoint: a copy over N connections at once, timed from the first spawn
        to the last exit (without costs: wrap it with `sampler`; `cleanup` it after)."""
        return CopySampler(ThroughputSampler(self.ssh, endpoint.target, self.opts, self.workdir))

    @contextlib.contextmanager
    def through_master(self, endpoint: Endpoint) -> Iterator[Sampler]:
        """Yield the sampler of a connection through a master connection (ControlMaster) to an endpoint, with costs;
        the master, this process's child, is stopped after by its PID, once `connection_info` has its account."""
        with master(self.ssh, endpoint.target, self.workdir) as reuse:
            yield self.sampler(reuse.sample, endpoint, False)
            if info := reuse.conninfo():  # the master's own account, before it stops (OpenSSH 10.3+)
                self.connection_info[endpoint.name] = info

    def can_widen(self, endpoint: Endpoint) -> bool:
        """Return True when the endpoint is an embedded server whose type has a receive-window option."""
        caps = registry.capabilities(endpoint.target.server) if endpoint.server is not None else None
        return caps is not None and caps.window_option is not None

    def widened(self, endpoint: Endpoint, window: int) -> Endpoint:
        """Start a second embedded server like the endpoint's (its limits and link too) with a receive window of
        `window` bytes; it is stopped with the bench."""
        assert endpoint.server is not None, "only an embedded server is widened"
        wide = registry.widened(endpoint.server.spec, window)
        assert wide is not None, "widened only where can_widen"
        constrain(wide, self.opts, self.link)
        target = self.stack.enter_context(wide)
        pinning.join(self.pinned, wide)
        return Endpoint(f"{endpoint.name} (wider window)", target, wide)

    def configured(self, endpoint: Endpoint, options: tuple[str, ...]) -> Endpoint:
        """Start a second embedded server like the endpoint's (its limits and link too) with sshd_config options
        (`KEY=VALUE`); it is stopped with the bench. Fails saying why for a server that takes none."""
        assert endpoint.server is not None, "only an embedded server is configured"
        other = registry.configured(endpoint.server.spec, options)
        if other is None:
            raise SshbenchError(
                f"{endpoint.server.product} takes no sshd_config options",
                place="--server-option",
                fix="use an embedded OpenSSH (local:openssh or local:sshd=PATH)",
                code=ExitCode.USAGE,
            )
        constrain(other, self.opts, self.link)
        target = self.stack.enter_context(other)
        pinning.join(self.pinned, other)
        return Endpoint(f"{endpoint.name} with {' '.join(options)}", target, other)

    def holding(self, endpoint: Endpoint, connections: int) -> Endpoint:
        """Return the endpoint, or a second embedded server like it (its limits and link too) that keeps
        `connections` connections at once where its type's own does not; it is stopped with the bench."""
        assert endpoint.server is not None, "only an embedded server holds sessions for sshbench"
        other = registry.holding(endpoint.server.spec, connections)
        if other is None:
            return endpoint
        constrain(other, self.opts, self.link)
        target = self.stack.enter_context(other)
        pinning.join(self.pinned, other)
        return Endpoint(endpoint.name, target, other)

    @contextlib.contextmanager
    def tool_dirs(
        self, endpoint: Endpoint, tmpfs: str | None, baselines: bool = True
    ) -> Iterator[tuple[Path | RemoteScratch, Plain | None]]:
        """Yield the server's directory for file copies and the plaintext baselines: a private tmpfs directory on
        this machine and socat/rsyncd beside an embedded server; a scratch directory on a remote host and no
        baselines (sshbench starts no listeners on a host it does not own)."""
        if endpoint.server is None:
            with remote_scratch(self.ssh, endpoint.target) as scratch:
                yield scratch, None
            return
        if not baselines:
            with leases.private_dir("sshbench-server-", tmpfs) as remote:
                yield remote, None
            return
        with (
            leases.private_dir("sshbench-server-", tmpfs) as remote,
            plain_servers(remote, self.link, endpoint.server, self.workdir) as listening,
        ):
            yield remote, Plain(**dataclasses.asdict(listening))

    def copies(self, bins: Binaries, endpoint: Endpoint, remote: Path | RemoteScratch, plain: Plain | None) -> Sampler:
        """Return the file-copy sampler (scp, sftp, rsync and the baselines) of an endpoint, without costs."""
        return ToolSampler(bins, endpoint.target, self.opts, self.workdir, remote, plain)

    def client(self, endpoint: Endpoint, found: Detected, hostkeys: Sequence[str]) -> Launcher | str:
        """Return how a client other than ssh reaches an endpoint (its files live until the bench is undone), or
        why it cannot: a path it cannot follow, or a host key it could not verify."""
        address = resolve(self.ssh, endpoint.target)
        problem = verifiable(address, found.kind)
        if problem is not None or found.kind.library:
            return problem or Launcher(found, address)
        home, keys = self.stack.enter_context(dbclient_home(address))
        if not keys:
            return f"none of the identities {', '.join(address.keys)} converts to Dropbear's format (dropbearconvert)"
        return dbclient_problem(address, hostkeys, home) or Launcher(
            found, address, keys, {**os.environ, "HOME": str(home)}
        )

    def client_latency(self, endpoint: Endpoint, launcher: Launcher) -> Sampler:
        """Return a client's connection-time sampler (cold, or in-process for a library), with costs."""
        take: Sampler = lambda sc, rnd, warmup: connection_sample(launcher, sc, rnd, warmup)  # noqa: E731
        return self.sampler(take, endpoint, False)

    def client_transfers(self, endpoint: Endpoint, launcher: Launcher) -> Transfers:
        """Return a client's exec-channel throughput sampler (without costs: wrap it with `sampler`)."""
        return ClientTransfers(launcher, self.ssh, endpoint.target, self.opts, self.workdir)

    def client_copies(
        self, bins: Binaries, endpoint: Endpoint, launcher: Launcher, remote: Path | RemoteScratch
    ) -> Sampler:
        """Return a library's SFTP get/put sampler, without costs."""
        return ClientCopies(launcher, bins, endpoint.target, self.opts, self.workdir, remote)


Stager = Callable[[Staging, JobOptions, Progress], contextlib.AbstractContextManager[Bench]]


@contextlib.contextmanager
def stage(staging: Staging, opts: JobOptions, progress: Progress) -> Iterator[Bench]:
    """Stage a job (see the module's docstring); undo it all on the way out."""
    remote = not any(is_local(s) for s in (staging.specs or (opts.target,)) if s)  # no embedded server at all
    emulated = emulation.apply(opts.emulate, remote=remote)  # before any ssh or sshd starts
    with contextlib.ExitStack() as stack:
        stack.enter_context(cgroups.contain())  # every ssh client is killed with sshbench
        link = stack.enter_context(emulated_link(opts, progress))
        endpoints, unavailable = open_endpoints(
            staging.specs, staging.ssh, staging.tolerant, opts, link, stack, progress
        )
        workdir = stack.enter_context(leases.private_dir(staging.workdir, staging.tmpfs))
        client_limit = stack.enter_context(
            cgroups.limit_clients(opts.client_cpu, cgroups.period_us(opts.cpu_period_ms))
        )
        servers = [e.server for e in endpoints.values() if e.server is not None]
        pinned = pinning.apply(opts.pin, servers) if staging.specs else None  # a fleet is never pinned
        yield Bench(
            staging.ssh, opts, endpoints, link, emulated, pinned, client_limit, workdir, unavailable, stack=stack
        )
