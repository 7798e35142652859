"""`tune`: measure the default copy, find what bounds it, then measure only the remedies that apply, interleaved
with the default, under one budget.

1. The default transfer both ways (the client's own algorithms, its steady rate as `throughput` measures it) and
   a fresh connection, 3 rounds, with the kernel's evidence of the sockets. A third of the budget at most.
2. `diagnose` (given by the caller: the reading side's `analyse/claims/bounds`) names each direction's bound.
3. Remedies, by bound: `network`, `ssh-window`, `tcp-window` -> 2, 4 and 8 connections at once (and
   Compression=yes when the payload compresses); `client-cpu`, `server-cpu`, `crypto` -> every cipher the policy
   allows (a race picks the fastest); always -> a connection through a master (ControlMaster). `unknown` -> both
   connection counts and ciphers.
4. One schedule (racing) of the defaults, the default copy timed as the remedies are (one connection, from spawn to
   exit, handshake included) and the remedies, for the rest of the budget; each remedy's gain is read against that
   copy, paired per round (analyse/tune.py).
A resumed run repeats steps 1 and 2 from its stored samples, so it picks the same remedies.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Callable, Mapping, Sequence

from sshbench.environment import Environment
from sshbench.jobs.endpoints import require_connectable, require_reachable
from sshbench.jobs.recording import Job, Recording
from sshbench.jobs.single import by_kind
from sshbench.jobs.staging import Bench, Staging
from sshbench.measure.remedies import STREAMS, CopySampler, baseline, master, steady
from sshbench.measure.samplers import ThroughputSampler
from sshbench.model import Direction, Kind, Scenario, is_aead
from sshbench.records import Discovery, StoredScenario
from sshbench.ssh.proc import require_binary

Diagnose = Callable[[Sequence[StoredScenario], Environment], Mapping[str, str]]  # result group -> bound kind
PATH_BOUNDS = ("network", "ssh-window", "tcp-window")
CPU_BOUNDS = ("client-cpu", "server-cpu", "crypto")
FIRST_SHARE = 1 / 3  # of the budget, at most, for the defaults before the remedies are chosen


def defaults(directions: Sequence[Direction]) -> list[Scenario]:
    """Return the default transfers (steady rate, for the diagnosis) and a fresh connection."""
    return [*(steady(d) for d in directions), Scenario(Kind.LATENCY)]


def remedies(bounds: Mapping[str, str], disc: Discovery, allows: Callable[[str, str], bool],
             directions: Sequence[Direction], payload: str) -> list[Scenario]:  # fmt: skip
    """Return the remedies that apply to each direction's bound (see the module)."""
    out: list[Scenario] = []
    default_cipher = next((p.negotiated.cipher for p in disc.profiles if p.name == "default" and p.negotiated), None)
    for d in directions:
        bound = bounds.get("download" if d is Direction.DOWN else "upload", "unknown")
        if bound in (*PATH_BOUNDS, "unknown"):
            out += [Scenario(Kind.THROUGHPUT, direction=d, remedy=f"streams={n}") for n in STREAMS]
            if payload != "random" and bound != "unknown":
                out.append(Scenario(Kind.THROUGHPUT, direction=d, remedy="compression"))
        if bound in (*CPU_BOUNDS, "unknown"):
            for cipher in disc.shared("cipher"):
                if cipher != default_cipher and is_aead(cipher) and allows("cipher", cipher):
                    out.append(Scenario(Kind.THROUGHPUT, cipher=cipher, direction=d, remedy="streams=1"))
    return [*(baseline(d) for d in directions), *out, Scenario(Kind.LATENCY, remedy="master")]


def _defaults_measured(stored: Sequence[StoredScenario]) -> tuple[dict[Direction | None, float], float | None]:
    """Return the default's median steady rate per direction (MB/s) and the median fresh login (seconds)."""
    rates: dict[Direction | None, float] = {}
    login = None
    for st in stored:
        values = st.values()
        if not values or st.scenario.remedy is not None or st.scenario.cipher is not None:
            continue
        if st.scenario.kind is Kind.THROUGHPUT:
            rates[st.scenario.direction] = statistics.median(values)
        elif st.scenario.kind is Kind.LATENCY and st.scenario.kex is None:
            login = statistics.median(values)
    return rates, login


def tune_job(job: Job, diagnose: Diagnose) -> int:
    """Run (or resume) a tune job against one target; every sample is stored as it is taken. Return the run id."""
    opts = job.opts
    ssh = require_binary("ssh", "openssh-client")
    with job.stage(Staging((opts.target,), ssh), opts, job.progress) as bench:
        where = bench.only
        disc = bench.discover(where)
        require_reachable(disc, where.target)
        require_connectable(disc, where.target)
        env = bench.environment(where, disc)
        rec = job.record(opts.target, env)
        with rec.status():
            job.store.set_discovery(rec.run_id, disc)
            measure(rec, job, bench, disc, env, diagnose)
        return rec.run_id


def measure(rec: Recording, job: Job, bench: Bench, disc: Discovery, env: Environment, diagnose: Diagnose) -> None:
    """Measure the defaults, choose the remedies from their bounds, then race both (see the module)."""
    opts, where = job.opts, bench.only
    first = defaults(opts.directions)
    inner = ThroughputSampler(bench.ssh, where.target, opts, bench.workdir)
    sizer = CopySampler(inner)
    copies = bench.sampler(sizer, where, watch_memory=False)
    with master(bench.ssh, where.target, bench.workdir) as reuse:
        latency = {None: bench.latency(where), "master": bench.sampler(reuse.sample, where, False)}
        takers = {Kind.THROUGHPUT: copies, Kind.LATENCY: lambda sc, rnd, w: latency[sc.remedy](sc, rnd, w)}
        take = by_kind(takers)
        plan = rec.plan
        try:
            short = plan.max_time * FIRST_SHARE if plan.max_time else None
            rec.plan = dataclasses.replace(plan, min_rounds=3, max_rounds=3, max_time=short, racing=False)
            rec.register(first)
            rec.schedule(first, take, job.progress, "default copy")
            rec.plan = plan
            stored = job.store.scenarios(rec.run_id)
            if not opts.size:
                sizer.size_copies(*_defaults_measured(stored))
            found = diagnose(stored, env)
            chosen = remedies(found, disc, job.allows, opts.directions, opts.payload)
            rec.register([*first, *chosen])
            rec.schedule([*first, *chosen], take, job.progress, "remedies")
        finally:
            rec.plan = plan
            inner.cleanup()
