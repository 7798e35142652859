"""What the commands share: the session the error boundary reads, consoles, the progress bar, shared options,
and running a job then showing what it stored.

Kept light on purpose: `sshbench --help` imports this module, so rich, the store, the jobs and the renderers
are imported inside the functions that use them.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from sshbench import hints
from sshbench.errors import ExitCode, SshbenchError

if TYPE_CHECKING:
    from rich.console import Console

    from sshbench.cli.values import Given
    from sshbench.joboptions import JobOptions
    from sshbench.records import Fleet, StoredRun
    from sshbench.storage.store import Store


@dataclass
class Session:
    """What the error boundary needs to know about the command being run (its run, for the resume hint)."""

    run_id: int | None = None
    resume_command: str = "run"
    traceback: bool = False
    wide: bool = False  # --wide: tables at full width whatever the terminal's
    details: bool = False  # --details: every caveat and figure on a terminal too (render/screen.py)


def session() -> Session:
    """Return the session of the command being run."""
    found = click.get_current_context().find_object(Session)
    assert found is not None, "commands run under main(), which creates the session"
    return found


WIDE = 10_000  # "no limit": piped output and --wide are plain and complete, never cut to a terminal's width


def out() -> Console:
    """Return the results console (stdout): a terminal's width and brief screens, complete when piped or --wide."""
    from sshbench.render.screen import set_brief

    context = click.get_current_context(silent=True)
    state = context.find_object(Session) if context else None
    wide = bool(state and state.wide) or not sys.stdout.isatty()
    set_brief(not wide and not (state and state.details))
    return _console(wide)


@functools.cache
def _console(wide: bool) -> Console:
    """Return the results console, wide (no width limit) or fitted to the terminal."""
    from rich.console import Console

    return Console(width=WIDE, emoji=False) if wide else Console(emoji=False)


@functools.cache
def err() -> Console:
    """Return the console for progress and messages (stderr)."""
    from rich.console import Console

    return Console(stderr=True, emoji=False)


def open_store(db: Path | None, read_only: bool = False) -> Store:
    """Open the results database (read-only for commands that only read it)."""
    from sshbench.storage.store import Store, default_db_path

    return Store(db or default_db_path(), read_only)


class RichProgress:
    """Progress bar on stderr: what is measured, round i of n, elapsed and ETA."""

    def __init__(self) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.table import Column

        def fixed() -> Column:
            """Return a column that keeps its width (count, elapsed, ETA): the description is cut instead."""
            return Column(no_wrap=True)

        self.bar = Progress(
            TextColumn(
                "{task.description}", table_column=Column(ratio=1, no_wrap=True, overflow="ellipsis", min_width=8)
            ),
            BarColumn(bar_width=12),
            MofNCompleteColumn(table_column=fixed()),
            TimeElapsedColumn(table_column=fixed()),
            TextColumn("ETA", table_column=fixed()),
            TimeRemainingColumn(table_column=fixed()),
            console=err(),
            expand=True,
            transient=True,
            disable=not err().is_terminal,  # nothing on a log or pipe: no bar, no blank line left behind
        )
        self.task = self.bar.add_task("starting", total=None)

    def update(self, description: str, done: int, total: int) -> None:
        """Show the current scenario and progress."""
        self.bar.update(self.task, description=description, completed=done, total=max(total, 1))

    def __enter__(self) -> RichProgress:
        self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.stop()


def execute(opts: JobOptions, db: Path | None, as_json: bool, resume: int | None = None) -> None:
    """Run a job with a progress bar, then print what was stored; a run the budget cut short exits 9."""
    from sshbench import jobs
    from sshbench.errors import Unfinished
    from sshbench.jobs.endpoints import private_link

    private_link(opts)  # before the progress bar's thread: a namespace is entered by a single-threaded process
    store = open_store(db)
    state = session()
    state.run_id, state.resume_command = resume, opts.command.resume_command
    with RichProgress() as progress:
        noted = functools.partial(_plan_noted, console=progress.bar.console)
        job = jobs.Job(store, opts, progress, resume, lambda rid: setattr(state, "run_id", rid), noted, _allows(opts))
        try:
            run_id = jobs.run(job)
        except Unfinished as exc:  # what it measured is shown, then why it stopped
            show(store, exc.run_id, as_json)
            raise
    show(store, run_id, as_json, discovery_only=not opts.measures)
    if store.run(run_id).fleet is not None:
        _check_fleet(store, run_id)
    else:
        _check_finished(store, run_id, opts)


