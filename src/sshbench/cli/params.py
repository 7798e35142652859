"""Parameter types shared by the commands: stored runs (`RUN`: an id or `last`; `RUNS`: a comma-separated list),
and the shell completers of algorithm names (`ssh -Q`) and run ids (the database)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import click
from click.shell_completion import CompletionItem

QUERIES = {"kex": "kex", "hostkey": "HostKeyAlgorithms", "cipher": "cipher", "mac": "mac"}
LAST = -1  # the RUN argument `last`: the newest run


def algorithms(kind: str) -> Callable[[click.Context, click.Parameter, str], list[CompletionItem]]:
    """Return a completer of comma-separated algorithm names this ssh client supports (`ssh -Q`)."""

    def complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        """Complete the last name of a comma-separated list."""
        ssh = shutil.which("ssh")
        if ssh is None:
            return []
        try:
            done = subprocess.run([ssh, "-Q", QUERIES[kind]], capture_output=True, text=True, timeout=5, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return []
        head, _, last = incomplete.rpartition(",")
        prefix = f"{head}," if head else ""
        return [CompletionItem(prefix + n) for n in done.stdout.split() if n.startswith(last)]

    return complete


def run_ids(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Complete run ids from the database (read-only), newest first, with what each run was."""
    from sshbench.errors import SshbenchError
    from sshbench.storage.store import Store, default_db_path

    db = ctx.params.get("db") or os.environ.get("SSHBENCH_DB") or default_db_path()
    try:
        runs = Store(Path(db), read_only=True).runs(50)
    except SshbenchError:
        return []
    items = [CompletionItem("last", help="the newest run")] if "last".startswith(incomplete) else []
    return items + [
        CompletionItem(str(r.id), help=f"{r.kind} {r.target} {r.status} {r.started_at[:16]}")
        for r, _ in runs
        if str(r.id).startswith(incomplete)
    ]


class RunRef(click.ParamType[int, object]):
    """A stored run: its id, or `last` for the newest."""

    name = "run"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> int:
        """Return the run id, or LAST."""
        if isinstance(value, int):
            return value
        text = str(value).strip().lower()
        if text == "last":
            return LAST
        if text.isdigit():
            return int(text)
        from sshbench import hints

        self.fail(f"{value!r} is not a run: use a run id from `{hints.sshbench('history')}`, or `last`", param, ctx)

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        """Complete run ids."""
        return run_ids(ctx, param, incomplete)


class RunRefs(click.ParamType[tuple[int, ...], object]):
    """One or more stored runs, comma-separated: ids, or `last`."""

    name = "runs"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> tuple[int, ...]:
        """Return the run ids (LAST for `last`)."""
        if isinstance(value, tuple):
            return value
        one = RunRef()
        return tuple(one.convert(part, param, ctx) for part in str(value).split(",") if part.strip())

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        """Complete the last run id of the list."""
        head, _, last = incomplete.rpartition(",")
        prefix = f"{head}," if head else ""
        return [CompletionItem(prefix + str(i.value), help=i.help) for i in run_ids(ctx, param, last)]
