"""The `servers` job: embedded OpenSSH, Dropbear, TinySSH (or any sshd by path) measured side by side.

All servers run at once on 127.0.0.1 so that rounds interleave across servers (slow drift on a shared
machine hits every server alike). Per server: discovery (offer, default and strict negotiation), memory
per process role (idle, session, transfer), then latency per profile x host-key type and throughput per
cipher in both directions, each sample with the server's CPU from its cgroup. Everything is stored as
it is taken; `--resume` continues with freshly started servers.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sshbench import emulation, pinning, servers
from sshbench.discover import Discovery, discover
from sshbench.embedded import LocalServer
from sshbench.errors import ExitCode, SshbenchError
from sshbench.job import (
    JobOptions,
    StoreSink,
    ThroughputSampler,
    metered,
    open_run,
    recording_status,
    remaining,
    schedule,
    server_info,
)
from sshbench.measure import latency_sample
from sshbench.memory import measure_states
from sshbench.model import STRICT_PROFILE, Kind, Sample, Scenario, is_aead
from sshbench.proc import require_binary
from sshbench.scheduler import Progress, Sampler
from sshbench.store import Store
from sshbench.target import Target

HOSTKEY_FAMILIES = {
    "ed25519": ("ssh-ed25519",),
    "ecdsa": ("ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521"),
    "rsa": ("rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"),
}
PROFILES = ("default", "strict")


@dataclass(frozen=True)
class Running:
    """One started embedded server with what discovery learned about it."""

    server: LocalServer
    target: Target
    discovery: Discovery


@dataclass(frozen=True)
class ServerPlan:
    """What to measure on one server, and what cannot be measured there (with the reason)."""

    latency: tuple[Scenario, ...]
    throughput: tuple[Scenario, ...]
    unsupported: tuple[tuple[Scenario, str], ...]


def _offered(disc: Discovery, kind: str) -> tuple[str, ...]:
    """Return what the server offers of a kind (or the shared list when its KEXINIT is unknown)."""
    return disc.server_lists().get(kind) or disc.shared(kind)


def plan_server(name: str, disc: Discovery, opts: JobOptions) -> ServerPlan:
    """Plan one server's scenarios: profiles x host keys, ciphers x directions; unsupported ones get a reason."""
    lat: list[Scenario] = []
    thr: list[Scenario] = []
    unsupported: list[tuple[Scenario, str]] = []
    shared_hk, offered_hk = disc.shared("hostkey"), ", ".join(_offered(disc, "hostkey"))
    wanted = opts.hostkeys or tuple(
        next((a for a in algs if a in shared_hk), algs[0]) for algs in HOSTKEY_FAMILIES.values()
    )
    profiles = {p.name: p for p in disc.profiles}
    if opts.measure_latency:
        for hostkey in wanted:
            for profile in PROFILES:
                strict = profile == "strict"
                sc = Scenario(
                    Kind.LATENCY,
                    kex=STRICT_PROFILE["KexAlgorithms"] if strict else None,
                    hostkey=hostkey,
                    cipher=STRICT_PROFILE["Ciphers"] if strict else None,
                    server=name,
                    profile=profile,
                )
                p = profiles.get(profile)
                if hostkey not in shared_hk:
                    unsupported.append((sc, f"unsupported: {name} offers host keys {offered_hk}"))
                elif p is not None and p.negotiated is None:
                    unsupported.append((sc, f"{profile} profile fails to connect: {p.failure}"))
                else:
                    lat.append(sc)
    if opts.measure_throughput:
        shared_c = disc.shared("cipher")
        mac = disc.preferred("mac")
        for cipher in opts.ciphers or shared_c:
            for direction in opts.directions:
                sc = Scenario(
                    Kind.THROUGHPUT,
                    cipher=cipher,
                    mac=None if is_aead(cipher) else mac,
                    direction=direction,
                    server=name,
                )
                if cipher not in shared_c:
                    reason = f"unsupported: {name} offers ciphers {', '.join(_offered(disc, 'cipher'))}"
                    unsupported.append((sc, reason))
                else:
                    thr.append(sc)
    return ServerPlan(tuple(lat), tuple(thr), tuple(unsupported))


def _start_all(
    ssh: str, specs: tuple[str, ...], stack: contextlib.ExitStack, progress: Progress
) -> tuple[dict[str, Running], dict[str, dict[str, Any]]]:
    """Start every available server; return the running ones and what to report about each."""
    running: dict[str, Running] = {}
    info: dict[str, dict[str, Any]] = {}
    for i, spec in enumerate(specs):
        name = servers.server_name(spec)
        hint = servers.missing(spec)
        if hint:
            info[name] = {"spec": spec, "skipped": hint}
            continue
        progress.update(f"starting {name}", i, len(specs))
        server = servers.make_server(spec)
        try:
            target = stack.enter_context(server)
        except SshbenchError as exc:
            info[name] = {"spec": spec, "failed": exc.cause}
            continue
        disc = discover(ssh, target)
        running[name] = Running(server, target, disc)
        info[name] = {"spec": spec, **server_info(server), "discovery": disc.to_dict()}
    return running, info