def _allows(opts: JobOptions) -> Callable[[str, str], bool]:
    """Return the run's policy as a filter (a fleet times only the kex it allows), read at its first use."""
    from sshbench.analyse.policy import Policy, resolve

    @functools.cache
    def policy() -> Policy:
        """Read the policy once."""
        return resolve(opts.policy)

    return lambda kind, name: policy().check(kind, name).allowed


def missed_hosts(store: Store, fleet: Fleet) -> list[tuple[str, str]]:
    """Return the hosts of a fleet that were not measured to the end, each with why."""
    from sshbench.samples import RunStatus

    missed = []
    for h in fleet.hosts:
        status = None if h.run is None else store.run(h.run).status
        if h.failure or status is not RunStatus.COMPLETE:
            missed.append((h.name, h.failure or (f"its run {h.run} is {status}" if status else "not reached")))
    return missed


def _check_fleet(store: Store, run_id: int) -> None:
    """Fail (exit 4, after the tables) when some hosts of a fleet were not measured, naming them."""
    fleet = store.run(run_id).fleet
    assert fleet is not None
    missed = missed_hosts(store, fleet)
    if missed:
        names = "; ".join(f"{name} ({why})" for name, why in missed[:5])
        more = f"; and {len(missed) - 5} more" if len(missed) > 5 else ""
        raise SshbenchError(
            f"{len(missed)} of {len(fleet.hosts)} hosts were not measured: {names}{more}",
            place=f"fleet run {run_id}",
            fix=f"fix what each reason names (`{hints.ssh_verbose('HOST')}`), then measure them again with "
            f"`{hints.sshbench('fleet', '--resume', str(run_id))}`",
            code=ExitCode.CONNECTION_FAILED,
        )


NARROWING = (  # a command's parameter -> the option that narrows its plan
    ("cipher", "--cipher"),
    ("kex", "--kex"),
    ("hostkey", "--hostkey"),
    ("mac_mode", "--macs default"),
    ("direction", "--direction"),
    ("client", "--client"),
    ("server_specs", "--server"),
    ("tool", "--tool"),
    ("no_throughput", "--no-throughput"),
)


def narrowing() -> list[str]:
    """Return the options of the command being run that narrow its plan (only those it takes)."""
    context = click.get_current_context(silent=True)
    names = {p.name for p in context.command.params} if context else set()
    return [flag for name, flag in NARROWING if name in names]


def _plan_noted(estimate: Any, console: Console) -> None:
    """Show the plan's time estimate on stderr through the progress bar's console (a line of another console's
    could be cut by the bar's refresh, from its own thread), then refuse it if it cannot fit its budget."""
    from sshbench.measure.budget import check

    if estimate is not None:
        console.print(estimate.describe(), highlight=False, soft_wrap=True)
    check(estimate, narrowing() if estimate is None or estimate.narrows else ())


def _check_finished(store: Store, run_id: int, opts: JobOptions) -> None:
    """Fail (after the tables) when nothing was measured, or when rows are too short to rank or broke off."""
    from sshbench.jobs.recording import unfinished_rows, wanted
    from sshbench.samples import RunStatus

    stored = store.scenarios(run_id)
    soak = opts.command.row.counts_failures
    if stored and not soak and not any(s.ok for st in stored for s in st.samples):
        reasons = sorted({st.failure for st in stored if st.failure}) or ["the --max-time budget ran out first"]
        unsupported = all(r.startswith("unsupported") for r in reasons)
        resume = hints.sshbench(opts.command.resume_command, "--resume", str(run_id))
        raise SshbenchError(
            "nothing could be measured: " + "; ".join(reasons[:3]),
            place=f"run {run_id}",
            fix=f"choose algorithms the server supports (see `{hints.measure('algos', opts.target, opts.ssh_config)}`)"
            if unsupported
            else f"raise --max-time or narrow the plan, then `{resume}`",
            code=ExitCode.UNSUPPORTED_ALGORITHM if unsupported else ExitCode.MEASUREMENT_FAILED,
        )
    if store.run(run_id).status is RunStatus.INCOMPLETE:
        short, broke = unfinished_rows(stored, opts.plan, opts.command)
        needs = sorted({wanted(opts.plan, opts.command, st) for st in short})
        need = " or ".join(map(str, needs))  # a tune remedy needs 6 rounds, a rank 3
        what = [f"{len(short)} of {len(stored)} rows have fewer than the {need} samples they need"] if short else []
        what += [f"{len(broke)} stopped working mid-run ({broke[0].failure})"] if broke else []
        budget = f", or raise --max-time (it was {opts.plan.max_time:g} s)" if opts.plan.max_time and short else ""
        raise SshbenchError(
            f"run {run_id} is incomplete: " + "; ".join(what),
            place=f"run {run_id}",
            fix=f"finish it with `{hints.sshbench(opts.command.resume_command, '--resume', str(run_id))}`{budget}",
            code=ExitCode.MEASUREMENT_FAILED,
        )
    failed = [st for st in stored if any(not s.ok for s in st.samples)] if soak else []
    if failed:
        logins = sum(1 for st in failed for s in st.samples if not s.ok)
        soaked = [st for st in stored if st.samples]
        raise SshbenchError(
            f"{logins} login{'s' if logins != 1 else ''} failed in {len(failed)} of {len(soaked)} "
            f"{opts.command.row.failed_in}",
            place=f"run {run_id}",
            fix=opts.command.row.failed_fix,
            code=ExitCode.LOGINS_FAILED,
        )


