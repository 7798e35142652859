"""The `clients` job: SSH clients side by side on the same server, interleaved round by round under one budget.

Per client (clienttypes.py): connection time from a cold process (a library's driver: its start included, a
Python interpreter's and import for a Python library) and, for a library, inside one live process; exec-channel
throughput per cipher both ways (AES-GCM and chacha20-poly1305 by default, as `tools`; a cipher a client or the
server lacks is a row marked n/a with the reason; a client left with none of them takes the first cipher it shares
with the server); SFTP get and put; each library both as its users run it and tuned (clienttypes.py names
each setting, and the jobs its tuning changes). With --kex, connection time per key exchange instead: a library's
logins inside one live process (its start would drown a kex's cost), a binary's from spawn to exit, each client
pinned to each kex it and the server have (under the client's own name for it), n/a with the reason for the rest.
Each client's key exchanges (what it offers, in its order) and the one it negotiates with each server (RFC 4253's
rule: the first of the client's that the server offers) are stored with the run. The server is the embedded
OpenSSH by default, any TARGET, or several embedded servers (--server: the client x server matrix). Rounds visit
every client, so drift on a shared machine hits them alike; each sample is stored as it is taken."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sshbench import kex as kexes
from sshbench.clients.launch import Detected, Launcher, detect
from sshbench.clienttypes import client_type
from sshbench.discovery import Discovery
from sshbench.errors import ExitCode, SshbenchError
from sshbench.joboptions import ClientsOptions
from sshbench.jobs.endpoints import Endpoint, require_connectable, require_started
from sshbench.jobs.recording import Job, Recording
from sshbench.jobs.staging import Bench, Staging, Transfers
from sshbench.measure import budget
from sshbench.measure.scheduler import Progress, Sampler
from sshbench.measure.tools import Binaries
from sshbench.model import IN_PROCESS, Direction, Kind, Scenario, is_aead, is_local
from sshbench.samples import Sample
from sshbench.ssh.proc import beside
from sshbench.ssh.scratch import RemoteScratch
from sshbench.targets.servers import registry

DEFAULT_CIPHERS = ("aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com")
TMPFS = "/dev/shm"
Taker = tuple[str, str, Kind]  # (endpoint, client, kind)


@dataclass(frozen=True)
class Offer:
    """What planning needs of a server: its ciphers, MACs and key exchanges, and why it cannot serve SFTP (None: it
    can)."""

    ciphers: tuple[str, ...]
    macs: tuple[str, ...]
    no_sftp: str | None = None
    kexes: tuple[str, ...] = ()


def _pick_mac(cipher: str | None, client: Detected, offer: Offer) -> str | None:
    """Return the MAC a non-AEAD cipher is pinned with: the client's first that the server offers (None: AEAD)."""
    if cipher is None or is_aead(cipher):
        return None
    return next((m for m in client.macs if m in offer.macs), None)


def _ciphers(client: Detected, wanted: Sequence[str], offer: Offer) -> tuple[list[str | None], list[tuple[str, str]]]:
    """Return the ciphers a client transfers with (None: its own choice) and the ones it cannot, with the reason."""
    if not client.ciphers:
        return [None], []
    usable = [c for c in wanted if c in offer.ciphers and c in client.ciphers]
    lacking = [
        (c, "the server does not offer it" if c not in offer.ciphers else f"{client.kind.name} has no {c}")
        for c in wanted
        if c not in usable
    ]
    chosen: list[str | None] = [*(usable or [c for c in client.ciphers if c in offer.ciphers][:1])]
    return chosen, lacking


