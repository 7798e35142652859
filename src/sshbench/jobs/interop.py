"""The `interop` job: every client with every embedded server and every key exchange both have, many full logins
each, to find what fails rarely (a post-quantum encoding bug failed one handshake in 512 in Erlang/OTP).

A pair is a client, a server and a key exchange (a client that cannot be pinned to one: its own choice), pinned
under a name both sides speak (`curve25519-sha256` or its `@libssh.org` alias: one algorithm); with --kex, exactly
those, on every server (one whose offer has no spelling the client has is n/a, with its offer). Each server gets
its own worker that visits its pairs in a fresh random order every round, one login at a time, so no server sees
more than one unauthenticated connection from the soak (Dropbear allows 5 per address) and every pair is spread
over the whole soak. Libraries log in from one warm driver process (measure/interop.py); ssh and dbclient as a
process per login. Every login is stored the moment it ends, failed or not: an interrupted soak resumes where it
stopped. The plan is timed with one unstored login per pair first, and a plan that cannot fit the budget is refused
with the logins that would."""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import queue
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from sshbench import hints
from sshbench import kex as kexes
from sshbench.clients.launch import Detected, Launcher
from sshbench.errors import ExitCode, SshbenchError, Unfinished
from sshbench.joboptions import ClientsOptions
from sshbench.jobs import rekey
from sshbench.jobs.clients import client_report, detect_clients
from sshbench.jobs.endpoints import Endpoint, require_started
from sshbench.jobs.recording import Job, Recording, taken
from sshbench.jobs.staging import Bench, Staging
from sshbench.measure.budget import Estimate
from sshbench.measure.interop import Login, WarmDriver, process_login
from sshbench.model import IN_PROCESS, Kind, Scenario
from sshbench.targets.servers import registry

DEFAULT_SERVERS = ("local:openssh", "local:dropbear", "local:tinyssh", "local:gossh")
JOIN_WAIT = 5.0  # seconds to wait for a worker's login in flight when the soak stops


@dataclass(frozen=True)
class Pair:
    """One pair to soak: its row, and how one login of it is made."""

    scenario: Scenario
    login: Callable[[], Login]


def _shared(client: Detected, offered: Sequence[str]) -> list[str]:
    """Return the key exchanges a client can be pinned to that the server offers, each algorithm once, under a name
    both speak (of two spellings both have, the client's first): a name the server lacks would fail the pair."""
    both = [k for k in client.kexes if k in offered]
    return list(kexes.merged(both, client.kexes))


def _spoken(client: Detected, k: str, offered: Sequence[str]) -> tuple[str | None, str]:
    """Return the name a client is pinned to for the key exchange `k` on a server offering `offered` (`k` itself
    where both speak it, else another spelling both have; every spelling the client has when the server's offer is
    unknown), or None with why the pair cannot be soaked."""
    mine = [n for n in client.kexes if kexes.same(n, k)]
    if not mine:
        return None, f"unsupported: {client.version} has no {k}"
    spoken = [n for n in mine if n in offered] if offered else mine
    if not spoken:
        return None, f"unsupported: the server offers no {' or '.join(mine)} (its offer: {', '.join(offered)})"
    return (k if k in spoken else spoken[0]), ""


def plan_pairs(
    client: Detected,
    offered: Sequence[str],
    wanted: Sequence[str],
    server: str,
    hostkeys: Sequence[str] = (),
    ciphers: Sequence[str] = (),
) -> tuple[list[Scenario], list[tuple[Scenario, str]]]:
    """Return one client's rows on one server (its kexes that the server offers, or exactly `wanted`, each under a
    name both speak; each with every host key algorithm of `hostkeys`, or the default), and the rows it cannot soak
    with the reason (a kex the server does not offer; a client sharing no cipher with the server, `ciphers`, could
    not log in at all)."""
    mode = IN_PROCESS if client.kind.library else None
    name = client.kind.name

    def rows(k: str | None) -> list[Scenario]:
        """Return the rows of one key exchange (None: the client's own choice), one per host key asked for."""
        each: Sequence[str | None] = hostkeys or (None,)
        return [Scenario(Kind.LATENCY, client=name, mode=mode, kex=k, hostkey=h, server=server) for h in each]

    if client.ciphers and ciphers and not set(client.ciphers) & set(ciphers):  # it could not even log in
        return [], [(r, f"unsupported: {name} shares no cipher with the server") for r in rows(None)]
    if hostkeys and not client.kexes:
        return [], [(r, f"unsupported: {client.kind.product} cannot be pinned to a host key") for r in rows(None)]
    if not wanted:
        if not client.kexes:
            return rows(None), []
        shared = _shared(client, offered)
        if shared:
            return [r for k in shared for r in rows(k)], []
        return [], [(r, f"unsupported: {name} and the server share no key exchange") for r in rows(None)]
    made: list[Scenario] = []
    na: list[tuple[Scenario, str]] = []
    for k in wanted:
        if not client.kexes:
            na += [(r, f"unsupported: {client.kind.product} cannot be pinned to a key exchange") for r in rows(k)]
            continue
        own, why = _spoken(client, k, offered)
        made += rows(own) if own is not None else []
        na += [(r, why) for r in rows(k)] if own is None else []
    return made, na


