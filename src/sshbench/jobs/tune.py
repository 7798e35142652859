"""`tune`: measure the default copy, find what bounds it, then measure only the remedies that apply, interleaved
with the default, under one budget.

1. The default transfer both ways (the client's own algorithms, its steady rate as `throughput` measures it) and
   a fresh connection, 3 rounds, with the kernel's evidence of the sockets. A third of what the set-up (discovery,
   staging a payload) left of the budget, at most.
2. The reading side's diagnosis (`analyse/tune.diagnose_defaults`, from `analyse/claims/bounds`: the one crossing
   from the taking tower to the reading one) names each direction's bound.
3. Remedies, by bound: `network`, `ssh-window`, `tcp-window` -> 2, 4 and 8 connections at once (at most 5 to
   Dropbear, which resets more while they log in), and Compression=yes on the text payload (zeros say nothing of
   a user's data, random data cannot shrink); an upload to an embedded Dropbear bound by a window, or `unknown`,
   -> a second Dropbear with a larger `-W`;
   `client-cpu`, `server-cpu`, `crypto` -> every cipher the policy allows (a race picks the fastest); always -> a
   connection through a master (ControlMaster), and a fresh login with the quickest key exchanges the policy
   allows. `unknown` -> both connection counts and ciphers. What a bound calls for that cannot be measured from
   here (a larger channel window, TCP buffers) is named as advice (analyse/tune.py).
4. One schedule (racing) of the fresh login, the default copy timed as the remedies are (one connection, from
   spawn to exit, handshake included) and the remedies, for the rest of the budget; the steady rates keep the 3
   samples the diagnosis read. Each remedy's gain is read against that copy, paired per round (analyse/tune.py).
   Copies are long enough for what a remedy changes to show (remedies.Sizing): 5 logins, 50 round trips of the
   path (the kernel's, from step 1), and for N connections each part 4 times its slow start, whichever is longest;
   never shrunk to fit a budget, which is checked instead.
5. The check of the gains predicted for other copy sizes (analyse/sizes.py): the default and each direction's
   best remedy copied at 10 MB, DECIDING_PAIRS paired rounds, where the copies measured are 40 MB or more; its
   time is kept out of step 4's budget, and when the budget left cannot hold it, it is skipped and said.
The race is anchored on the default (measure/racing.py): the default copy and fresh login are measured every round,
and a remedy stops only once the race calls it slower than or equivalent to the default, or its paired 95 % verdict
against the default is settled (ratios.settled), never because another remedy is faster; every remedy gets
ratios.DECIDING_PAIRS rounds first, the fewest a pasted change is drawn from.
Budget: before anything is stored, a probe (one login, one transfer) estimates step 1 and the smallest set of
remedies any bound calls for, and a budget that cannot give them DECIDING_PAIRS rounds is refused (exit 2, with the
budget that would fit). After step 2, when what is left cannot give the remedies of the bound found those rounds,
the run stops with the diagnosis kept (incomplete, exit 9, with the budget that would fit).
A resumed run repeats steps 1 and 2 from its stored samples, so it picks the same remedies.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Callable, Mapping, Sequence

from sshbench import kex
from sshbench.analyse.tune import diagnose_defaults
from sshbench.discovery import Discovery
from sshbench.environment import Environment
from sshbench.errors import Unfinished
from sshbench.hints import sshbench
from sshbench.joboptions import DEFAULT_MAX_ROUNDS, DEFAULT_POLICY, DEFAULT_ROUNDS, JobOptions, Plan
from sshbench.jobs.endpoints import Endpoint, require_connectable, require_reachable
from sshbench.jobs.recording import Job, Recording
from sshbench.jobs.single import by_kind
from sshbench.jobs.staging import Bench, Copies, Staging
from sshbench.jobs.tunecheck import Checking
from sshbench.measure.budget import Estimate, Probe
from sshbench.measure.remedies import (
    Sizing,
    baseline,
    conninfo_check,
    copy_bytes,
    is_steady,
    rounds_seconds,
    steady,
    streams,
    warmup_seconds,
)
from sshbench.measure.scheduler import Sampler
from sshbench.measure.steady import MB
from sshbench.model import BoundKind, Direction, Kind, Scenario, is_aead
from sshbench.ratios import DECIDING_PAIRS
from sshbench.records import StoredScenario
from sshbench.remedy import MASTER, ONE_CONNECTION, tried, widens
from sshbench.samples import Sample

CPU_BOUNDS = (BoundKind.CLIENT_CPU, BoundKind.SERVER_CPU, BoundKind.CRYPTO)
MAX_KEX = 2  # the cheap key exchanges (kex.CATALOG) a fresh login is raced with, at most
FIRST_SHARE = 1 / 3  # of the budget, at most, for the defaults before the remedies are chosen


def defaults(directions: Sequence[Direction]) -> list[Scenario]:
    """Return the default transfers (steady rate, for the diagnosis) and a fresh connection."""
    return [*(steady(d) for d in directions), Scenario(Kind.LATENCY)]


def remedies(
    bounds: Mapping[str, BoundKind],
    disc: Discovery,
    allows: Callable[[str, str], bool],
    directions: Sequence[Direction],
    payload: str,
    window: bool = False,
) -> list[Scenario]:
    """Return the remedies that apply to each direction's bound (see the module); `window`: the server is ours and
    has a receive-window option, so an upload bound by the channel window is measured with a larger one."""
    out: list[Scenario] = []
    default_cipher = next((p.negotiated.cipher for p in disc.profiles if p.name == "default" and p.negotiated), None)
    most = disc.most_logins()  # None: the server does not say how many logins it allows at once
    for d in directions:
        bound = bounds.get("download" if d is Direction.DOWN else "upload", BoundKind.UNKNOWN)
        made = tried(bound, d.value, payload, most, window)
        out += [Scenario(Kind.THROUGHPUT, direction=d, remedy=r) for r in made]
        if bound in (*CPU_BOUNDS, BoundKind.UNKNOWN):
            for cipher in disc.shared("cipher"):
                if cipher != default_cipher and is_aead(cipher) and allows("cipher", cipher):
                    out.append(Scenario(Kind.THROUGHPUT, cipher=cipher, direction=d, remedy=ONE_CONNECTION))
    return [
        *(baseline(d) for d in directions),
        *out,
        Scenario(Kind.LATENCY, remedy=MASTER),
        *(Scenario(Kind.LATENCY, kex=k) for k in quick_kex(disc, allows)),
    ]


def quick_kex(disc: Discovery, allows: Callable[[str, str], bool]) -> list[str]:
    """Return the key exchanges a fresh login is raced with (the catalog's cheap ones, in its order): those both
    sides offer and the policy allows, other than the one the default negotiates (under either name), at most
    MAX_KEX."""
    default = next((p.negotiated.kex for p in disc.profiles if p.name == "default" and p.negotiated), None)
    found = [k for k in kex.cheap(disc.shared("kex")) if not kex.same(k, default) and allows("kex", k)]
    return found[:MAX_KEX]


def _copies_stored(stored: Sequence[StoredScenario]) -> dict[Direction | None, int]:
    """Return the bytes of the default copies an interrupted run already took, per direction (a resumed run goes
    on with the same size, whatever budget it has left)."""
    out: dict[Direction | None, int] = {}
    for st in stored:
        if st.scenario.kind is Kind.THROUGHPUT and st.scenario.remedy == ONE_CONNECTION and st.scenario.cipher is None:
            sizes = [s.nbytes for s in st.samples if s.measured and s.nbytes]
            if sizes:
                out[st.scenario.direction] = sizes[0]
    return out


def _defaults_measured(
    stored: Sequence[StoredScenario],
) -> tuple[dict[Direction | None, float], float | None, float | None]:
    """Return the default's median steady rate per direction (MB/s), the median fresh login (seconds), and what a
    transfer took besides its payload at that rate (login, the stream's ramp, exit: seconds, median)."""
    rates: dict[Direction | None, float] = {}
    login, extra = None, []
    for st in stored:
        values = st.values()
        if not values or st.scenario.remedy is not None or st.scenario.cipher is not None:
            continue
        if st.scenario.kind is Kind.THROUGHPUT:
            rates[st.scenario.direction] = statistics.median(values)
            extra += [s.wall - s.nbytes / (s.value * MB) for s in st.samples if s.measured and s.nbytes and s.value]
        elif st.scenario.kind is Kind.LATENCY and st.scenario.kex is None:
            login = statistics.median(values)
    return rates, login, statistics.median(extra) if extra else None


def tune_job(job: Job) -> int:
    """Run (or resume) a tune job against one target; every sample is stored as it is taken. Return the run id."""
    opts = job.opts
    ssh = job.ssh
    with job.stage(Staging((opts.target,), ssh), opts, job.progress) as bench:
        where = bench.only
        disc = bench.discover(where)
        require_reachable(disc, where.target)
        require_connectable(disc, where.target)
        env = bench.environment(where, disc)
        if job.resume is None:
            job.plan_ready(plan_estimate(job, disc, bench.probe(where)))
        rec = job.record(opts.target, env)
        with rec.status():
            job.store.set_discovery(rec.run_id, disc)
            measure(rec, job, bench, disc, env)
        return rec.run_id


def _with_window(bench: Bench, wide: Endpoint, sizer: Copies, copies: Sampler) -> tuple[Sampler, Copies]:
    """Return the copy sampler that sends window remedies to the wider-window server `wide`, the rest to `copies`,
    and that server's own copy sampler (to clean up)."""
    widened = bench.copies_at_once(wide)
    widened.copy_sizes = sizer.copy_sizes  # one size for every copy: the default's
    wide_copies = bench.sampler(widened, wide, watch_memory=False)

    def take(sc: Scenario, rnd: int, warmup: bool) -> Sample:
        """Take a copy on the server the scenario's remedy calls for."""
        return (wide_copies if widens(sc.remedy) else copies)(sc, rnd, warmup)

    return take, widened


def plan_estimate(job: Job, disc: Discovery, probe: Probe | None) -> Estimate | None:
    """Return the plan's estimate from a probe: step 1 (the defaults' warm-ups and 3 rounds) as set-up, then the
    smallest set of remedies any bound calls for, each warmed up and measured DECIDING_PAIRS rounds on copies as long
    as the probe shows they must be (Sizing, from its login and rate), or of --size (None without a probe)."""
    opts = job.opts
    if probe is None or probe.rate is None:
        return None
    login, least = probe.connection, opts.sample_seconds
    copy, rule = Sizing({}, login).seconds(least)  # at least: the path's round trips are seen in step 1
    if opts.size and probe.rate > 0:
        copy, rule = opts.size / (probe.rate * MB), "--size"
    first = defaults(opts.directions)
    transfers = [sc for sc in first if sc.kind is Kind.THROUGHPUT]
    first_warm = opts.plan.warmup * (len(transfers) * (login + copy) + login)
    first_rounds = 3 * (len(transfers) * (login + copy) + login)
    smallest: tuple[float, float, list[Scenario]] | None = None
    for kind in (BoundKind.NETWORK, BoundKind.CLIENT_CPU):
        chosen = remedies({"download": kind, "upload": kind}, disc, job.allows, opts.directions, opts.payload)
        raced = [sc for sc in [*first, *chosen] if not is_steady(sc)]
        warm = warmup_seconds(chosen * opts.plan.warmup, login, login)
        rounds = rounds_seconds(login, raced, least, copy, login)
        if smallest is None or warm + rounds < smallest[0] + smallest[1]:
            smallest = (warm, rounds, raced)
    assert smallest is not None
    warm, rounds, raced = smallest
    return Estimate(
        connections=sum(1 for sc in raced if sc.kind is Kind.LATENCY),
        transfers=sum(1 for sc in raced if sc.kind is Kind.THROUGHPUT),
        warmup=first_warm + warm,
        per_round=rounds / DECIDING_PAIRS,
        budget=opts.plan.max_time,
        setup=job.elapsed() + first_rounds,
        setup_what="discovery, a probe, 3 rounds of the defaults",
        rounds_needed=DECIDING_PAIRS,
        what=f"the defaults, then the remedies of the bound found (at least {len(raced)} rows) on copies of "
        f"{copy_bytes(probe.rate, copy) / 2**20:.0f} MiB or more ({rule} at the probe's rate)",
    )


def _refuse_short(
    rec: Recording,
    job: Job,
    times: tuple[Sizing, float | None],
    sizes: Mapping[Direction | None, int],
    raced: Sequence[Scenario],
    warm: Sequence[Scenario],
    bound: Mapping[str, BoundKind],
) -> None:
    """Stop the run, its diagnosis kept, when what is left of the budget cannot give the remedies of the bound found
    DECIDING_PAIRS rounds each on copies of the size chosen (incomplete, exit 9, with the budget that fits)."""
    left = rec.remaining().max_time
    if left is None:
        return
    (sizing, overhead), least = times, job.opts.sample_seconds
    login = sizing.login
    seconds = [(job.opts.size or sizes.get(d, 0)) / (r * MB) for d, r in sizing.rates.items() if r > 0]
    copy = max([least, *seconds])
    need = warmup_seconds(warm, login, overhead) + rounds_seconds(login, raced, least, copy, overhead)
    if left >= need:
        return
    whole = math.ceil((job.elapsed() + need) * 1.1 / 10) * 10  # what was spent, what is needed, a tenth to spare
    ways = {d.value + "load" for d in job.opts.directions}  # download, upload
    found = ", ".join(f"{group}: {kind.value}" for group, kind in bound.items() if group in ways)
    rows = sum(1 for sc in raced if sc.remedy not in (None, ONE_CONNECTION) or sc.cipher or sc.kex)
    raise Unfinished(
        rec.run_id,
        f"the {left:.0f} s left of the budget after the diagnosis ({found}) cannot give its {rows} remedies "
        f"{DECIDING_PAIRS} rounds each against the default on {_copies_words(job, sizing, sizes)}: "
        f"they need ~{need:.0f} s",
        place=f"run {rec.run_id}",
        fix=f"start again with `{_again(job.opts, whole)}`, or "
        f"finish this run, whose defaults are kept, with `{sshbench('tune', '--resume', str(rec.run_id))}`",
    )


def _copies_words(job: Job, sizing: Sizing, sizes: Mapping[Direction | None, int]) -> str:
    """Return the copies' size in words, with the rule that set it (or --size)."""
    if job.opts.size:
        return f"copies of --size {_size_word(job.opts.size)}"
    each = ", ".join(sorted({f"{n / 2**20:.0f} MiB" for n in sizes.values()}))
    return f"copies of {each} ({sizing.seconds(job.opts.sample_seconds)[1]} at the default's rate)"


def path_rtt(stored: Sequence[StoredScenario]) -> float:
    """Return the path's round trip (seconds) as the kernel saw it on the default transfers' client sockets (their
    median `min_rtt`; 0 when not seen)."""
    seen = [
        float(s.tcp["client"]["min_rtt_ms"]) / 1e3
        for st in stored
        if is_steady(st.scenario)
        for s in st.samples
        if s.measured and s.tcp and isinstance(s.tcp.get("client"), dict) and s.tcp["client"].get("min_rtt_ms")
    ]
    return statistics.median(seen) if seen else 0.0


def _again(opts: JobOptions, seconds: int) -> str:
    """Return the `tune` command line that measures what this run measures, with a budget of `seconds`."""
    words = ["tune", *([] if opts.target == "local" else [opts.target])]
    words += ["--link", opts.link] if opts.link else []
    words += ["--direction", opts.directions[0].value] if len(opts.directions) == 1 else []
    words += ["--payload", opts.payload] if opts.payload != "zero" else []
    words += ["--size", _size_word(opts.size)] if opts.size else []
    words += ["--for-size", _size_word(opts.for_size)] if opts.for_size else []
    words += ["--emulate", opts.emulate] if opts.emulate else []
    for flag, share in (("--server-cpu", opts.server_cpu), ("--client-cpu", opts.client_cpu)):
        words += [flag, f"{share * 100:g}%"] if share is not None else []
    words += ["--policy", opts.policy] if opts.policy != DEFAULT_POLICY else []
    words += ["--ssh", opts.ssh] if opts.ssh else []
    words += ["--max-time", f"{seconds}s"]
    words += ["--rounds", str(opts.plan.min_rounds)] if opts.plan.min_rounds != DEFAULT_ROUNDS else []
    words += ["--max-rounds", str(opts.plan.max_rounds)] if opts.plan.max_rounds != DEFAULT_MAX_ROUNDS else []
    return sshbench(*words, ssh_config=True)


def _size_word(size: int) -> str:
    """Return --size as given back to the command line: whole MiB as M, else KiB as K, else bytes."""
    for unit, word in ((2**20, "M"), (2**10, "K")):
        if size % unit == 0:
            return f"{size // unit}{word}"
    return str(size)


def first_step(rec: Recording) -> Plan:
    """Return the plan of step 1: 3 rounds, not raced, within FIRST_SHARE of what the set-up left of the budget."""
    plan = dataclasses.replace(rec.remaining(), min_rounds=3, max_rounds=3, racing=False)
    if plan.max_time is None:
        return plan
    return dataclasses.replace(plan, max_time=plan.max_time * FIRST_SHARE)


def measure(rec: Recording, job: Job, bench: Bench, disc: Discovery, env: Environment) -> None:
    """Measure the defaults, choose the remedies from their bounds, then race both (see the module)."""
    opts, where = job.opts, bench.only
    first = defaults(opts.directions)
    sizer = bench.copies_at_once(where)
    copies = bench.sampler(sizer, where, watch_memory=False)
    staged: list[Copies] = [sizer]
    with bench.through_master(where) as reuse:
        latency = {None: bench.latency(where), MASTER: reuse}
        takers = {Kind.THROUGHPUT: copies, Kind.LATENCY: lambda sc, rnd, w: latency[sc.remedy](sc, rnd, w)}
        take = by_kind(takers)
        try:
            rec.register(first)
            rec.schedule(first, take, job.progress, "default copy", plan=first_step(rec))
            stored = job.store.scenarios(rec.run_id)
            found = diagnose_defaults(stored, env)
            window = bench.can_widen(where)
            chosen = remedies(found, disc, job.allows, opts.directions, opts.payload, window=window)
            raced = [sc for sc in [*first, *chosen] if not is_steady(sc)]
            rates, login, overhead = _defaults_measured(stored)
            warm = [sc for sc in chosen if sc.key not in {st.scenario.key for st in stored}] * opts.plan.warmup
            sizing = Sizing(rates, login, path_rtt(stored), max(streams(sc) for sc in raced))
            if not opts.size:  # long enough for what a remedy changes to show; the budget is checked, not obeyed
                sizer.size_copies(sizing)
                sizer.copy_sizes.update(_copies_stored(stored))
            _refuse_short(rec, job, (sizing, overhead), sizer.copy_sizes, raced, warm, found)
            rec.register([*first, *chosen])
            wider = next((sc.remedy.n for sc in chosen if sc.remedy is not None and widens(sc.remedy)), None)
            if window and wider is not None:
                takers[Kind.THROUGHPUT], wide = _with_window(bench, bench.widened(where, wider), sizer, copies)
                staged.append(wide)
                take = by_kind(takers)
            anchors = frozenset(
                sc.key for sc in raced if sc.cipher is None and sc.kex is None and sc.remedy in (ONE_CONNECTION, None)
            )  # the default copy and fresh login
            sized: dict[Direction | None, int] = {d: opts.size or sizer.copy_sizes.get(d, 0) for d in opts.directions}
            check = Checking(sized, sizing, overhead, opts.sample_seconds)
            rec.schedule(raced, take, job.progress, "remedies", plan=check.race_plan(rec.remaining()), anchors=anchors)
            check.run(rec, job, take)
        finally:
            for staged_copies in staged:
                staged_copies.cleanup()
    if info := bench.connection_info.get(where.name):  # OpenSSH 10.3+: the master row checked by the master itself
        checked = {**info, "check": conninfo_check(info, disc.default())}
        job.store.add_to_environment(rec.run_id, "master_conninfo", checked)