def plan_client(
    client: Detected, wanted: Sequence[str], offer: Offer, directions: Sequence[Direction], server: str | None
) -> tuple[list[Scenario], list[tuple[Scenario, str]]]:
    """Return one client's scenarios on one server, and the rows it cannot measure with the reason."""
    kind, name = client.kind, client.kind.name
    if client.ciphers and not set(client.ciphers) & set(offer.ciphers):  # it could not even log in
        return [], [_unavailable(client, server, f"{name} shares no cipher with the server")]
    made = [Scenario(Kind.LATENCY, client=name, mode=m, server=server) for m in kind.modes("connect")]
    made += [Scenario(Kind.LATENCY, client=name, mode=IN_PROCESS, server=server)] if kind.library else []
    usable, lacking = _ciphers(client, wanted, offer)
    made += [
        Scenario(
            Kind.THROUGHPUT, client=name, mode=m, cipher=c, mac=_pick_mac(c, client, offer), direction=d, server=server
        )
        for c in usable
        for d in directions
        for m in kind.modes("exec")
    ]
    na = [
        (Scenario(Kind.THROUGHPUT, client=name, cipher=c, direction=d, server=server), f"unsupported: {why}")
        for c, why in lacking
        for d in directions
    ]
    first = usable[0] if usable else None
    copy = [
        Scenario(
            Kind.TOOL,
            tool="sftp",
            client=name,
            mode=m,
            cipher=first,
            mac=_pick_mac(first, client, offer),
            direction=d,
            server=server,
        )
        for d in directions
        for m in kind.modes("get" if d is Direction.DOWN else "put")
    ]
    why = offer.no_sftp or (None if kind.sftp else f"{kind.product} has no SFTP client")
    if why:
        return made, na + [(sc, f"unsupported: {why}") for sc in copy if sc.mode is None]
    return made + copy, na


def plan_kex(
    client: Detected, wanted: Sequence[str], offer: Offer, server: str | None
) -> tuple[list[Scenario], list[tuple[Scenario, str]]]:
    """Return one client's connection rows, one per key exchange it and the server have (a library's inside one live
    process), and the key exchanges it cannot use with the reason."""
    name = client.kind.name
    mode = IN_PROCESS if client.kind.library else None
    made: list[Scenario] = []
    na: list[tuple[Scenario, str]] = []
    for k in wanted:
        own = next((n for n in client.kexes if kexes.same(n, k)), None)
        row = Scenario(Kind.LATENCY, client=name, mode=mode, kex=own or k, server=server)
        if not any(kexes.same(n, k) for n in offer.kexes):
            na.append((row, f"unsupported: the server does not offer {k}"))
        elif not client.kexes:
            na.append((row, f"unsupported: {client.kind.product} cannot choose a key exchange"))
        elif own is None:
            na.append((row, f"unsupported: {client.version} has no {k}"))
        else:
            made.append(row)
    return made, na


def negotiated(client: Detected, offer: Offer) -> str | None:
    """Return the key exchange a client gets from a server unpinned: the first of its own, in its order, that the
    server offers (RFC 4253, 7.1); None when its order is not known."""
    return next((k for k in client.kex_default if any(kexes.same(k, s) for s in offer.kexes)), None)


def _unavailable(found: Detected, server: str | None, why: str) -> tuple[Scenario, str]:
    """Return the row that says a client did not run on a server, and why."""
    return Scenario(Kind.LATENCY, client=found.kind.name, server=server), f"unsupported: {why}"


def _offer(disc: Discovery, where: Endpoint) -> Offer:
    """Return what an endpoint's server offers."""
    lists = disc.server_lists()
    caps = registry.capabilities(where.target.server)
    no_sftp = f"{caps.name} has no SFTP server" if caps and caps.sftp is None else None
    return Offer(tuple(lists.get("cipher", ())), tuple(lists.get("mac", ())), no_sftp, tuple(lists.get("kex", ())))


def _binaries(ssh: str) -> Binaries:
    """Return the OpenSSH binaries the openssh client's rows use."""
    return Binaries(ssh=ssh, scp="", sftp=beside(ssh, "sftp", "openssh-client"), rsync="", socat="")


class _Plan:
    """The run's rows and the samplers that take them."""

    def __init__(self) -> None:
        self.scenarios: list[Scenario] = []
        self.unsupported: list[tuple[Scenario, str]] = []
        self.launchers: dict[tuple[str, str], Launcher | None] = {}  # None: OpenSSH's ssh, sampled as every run is
        self.discoveries: dict[str, Discovery] = {}
        self.negotiated: dict[str, dict[str, str]] = {}  # client -> endpoint -> the kex it gets unpinned


