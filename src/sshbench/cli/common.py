"""What the commands share: the session the error boundary reads, consoles, the progress bar, shared options,
and running a job then showing what it stored.

Kept light on purpose: `sshbench --help` imports this module, so rich, the store, the jobs and the renderers
are imported inside the functions that use them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sshbench.errors import ExitCode, SshbenchError

if TYPE_CHECKING:
    from rich.console import Console

    from sshbench.model import JobOptions
    from sshbench.store import Store

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


@dataclass
class Session:
    """What the error boundary needs to know about the command being run (its run, for the resume hint)."""

    run_id: int | None = None
    resume_command: str = "run"
    traceback: bool = False


def session() -> Session:
    """Return the session of the command being run."""
    found = click.get_current_context().find_object(Session)
    assert found is not None, "commands run under main(), which creates the session"
    return found


@functools.cache
def out() -> Console:
    """Return the console for results (stdout)."""
    from rich.console import Console

    return Console()


@functools.cache
def err() -> Console:
    """Return the console for progress and messages (stderr)."""
    from rich.console import Console

    return Console(stderr=True)


def apply(f: Callable[..., Any], decorators: Sequence[Decorator]) -> Callable[..., Any]:
    """Apply decorators so that options appear in --help in the order listed."""
    for decorator in reversed(decorators):
        f = decorator(f)
    return f


def db_only(f: Callable[..., Any]) -> Callable[..., Any]:
    """Add --db (the results database)."""
    return click.option(
        "--db",
        type=click.Path(dir_okay=False, path_type=Path),
        envvar="SSHBENCH_DB",
        help="Results database [default: $XDG_DATA_HOME/sshbench/sshbench.db].",
    )(f)


def db_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """Add --db and --json to a command."""
    f = click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout instead of tables.")(f)
    return db_only(f)


def ssh_config_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """Add --ssh-config (ssh -F) for remote targets."""
    return click.option(
        "--ssh-config",
        type=click.Path(exists=True, dir_okay=False),
        help="ssh_config file for a remote TARGET (ssh -F) [default: ~/.ssh/config].",
    )(f)


def open_store(db: Path | None) -> Store:
    """Open the results database."""
    from sshbench.store import Store, default_db_path

    return Store(db or default_db_path())


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

        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=err(),
            transient=True,
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
    """Run a job with a progress bar, then print what was stored."""
    from sshbench import jobs

    store = open_store(db)
    state = session()
    state.run_id, state.resume_command = resume, opts.command.resume_command
    with RichProgress() as progress:
        run_id = jobs.run(jobs.Job(store, opts, progress, resume, lambda rid: setattr(state, "run_id", rid)))
    show(store, run_id, as_json, discovery_only=not opts.measures)
    stored = store.scenarios(run_id)
    if stored and not any(s.ok for st in stored for s in st.samples):
        reasons = sorted({st.failure for st in stored if st.failure})
        unsupported = all(r.startswith("unsupported") for r in reasons)
        raise SshbenchError(
            "nothing could be measured: " + "; ".join(reasons[:3]),
            place=f"run {run_id}",
            fix="choose algorithms the server supports (see `sshbench algos` or the table above)",
            code=ExitCode.UNSUPPORTED_ALGORITHM if unsupported else ExitCode.MEASUREMENT_FAILED,
        )


def show(store: Store, run_id: int, as_json: bool, discovery_only: bool = False) -> None:
    """Print a stored run as tables or JSON."""
    stored = store.load(run_id)
    if as_json:
        import json

        from sshbench.render.export import run_document

        click.echo(json.dumps(run_document(stored), indent=2))
        return
    from sshbench.render.show import print_run

    print_run(out(), stored, store.path, discovery_only)


def resume_run(run_id: int, db: Path | None, as_json: bool) -> None:
    """Finish an interrupted run with its stored options."""
    from sshbench.model import RunStatus

    store = open_store(db)
    record = store.run(run_id)
    if record.status is RunStatus.COMPLETE:
        raise SshbenchError(
            f"run {record.id} is already complete",
            place="--resume",
            fix=f"see it with `sshbench show {record.id}`",
            code=ExitCode.USAGE,
        )
    execute(record.options, db, as_json, resume=record.id)


def write_files(output: Path, files: dict[str, str]) -> None:
    """Write one file (name '') or several files into a directory, naming the path on failure."""
    try:
        if "" in files:
            output.write_text(files[""])
            return
        output.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (output / name).write_text(text)
    except OSError as exc:
        raise SshbenchError(
            f"cannot write {output}: {exc.strerror}",
            place="--output",
            fix="choose a writable path",
            code=ExitCode.STORAGE,
        ) from None