class _Soak:
    """The soak's pairs, grouped by server, with the warm drivers they log in through."""

    def __init__(self) -> None:
        self.pairs: dict[str, list[Pair]] = {}  # server -> its pairs
        self.unsupported: list[tuple[Scenario, str]] = []
        self.drivers: dict[tuple[str, str], WarmDriver] = {}  # (server, client) -> its warm driver

    @property
    def scenarios(self) -> list[Scenario]:
        """Return every pair's row, server by server."""
        return [p.scenario for ps in self.pairs.values() for p in ps]

    def close(self) -> None:
        """Stop every warm driver."""
        for d in self.drivers.values():
            d.stop()


def _login(bench: Bench, where: Endpoint, sc: Scenario, launcher: Launcher | None, soak: _Soak) -> Callable[[], Login]:
    """Return how one login of a row is made: ssh or dbclient as a process, a library through its warm driver (one
    per client and server: the key exchange is given per login)."""
    if launcher is None:
        pin = ["-o", f"KexAlgorithms={sc.kex}"] if sc.kex else []
        pin += ["-o", f"HostKeyAlgorithms={sc.hostkey}"] if sc.hostkey else []
        pin += rekey.client_options(bench.opts.own_as(ClientsOptions).rekey)
        argv = where.target.argv(bench.ssh, pin, "true")
        return lambda: process_login(argv)
    if not launcher.client.kind.library:
        argv = launcher.argv(sc, "connect")
        return lambda: process_login(argv, launcher.env)
    key = (where.name, launcher.client.kind.name)
    if key not in soak.drivers:
        argv = launcher.argv(Scenario(Kind.LATENCY, client=sc.client), "soak")
        soak.drivers[key] = WarmDriver(argv, launcher.env)
    driver = soak.drivers[key]
    return lambda: driver.login(sc.kex, sc.hostkey)


def _plan(bench: Bench, found: Sequence[Detected], wanted: Sequence[str], hostkeys: Sequence[str]) -> _Soak:
    """Discover every server and plan every client on it."""
    soak = _Soak()
    for name, where in bench.endpoints.items():
        lists = bench.discover(where).server_lists()
        for client in found:
            if client.missing:
                why = f"unsupported: {client.missing}"
                soak.unsupported.append((Scenario(Kind.LATENCY, client=client.kind.name, server=name), why))
                continue
            reach = None if client.kind.ssh_itself else bench.client(where, client, lists.get("hostkey", ()))
            if isinstance(reach, str):
                soak.unsupported.append(
                    (Scenario(Kind.LATENCY, client=client.kind.name, server=name), f"unsupported: {reach}")
                )
                continue
            offered = lists.get("kex", ())
            rows, na = plan_pairs(client, offered, wanted, name, hostkeys, lists.get("cipher", ()))
            soak.unsupported += na
            soak.pairs.setdefault(name, []).extend(Pair(sc, _login(bench, where, sc, reach, soak)) for sc in rows)
    return soak


def _estimate(job: Job, soak: _Soak, logins: int) -> None:
    """Time one unstored login per pair, show the plan, and refuse a soak that cannot fit its budget, saying how
    many logins would."""
    per_server: list[float] = []
    done, total = 0, len(soak.scenarios)
    for pairs in soak.pairs.values():
        spent = 0.0
        for p in pairs:
            job.progress.update(f"timing one login per pair ({p.scenario.label})", done, total)
            first = p.login()
            spent += max(first.seconds or first.wall, 0.001)  # a library's own time: its driver starts once
            done += 1
        per_server.append(spent)
    workers = max(1, min(len(per_server), os.cpu_count() or 1))
    one_each = max(max(per_server, default=0.0), sum(per_server) / workers)  # a round: one login of every pair
    setup = job.elapsed()
    budget = job.opts.plan.max_time
    fits = math.floor((budget - setup) / one_each) if budget is not None and one_each > 0 else logins
    job.plan_ready(
        Estimate(
            connections=total,
            transfers=0,
            warmup=0.0,
            per_round=one_each,
            budget=budget,
            setup=setup,
            setup_what="servers, clients, one unstored login per pair",
            rounds_needed=logins,
            what=f"{total} pair{'s' if total != 1 else ''} x {logins} logins (a round: one login of every pair, each "
            "server's in turn)",
            needs=f"each pair needs {logins}",
            fits=f"use --logins {fits}" if 1 <= fits < logins else None,
        )
    )