def _plan(bench: Bench, found: Sequence[Detected], matrix: bool) -> _Plan:
    """Discover every endpoint and plan every client on it."""
    plan = _Plan()
    wanted = bench.opts.ciphers or DEFAULT_CIPHERS
    for name, where in bench.endpoints.items():
        disc = plan.discoveries[name] = bench.discover(where)
        require_connectable(disc, where.target)
        server = name if matrix else None
        offer = _offer(disc, where)
        for client in found:
            if client.missing:
                plan.unsupported.append(_unavailable(client, server, client.missing))
                continue
            reach = (
                None if client.kind.ssh_itself else bench.client(where, client, disc.server_lists().get("hostkey", ()))
            )
            if isinstance(reach, str):
                plan.unsupported.append(_unavailable(client, server, reach))
                continue
            plan.launchers[(name, client.kind.name)] = reach
            if got := negotiated(client, offer):
                plan.negotiated.setdefault(client.kind.name, {})[name] = got
            if bench.opts.kex:
                rows, na = plan_kex(client, bench.opts.kex, offer, server)
            else:
                rows, na = plan_client(client, wanted, offer, bench.opts.directions, server)
            plan.scenarios += rows
            plan.unsupported += na
    order = {k: i for i, k in enumerate(("latency", IN_PROCESS, "throughput", "tool"))}
    plan.scenarios.sort(key=lambda sc: order[IN_PROCESS if sc.mode == IN_PROCESS else sc.kind.value])
    return plan


def _samplers(bench: Bench, where: Endpoint, launcher: Launcher | None) -> tuple[Sampler, Transfers]:
    """Return a client's connection sampler and its transfers (OpenSSH's ssh: sampled as every run samples it)."""
    if launcher is None:
        return bench.latency(where), bench.transfers(where)
    return bench.client_latency(where, launcher), bench.client_transfers(where, launcher)


def _copies(
    bench: Bench, bins: Binaries, where: Endpoint, launcher: Launcher | None, folder: Path | RemoteScratch
) -> Sampler:
    """Return a client's SFTP sampler (OpenSSH's: the `tools` job's sftp)."""
    if launcher is None:
        return bench.copies(bins, where, folder, None)
    return bench.client_copies(bins, where, launcher, folder)


def _takers(bench: Bench, plan: _Plan, shm: str | None, ssh: str, rec: Recording) -> dict[Taker, Sampler]:
    """Return each (endpoint, client, kind)'s sampler, with costs; transfers are sized from what a resumed run
    stored."""
    takers: dict[Taker, Sampler] = {}
    bins = _binaries(ssh) if any(sc.kind is Kind.TOOL for sc in plan.scenarios) else None
    dirs: dict[str, Path | RemoteScratch] = {}
    for (name, client), launcher in plan.launchers.items():
        where = bench.endpoints[name]
        takers[(name, client, Kind.LATENCY)], transfers = _samplers(bench, where, launcher)
        bench.stack.callback(transfers.cleanup)
        for sc in plan.scenarios:
            if sc.kind is Kind.THROUGHPUT and (sc.server or name, sc.client) == (name, client):
                transfers.prime(sc, rec.samples(sc))
        takers[(name, client, Kind.THROUGHPUT)] = bench.sampler(transfers, where, watch_memory=True)
        if bins is not None:
            if name not in dirs:
                dirs[name] = bench.stack.enter_context(bench.tool_dirs(where, shm, baselines=False))[0]
            copies = _copies(bench, bins, where, launcher, dirs[name])
            takers[(name, client, Kind.TOOL)] = bench.sampler(copies, where, watch_memory=True)
    return takers


def _dispatch(takers: dict[Taker, Sampler], single: str) -> Sampler:
    """Route each scenario to its endpoint's and client's sampler of its kind."""

    def take(sc: Scenario, rnd: int, warmup: bool) -> Sample:
        """Take a sample with the scenario's client on its server."""
        return takers[(sc.server or single, sc.client or "openssh", sc.kind)](sc, rnd, warmup)

    return take


