"""A `load` run of rate steps as a table per step and sentences, and as its part of the JSON document
(analyse/load.py computes); what a burst run (render/bursts.py) shares with it: how its connections were made."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from sshbench import hints, products
from sshbench.analyse.capacity import Across, across, capacities
from sshbench.analyse.load import (
    PERCENTILES,
    Step,
    generator_cpus,
    knee,
    server_cpus,
    step,
)
from sshbench.arrivals import schedule, step_seed
from sshbench.joboptions import LoadOptions
from sshbench.records import StoredRun, StoredScenario
from sshbench.render import screen
from sshbench.render.capacity import capacity_document, ms_interval, print_capacity
from sshbench.render.header import print_page, print_unfinished
from sshbench.render.layout import Column, ms_cell, print_fitted
from sshbench.render.loadroles import print_roles

HOW = (
    "  Open loop: each login started at its intended time whatever the others were doing, its latency counted from "
    "that time (a stall shows in every login queued behind it); a login: the client connects, verifies the host key, "
    "authenticates with a key, runs its job and closes. Percentiles: an HdrHistogram of the step's successful logins."
)
BRIEF_HOW = "  open loop: logins at their intended times, latency from then (--details)"
GENERATORS = {
    "openssh": "one `ssh ... true` per login",
    "go": "every login from one Go x/crypto/ssh process (a goroutine each)",
}


def job_words(own: LoadOptions) -> str:
    """Return what each connection did, in words."""
    if not own.sends:
        return "each connection logs in and runs `true`"
    return (
        f"each connection sends {_bytes(own.up)} to `cat >/dev/null` and reads {_bytes(own.down)} back from "
        f"`head -c {own.down} /dev/zero` (counted: a short one fails)"
    )


def _bytes(n: int) -> str:
    """Return a byte count in words (64 KiB, 1 MiB, 100 bytes)."""
    for unit, size in (("MiB", 2**20), ("KiB", 2**10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} bytes"


def steps(stored: StoredRun) -> list[Step]:
    """Return the run's steps read back in rising rate (a step bisecting the knee among them; steps not run left
    out)."""
    own = stored.run.options.own_as(LoadOptions)
    env = stored.run.environment
    cpus, served = generator_cpus(env), server_cpus(env)
    cpus = cpus * own.generators if cpus else cpus  # a merged run: every generator host's CPUs (as the first's)
    seed = stored.run.options.plan.seed
    order = {k: i for i, k in enumerate(stored.run.options.kex)}
    return [
        step(st, own.step_time, cpus, served, _planned(st, own, seed))
        for st in sorted(
            stored.scenarios,
            key=lambda st: (order.get(st.scenario.kex or "", 0), st.scenario.load.size if st.scenario.load else 0.0),
        )
        if st.samples or not st.failure
    ]


def several(stored: StoredRun) -> bool:
    """Return True for a run whose steps compare key exchanges (`--kex A,B`)."""
    return len(stored.run.options.kex) > 1


def step_name(s: Step, kexes: bool) -> str:
    """Return how a step is named in a sentence: its rate, and its key exchange when a run compares several."""
    return f"{s.kex} {s.rate:g}/s" if kexes and s.kex else f"{s.rate:g}/s"


def _planned(st: StoredScenario, own: LoadOptions, seed: int) -> int | None:
    """Return the logins a step's schedule planned (None: a merged run's, whose hosts each had their own)."""
    rate = st.scenario.load.size if st.scenario.load else None
    if rate is None or own.generators > 1:
        return None
    return len(schedule(rate, own.step_time, own.arrivals, step_seed(seed, rate)))


def _share(s: Step) -> str:
    """Return a step's generator CPU share as a cell, in red when generator-bound."""
    if s.generator_share is None:
        return ""
    text = f"{s.generator_share * 100:.0f}"
    return f"[red]{text}[/red]" if s.generator_bound else text