def rejudged(stored: StoredRun, margin: str | None, policy: str | None = None) -> StoredRun:
    """Return a stored run judged with another --margin (or --policy) than it was measured with, saying so."""
    import dataclasses

    from sshbench.cli.options import parse_percent

    opts = stored.run.options
    new = opts
    if margin is not None:
        new = dataclasses.replace(new, margin=parse_percent(margin, "--margin"))
        if new.margin != opts.margin:
            err().print(
                f"judged with --margin {new.margin:.1%} (run {stored.run.id} was measured with "
                f"{opts.margin:.1%}): every verdict below is re-judged from the stored samples",
                highlight=False,
            )
    if policy is not None:
        new = dataclasses.replace(new, policy=policy)
    if new is opts:
        return stored
    return dataclasses.replace(stored, run=dataclasses.replace(stored.run, options=new))


def show(store: Store, run_id: int, as_json: bool, discovery_only: bool = False, margin: str | None = None) -> None:
    """Print a stored run as tables or JSON (judged with another --margin when one is given)."""
    stored = rejudged(store.load(run_id), margin)
    if as_json:
        import json

        from sshbench.render.export import run_document

        click.echo(json.dumps(run_document(stored), indent=2))
        return
    from sshbench.render.show import print_run

    print_run(out(), stored, store.path, discovery_only)


OUTPUT_ONLY = {"resume", "db", "as_json", "wide", "details"}


def resuming(given: Given) -> bool:
    """Finish the run named by --resume (refusing other options) and return True, or return False."""
    if given.resume is None:
        return False
    ctx = click.get_current_context()
    changed = [
        p
        for p in ctx.command.params
        if p.name not in OUTPUT_ONLY and ctx.get_parameter_source(p.name or "") is ParameterSource.COMMANDLINE
    ]
    if changed:
        names = ", ".join(p.opts[0] if isinstance(p, click.Option) else p.human_readable_name for p in changed)
        raise SshbenchError(
            f"--resume finishes {_which_run(given.resume)} with the options it was started with; {names} cannot change "
            "them",
            place="--resume",
            fix=f"drop {names}, or start a new run without --resume",
            code=ExitCode.USAGE,
        )
    resume_run(given.resume, given.db, given.as_json)
    return True


def _which_run(run_id: int) -> str:
    """Return a run reference in words: `run 3`, or `the last run` for `last`."""
    from sshbench.cli.params import LAST

    return "the last run" if run_id == LAST else f"run {run_id}"


def resolve(store: Store, run_id: int) -> int:
    """Return a run id, turning `last` into the newest run."""
    from sshbench.cli.params import LAST

    if run_id != LAST:
        return run_id
    latest = store.latest_run()
    if latest is None:
        raise SshbenchError(
            "there are no stored runs",
            place=str(store.path),
            fix=f"run `{hints.sshbench()}` first",
            code=ExitCode.USAGE,
        )
    return latest


def resume_run(run_id: int, db: Path | None, as_json: bool) -> None:
    """Finish an interrupted run with its stored options."""
    from sshbench.samples import RunStatus

    store = open_store(db)
    record = store.run(resolve(store, run_id))
    if record.parent is not None:
        raise SshbenchError(
            f"run {record.id} is one host of fleet run {record.parent}",
            place="--resume",
            fix=f"resume the fleet: `{hints.sshbench('fleet', '--resume', str(record.parent))}`",
            code=ExitCode.USAGE,
        )
    missed = record.fleet is not None and bool(missed_hosts(store, record.fleet))
    if record.status is RunStatus.COMPLETE and not missed:
        raise SshbenchError(
            f"run {record.id} is already complete",
            place="--resume",
            fix=f"see it with `{hints.sshbench('show', str(record.id))}`",
            code=ExitCode.USAGE,
        )
    store.check_free(record.id)  # early, before any server starts; `claim` checks again atomically
    execute(record.options, db, as_json, resume=record.id)