def client_report(found: Sequence[Detected], negotiated: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    """Return what the run's environment says of each client: version and settings, its key exchanges and the one it
    negotiates with each server, or why it was skipped."""
    out: dict[str, dict[str, str]] = {}
    for f in found:
        entry = {"product": f.kind.product, "default": f.kind.default}
        entry |= {"kind": "library", "language": f.kind.language} if f.kind.library else {"kind": "binary"}
        entry |= {"tuned": f.kind.tuned} if f.kind.tuned else {}
        entry |= {"hurts": f.kind.hurts} if f.kind.hurts else {}
        entry |= {"skipped": f.missing} if f.missing else {"version": f.version}
        entry |= {"start_s": f"{f.start:.3f}"} if f.start else {}
        entry |= {"kex_offered": ",".join(f.kex_default)} if f.kex_default else {}
        entry |= {"kex_pinnable": str(len(f.kexes))} if f.kexes else {}
        got = negotiated.get(f.kind.name, {})
        per_server = "; ".join(f"with {s}: {k}" for s, k in got.items())
        entry |= {"kex_negotiated": next(iter(got.values())) if len(got) == 1 else per_server} if got else {}
        out[f.kind.name] = entry
    return out


def detect_clients(names: Sequence[str], ssh: str, progress: Progress) -> tuple[list[Detected], list[str]]:
    """Find each client asked for (building a Go or Rust driver the first time; `ssh` is the openssh row's); fail when
    none of them can run here. Return them and the clients whose driver was built now (its time is in the budget's
    set-up)."""
    progress.update("finding the clients (each library's driver starts once)", 0, 1)
    built: list[str] = []
    found = []
    for name in names:

        def building(text: str, name: str = name) -> None:
            """Show the build and remember it."""
            built.append(name)
            progress.update(text, 0, 1)

        found.append(detect(client_type(name), building, ssh))
    if all(f.missing for f in found):
        raise SshbenchError(
            "none of the clients asked for can run here: " + "; ".join(f"{f.kind.name}: {f.missing}" for f in found),
            place="--client",
            fix="install one, as each reason says",
            code=ExitCode.MISSING_BINARY,
        )
    return found, built


def _estimate(
    job: Job, bench: Bench, plan: _Plan, found: Sequence[Detected], built: Sequence[str], single: str, kept: float
) -> None:
    """Show the budget's estimate (a library's start added to each of its connections) or refuse the plan."""
    job.progress.update("probing what a connection and a transfer cost", 0, 1)
    probes = {name: bench.probe(where) for name, where in bench.endpoints.items()}
    start = {f.kind.name: f.start for f in found}

    def probe_for(sc: Scenario) -> budget.Probe | None:
        """Return the endpoint's probe, with the client's start added to each connection."""
        p = probes[sc.server or single]
        return p and dataclasses.replace(p, connection=p.connection + start.get(sc.client or "", 0.0))

    building = f"building the {', '.join(built)} driver{'s' if len(built) > 1 else ''} (once), " if built else ""
    what = f"finding clients, {building}discovery, probes"
    est = budget.estimate(plan.scenarios, job.opts, probe_for, job.elapsed(), what)
    job.plan_ready(est and dataclasses.replace(est, kept=kept))  # the next run finds the drivers built


def run_clients(job: Job) -> int:
    """Run (or resume) the clients comparison; return the run id."""
    opts = job.opts
    ssh = job.ssh
    before = job.elapsed()
    found, built = detect_clients(opts.own_as(ClientsOptions).clients, ssh, job.progress)
    kept = job.elapsed() - before if built else 0.0  # building drivers: once, not on the next run
    specs = tuple(registry.validate(s) if is_local(s) else s for s in (opts.servers or (opts.target,)))
    shm = TMPFS if os.access(TMPFS, os.W_OK) else None
    matrix = bool(opts.servers)
    staging = Staging(specs, ssh, workdir="sshbench-clients-", tmpfs=shm, tolerant=matrix)
    with job.stage(staging, opts, job.progress) as bench:
        require_started(bench.endpoints, bench.unavailable)
        plan = _plan(bench, found, matrix)
        single = next(iter(bench.endpoints))
        if job.resume is None:
            _estimate(job, bench, plan, found, built, single, kept)
        disc = None if matrix else plan.discoveries[single]
        env = bench.environment(None if matrix else bench.endpoints[single], disc)
        rec = job.record(" ".join(specs), dataclasses.replace(env, clients=client_report(found, plan.negotiated)))
        with rec.status():
            if disc is not None:
                job.store.set_discovery(rec.run_id, disc)
            rec.register(plan.scenarios, plan.unsupported)
            rec.schedule(plan.scenarios, _dispatch(_takers(bench, plan, shm, ssh, rec), single), job.progress)
        return rec.run_id