def _worker(
    pairs: Sequence[Pair],
    left: dict[str, int],
    out: queue.Queue[tuple[Scenario, Login]],
    stop: threading.Event,
    seed: int,
) -> None:
    """Log in with one server's pairs, one at a time, each round in a fresh random order, until each pair has its
    logins or the soak stops."""
    rng = random.Random(seed)
    todo = [p for p in pairs if left[p.scenario.key] > 0]
    while todo and not stop.is_set():
        rng.shuffle(todo)
        for p in todo:
            if stop.is_set():
                return
            out.put((p.scenario, p.login()))
            left[p.scenario.key] -= 1  # only this worker touches its pairs' counts
        todo = [p for p in todo if left[p.scenario.key] > 0]


@contextlib.contextmanager
def _workers(
    soak: _Soak, left: dict[str, int], out: queue.Queue[tuple[Scenario, Login]], seed: int
) -> Iterator[tuple[list[threading.Thread], threading.Event]]:
    """Start one worker per server; on the way out stop them and every warm driver."""
    stop = threading.Event()
    threads = [
        threading.Thread(target=_worker, args=(pairs, left, out, stop, seed + i), daemon=True, name=f"soak {name}")
        for i, (name, pairs) in enumerate(soak.pairs.items())
    ]
    for t in threads:
        t.start()
    try:
        yield threads, stop
    finally:
        stop.set()
        for t in threads:
            t.join(JOIN_WAIT)
        soak.close()


def _run(job: Job, rec: Recording, soak: _Soak, logins: int) -> bool:
    """Soak until every pair has its logins or the budget ends, storing each login as it ends (a login that ended
    while the soak was being stopped too); return True when the budget ended it."""
    counts = {sc.key: taken(rec.stored[sc.key], job.opts.command) for sc in soak.scenarios}  # an interrupted run's
    left = {k: max(0, logins - n) for k, n in counts.items()}
    total = logins * len(counts)
    tally = [sum(min(n, logins) for n in counts.values()), 0]  # logins done, of which failed

    def store(sc: Scenario, login: Login) -> None:
        """Store one login and show how far the soak is."""
        counts[sc.key] += 1
        rec.sample(login.sample(sc, counts[sc.key]))
        tally[0] += 1
        tally[1] += login.error is not None
        job.progress.update(
            f"soaking {len(counts)} pairs: {tally[0]} of {total} logins, {tally[1]} failed", tally[0], total
        )

    out: queue.Queue[tuple[Scenario, Login]] = queue.Queue()
    plan = job.opts.plan
    deadline = None if plan.max_time is None else job.started + plan.max_time
    try:
        with _workers(soak, left, out, plan.seed) as (threads, stop):
            while any(t.is_alive() for t in threads) or not out.empty():
                if deadline is not None and time.monotonic() >= deadline:
                    stop.set()
                    return True
                with contextlib.suppress(queue.Empty):
                    store(*out.get(timeout=0.5))
    finally:
        while not out.empty():
            store(*out.get_nowait())
    return False


def run_interop(job: Job) -> int:
    """Run (or resume) the soak; return the run id."""
    opts = job.opts
    ssh = job.ssh
    found, _ = detect_clients(opts.own_as(ClientsOptions).clients, ssh, job.progress)
    specs = tuple(registry.validate(s) for s in (opts.servers or DEFAULT_SERVERS))
    with job.stage(Staging(specs, ssh, workdir="sshbench-interop-", tolerant=True), opts, job.progress) as bench:
        require_started(bench.endpoints, bench.unavailable)
        limit = opts.own_as(ClientsOptions).rekey
        kept = rekey.rekeying(bench, limit) if limit else []
        soak = _plan(bench, found, opts.kex, opts.hostkeys)
        soak.unsupported += kept
        bench.stack.callback(soak.close)
        if not soak.scenarios:
            raise SshbenchError(
                "no client and server pair to soak: " + "; ".join(sorted({why for _, why in soak.unsupported})[:3]),
                place="--client/--server/--kex",
                fix="choose clients, servers and key exchanges that can log in to each other",
                code=ExitCode.UNSUPPORTED_ALGORITHM,
            )
        logins = opts.plan.min_rounds
        if job.resume is None:
            _estimate(job, soak, logins)
        unavailable = [
            (Scenario(Kind.LATENCY, server=n), f"unsupported: {u.skipped or u.failed}")
            for n, u in bench.unavailable.items()
        ]
        rekeys = {n: rekey.counted(bench, w, limit) for n, w in bench.endpoints.items()} if limit else {}
        env = dataclasses.replace(bench.environment(None, None), clients=client_report(found, {}), rekeys=rekeys)
        rec = job.record(" ".join(specs), env)
        with rec.status():
            rec.register(soak.scenarios, [*soak.unsupported, *unavailable])
            if _run(job, rec, soak, logins):
                raise Unfinished(
                    rec.run_id,
                    f"the --max-time budget ended the soak before every pair had {logins} logins",
                    place=f"run {rec.run_id}",
                    fix=f"finish it with `{hints.sshbench('interop', '--resume', str(rec.run_id))}`",
                )
        return rec.run_id