def run_servers(
    store: Store,
    opts: JobOptions,
    progress: Progress,
    resume: int | None = None,
    on_run: Callable[[int], None] = lambda run_id: None,
) -> int:
    """Run (or resume) the side-by-side comparison; return the run id."""
    ssh = require_binary("ssh", "openssh-client")
    specs = tuple(servers.validate(s) for s in (opts.servers or servers.every()))
    emulated = emulation.apply(opts.emulate, remote=False)  # before any server starts
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="sshbench-payload-")))
        running, info = _start_all(ssh, specs, stack, progress)
        if not running:
            _none_started(info)
        env = {"emulation": emulated, "pinning": pinning.apply(opts.pin, [r.server for r in running.values()])}
        run_id = open_run(store, opts, " ".join(specs), env, ssh, resume, on_run)
        store.set_discovery(run_id, {"servers": info})
        with recording_status(store, run_id):
            _memory(store, run_id, ssh, running, info, progress)
            _measure(store, run_id, opts, ssh, running, tmp, progress)
        return run_id


def _none_started(info: dict[str, dict[str, Any]]) -> None:
    """Fail naming why no server could be started (not installed, or did not start)."""
    reasons = "; ".join(f"{name}: {i.get('skipped') or i.get('failed')}" for name, i in info.items())
    skipped_only = all("skipped" in i for i in info.values())
    raise SshbenchError(
        f"no embedded server could be started ({reasons or 'none requested'})",
        place="sshbench servers",
        fix="install the servers (scripts/setup installs all three), or name installed ones",
        code=ExitCode.MISSING_BINARY if skipped_only else ExitCode.SERVER_START,
    )


def _memory(
    store: Store,
    run_id: int,
    ssh: str,
    running: dict[str, Running],
    info: dict[str, dict[str, Any]],
    progress: Progress,
) -> None:
    """Take each server's memory snapshots once (a resumed run keeps those already stored)."""
    done = {m.server for m in store.memory(run_id)}
    for i, (name, r) in enumerate(running.items()):
        if name in done or r.discovery.default() is None:
            continue
        progress.update(f"memory: {name} idle, in a session, in a transfer", i, len(running))
        records, problems = measure_states(ssh, r.server, r.target)
        store.add_memory(run_id, records)
        if problems:
            info[name]["memory_problems"] = problems
            store.set_discovery(run_id, {"servers": info})


def _measure(
    store: Store,
    run_id: int,
    opts: JobOptions,
    ssh: str,
    running: dict[str, Running],
    workdir: Path,
    progress: Progress,
) -> None:
    """Interleave latency across servers, then throughput, resuming from stored samples."""
    started = time.monotonic()
    plans = {name: plan_server(name, r.discovery, opts) for name, r in running.items() if r.discovery.default()}
    lat = [sc for p in plans.values() for sc in p.latency]
    thr = [sc for p in plans.values() for sc in p.throughput]
    unsupported = [u for p in plans.values() for u in p.unsupported]
    ids = store.add_scenarios(run_id, [*lat, *thr, *(sc for sc, _ in unsupported)])
    for sc, reason in unsupported:
        store.mark_failed(ids[sc.key], reason)
    stored = {s.scenario.key: s for s in store.scenarios(run_id)}
    sink = StoreSink(store, ids)
    if lat:
        takers = {name: metered(_latency_taker(ssh, r), r.server, watch_memory=False) for name, r in running.items()}
        schedule(opts.plan, lat, _dispatch(takers), sink, progress, stored, "latency")
    if thr:
        samplers = {name: ThroughputSampler(ssh, r.target, opts, workdir) for name, r in running.items()}
        for sc in thr:
            if sc.key in stored and sc.server is not None:
                samplers[sc.server].prime(sc, stored[sc.key].samples)
        takers = {name: metered(samplers[name], r.server, watch_memory=True) for name, r in running.items()}
        schedule(remaining(opts.plan, started), thr, _dispatch(takers), sink, progress, stored, "throughput")


def _latency_taker(ssh: str, r: Running) -> Sampler:
    """Return the latency sampler for one server."""
    return lambda sc, rnd, warmup: latency_sample(ssh, r.target, sc, rnd, warmup)


def _dispatch(takers: dict[str, Sampler]) -> Sampler:
    """Route each scenario to its server's sampler."""

    def take(sc: Scenario, rnd: int, warmup: bool) -> Sample:
        """Take a sample on the scenario's server."""
        assert sc.server is not None
        return takers[sc.server](sc, rnd, warmup)

    return take