def _columns(rows: list[Step], kexes: bool = False) -> list[Column]:
    """Return the step table's columns (the key exchange first when a run compares several)."""
    return [
        *([Column("kex", tuple(s.kex or "" for s in rows))] if kexes else []),
        Column("offered /s", tuple(f"{s.rate:g}" for s in rows), right=True),
        Column("logins", tuple(str(s.logins) for s in rows), right=True),
        Column("failed", tuple(f"[red]{s.failures}[/red]" if s.failures else "0" for s in rows), right=True),
        Column("achieved /s", tuple("" if s.achieved is None else f"{s.achieved:.1f}" for s in rows), right=True),
        *(
            Column(
                f"p{p:g} ms", tuple(ms_cell(s.at(p)) for s in rows), right=True, shed=1 if p in (90.0, 99.9) else None
            )
            for p in PERCENTILES
        ),
        Column("max ms", tuple(ms_cell(s.worst) for s in rows), right=True, shed=2),
        Column("p99 from start ms", tuple(ms_cell(dict(s.service).get(99.0)) for s in rows), right=True, shed=2),
        Column("gen. CPU ms/login", tuple(ms_cell(s.generator_cpu) for s in rows), right=True, shed=3),
        Column("gen. CPU %", tuple(_share(s) for s in rows), right=True, shed=3),
        Column("server CPU ms/login", tuple(ms_cell(s.server_cpu) for s in rows), right=True, shed=3),
        Column(
            "server CPU %",
            tuple("" if s.server_share is None else f"{s.server_share * 100:.0f}" for s in rows),
            right=True,
            shed=3,
        ),
        Column("started late ms", tuple(ms_cell(s.late) for s in rows), right=True, shed=0),
    ]


def _product(stored: StoredRun) -> products.Product | None:
    """Return the product of the run's server, from its banner or its description."""
    env = stored.run.environment
    return products.named_in(env.server_banner or "") or products.named_in(env.target or "")


def closers(stored: StoredRun) -> str:
    """Return what in the run's server can close a connection before its banner."""
    product = _product(stored)
    return product.closers if product is not None and product.closers else "a limit of the server's"


def _silent(stored: StoredRun) -> str:
    """Return the run's server's limits that log nothing (OpenSSH logs its drops: none)."""
    product = _product(stored)
    return "" if product is None or product is products.OPENSSH else product.closers


def _step_notes(console: Console, rows: list[Step], stored: StoredRun) -> None:
    """Print what each step says besides its row: why it stopped, its failures by cause, a step cut short."""
    kexes = several(stored)
    for s in rows:
        name = step_name(s, kexes)
        if s.stopped or s.halted:
            said = f"{s.stopped} (not read for the knee)" if s.stopped else s.halted
            screen.say(console, f"  ! {name}: {said}")
        for words, n in s.causes[:3]:
            screen.say(console, f"  ! {name}: {n} x {words}")
        if s.cut:
            screen.say(
                console,
                f"  ! {name}: cut short, {s.logins} of its {s.planned} logins (the run was stopped in this step; "
                f"its rate and percentiles are of those logins, not read for the knee: `{_resume(stored)}` runs it "
                "again)",
            )


def _resume(stored: StoredRun) -> str:
    """Return the command that finishes a run."""
    return hints.sshbench(stored.run.kind.resume_command, "--resume", str(stored.run.id))


def print_load(console: Console, stored: StoredRun) -> None:
    """Print the steps, their failures by cause, and how they were measured."""
    own = stored.run.options.own_as(LoadOptions)
    rows = steps(stored)
    generator = GENERATORS.get(own.generator, own.generator)
    sources = (
        f"from {own.sources} loopback source addresses (127.0.0.2-127.0.0.{1 + own.sources}; per-address limits do "
        "not stand in for the server's)"
        if own.max_rate is None
        else f"from this machine's address, to a host of yours at most {own.max_rate:g}/s (--max-rate)"
    )
    if own.generators > 1:
        sources = (
            f"from {own.generators} generator hosts whose steps started together (--start-at), merged: each step's "
            f"logins pooled, its rate the sum of theirs (each host at most {own.max_rate or 0:g}/s)"
        )
    title = (
        f"Logins under load: {own.arrivals} arrivals, {own.step_time:g} s per step, {generator} {sources}; "
        f"{job_words(own)}; latency from each login's intended start (p99 from start: from its actual start, the "
        "server's time without the generator's lag)"
    )
    if screen.brief():
        title = f"Logins under load: {own.arrivals} arrivals, {own.step_time:g} s per step (--details says how)"
    print_fitted(console, title, _columns(rows, several(stored)))
    _step_notes(console, rows, stored)
    for st in stored.scenarios:
        if st.failure and not st.samples:
            pinned = f"{st.scenario.kex} " if several(stored) and st.scenario.kex else ""
            screen.say(console, f"  {pinned}{st.scenario.load}: {st.failure.removeprefix('skipped: ')}")
    kexes: tuple[str | None, ...] = stored.run.options.kex if several(stored) else (None,)
    for kex in kexes:
        mine = [s for s in rows if kex is None or s.kex == kex]
        read = knee(mine, own.slo)
        capped = f"; no step went above --max-rate {own.max_rate:g}/s" if own.max_rate and read.broken is None else ""
        sentence = read.sentence(_silent(stored), host=own.max_rate is not None)
        screen.say(console, f"  {kex + ': ' if kex else ''}{sentence}{capped}")
    if several(stored):
        print_capacity(console, capacities(rows, stored.run.options.kex, own.slo))
    clean = [s for s in rows if s.logins and not s.failures]
    if clean:
        screen.say(
            console,
            f"  {len(clean)} step{'s' if len(clean) != 1 else ''} without a failure: the failure rate of each is at "
            f"most {max(s.upper for s in clean) * 100:.1f} % (95 % bound)",
        )
    print_roles(console, rows)
    screen.say(console, BRIEF_HOW if screen.brief() else HOW, style="dim")


def print_load_run(console: Console, stored: StoredRun, db: Path, discovery_only: bool = False) -> None:
    """Print a load run: its header, the steps, then where it is stored."""
    print_page(console, stored, db, print_load, lambda c, s: print_unfinished(c, s.run))


def loading(own: LoadOptions) -> dict[str, Any]:
    """Return how a run's connections were made, as steps and bursts share it in the JSON document."""
    exec_bytes = [own.up, own.down] if own.sends else None
    return {
        "job": own.job,
        "exec_bytes": exec_bytes,
        "generator": own.generator,
        "sources": own.sources,
        "start_at": own.start_at,
        "generators": own.generators,
    }


def load_document(stored: StoredRun) -> dict[str, Any]:
    """Return the steps' part of the JSON document (seconds)."""
    own = stored.run.options.own_as(LoadOptions)
    rows = steps(stored)
    return {
        **loading(own),
        "arrivals": own.arrivals,
        "step_time": own.step_time,
        "slo": own.slo,
        "max_rate": own.max_rate,
        "knee": knee(rows, own.slo).rate if not several(stored) else None,
        **capacity_document(stored, rows),
        "steps": [
            {
                "kex": s.kex,
                "offered_rate": s.rate,
                "logins": s.logins,
                "failures": s.failures,
                "achieved_rate": s.achieved,
                "percentiles": {f"p{p:g}": v for p, v in s.percentiles},
                "percentiles_from_start": {f"p{p:g}": v for p, v in s.service},
                "max": s.worst,
                "generator_cpu_per_login": s.generator_cpu,
                "failure_rate_upper": s.upper,
                "started_late_max": s.late,
                "generator_cpu_share": s.generator_share,
                "generator_bound": s.generator_bound,
                "server_cpu_per_login": s.server_cpu,
                "server_cpu_share": s.server_share,
                "server_cpu_per_login_by_role": dict(s.roles) or None,
                "stopped_early": s.halted,
                "causes": [{"message": m, "count": n} for m, n in s.causes],
            }
            for s in rows
        ],
    }


def print_capacity_change(console: Console, a: StoredRun, b: StoredRun) -> None:
    """Print each key exchange's server CPU a login in two runs that compare key exchanges, and B - A (nothing
    unless both do)."""
    rows = _across(a, b)
    if not rows:
        return
    columns = [
        Column("kex", tuple(r.kex or "" for r in rows)),
        Column(f"run {a.run.id} ms/login", tuple(ms_interval(r.a) for r in rows), right=True),
        Column(f"run {b.run.id} ms/login", tuple(ms_interval(r.b) for r in rows), right=True),
        Column("B - A (95 %)", tuple(ms_interval(r.diff, signed=True) or "too few steps" for r in rows), right=True),
    ]
    title = (
        f"Server CPU a login per key exchange, run {a.run.id} -> run {b.run.id} (each run's steps, mean; "
        "B - A: Welch's t-interval, the runs' steps not paired)"
    )
    print_fitted(console, title, columns)


def _across(a: StoredRun, b: StoredRun) -> list[Across]:
    """Return the key exchanges both runs compared, side by side ([] unless both compare key exchanges)."""
    ka, kb = a.run.options.kex, b.run.options.kex
    if len(ka) < 2 or len(kb) < 2 or a.run.kind != b.run.kind:
        return []
    return across(steps(a), steps(b), [k for k in ka if k in kb])


def capacity_change_document(a: StoredRun, b: StoredRun) -> dict[str, Any]:
    """Return the side-by-side table's JSON form ({} unless both runs compare key exchanges)."""
    rows = _across(a, b)
    if not rows:
        return {}
    return {
        "capacity_change": [
            {
                "kex": r.kex,
                "a": r.a.to_dict() if r.a else None,
                "b": r.b.to_dict() if r.b else None,
                "b_minus_a": r.diff.to_dict() if r.diff else None,
            }
            for r in rows
        ]
    }
