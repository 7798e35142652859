"""What the commands that read stored runs share: which run `last` draws, rows under their negotiated names, and
the `--fail-if` gate of `compare`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from sshbench.cli.common import err, resolve
from sshbench.cli.params import LAST
from sshbench.errors import ExitCode, SshbenchError

if TYPE_CHECKING:
    from sshbench.analyse.compare import Change, FailIf
    from sshbench.records import StoredRun, StoredScenario
    from sshbench.storage.store import Store


def settled_last(store: Store) -> int:
    """Return the newest run no live sshbench is still writing (saying so when newer ones are being written)."""
    newest = resolve(store, LAST)
    busy: list[str] = []
    for record, _ in store.runs():  # newest first
        pid = store.writer(record.id)
        if pid is None:
            if busy:
                verb = "is" if len(busy) == 1 else "are"
                err().print(
                    f"report of run {record.id}: {', '.join(busy)} {verb} still being measured; "
                    f"`sshbench report {newest}` draws it once it is done",
                    highlight=False,
                    soft_wrap=True,
                )
            return record.id
        busy.append(f"run {record.id} (process {pid})")
    return newest


def named_rows(stored: StoredRun) -> list[StoredScenario]:
    """Return a run's rows with its client's own algorithms named as negotiated (analyse/compare.named)."""
    from sshbench.analyse.compare import named

    disc = stored.run.discovery
    return named(stored.scenarios, disc.default() if disc else None)


def _names(rows: Sequence[Change]) -> str:
    """Return rows' labels, the first five, with how many more."""
    more = f" and {len(rows) - 5} more" if len(rows) > 5 else ""
    return "; ".join(c.label for c in rows[:5]) + more


def _more_samples(rows: Sequence[Change]) -> str:
    """Return how to give the gate rows it can judge: more logins for a load step's percentile, else more rounds."""
    needs = max((c.needs for c in rows if c.needs is not None), default=None)
    if needs is not None:
        return f"run load steps of at least {needs:,} logins each (a longer --step-time) on both sides, then compare"
    return "measure at least 3 samples per scenario on both sides (more rounds: --rounds), then compare"


def gate(fail_if: str, judged: FailIf, changes: Sequence[Change], ids_a: Sequence[int], ids_b: Sequence[int]) -> None:
    """Warn about scenarios `--fail-if` cannot tell, then fail when it checked nothing (exit 11) or when some scenario
    of B is surely slower than allowed (exit 10)."""
    from sshbench.analyse.compare import matched

    threshold, side_a, side_b = judged.threshold, " + ".join(map(str, ids_a)), " + ".join(map(str, ids_b))
    if judged.unsure:
        click.echo(
            f"sshbench: warning: --fail-if {fail_if}: for {len(judged.unsure)} scenario(s) the data cannot tell "
            f"whether they are slower by more than {threshold:g}%: inconclusive, not failed (more samples or runs per "
            "side would tell)",
            err=True,
        )
    if judged.unjudged:
        click.echo(
            f"sshbench: warning: --fail-if {fail_if}: {len(judged.unjudged)} scenario(s) in both runs have too few "
            f"samples for a verdict and were not checked: {_names(judged.unjudged)}",
            err=True,
        )
    if matched(changes) and not judged.checked:
        raise SshbenchError(
            f"--fail-if {fail_if} checked nothing: runs {side_a} and {side_b} have {matched(changes)} scenario(s) in "
            "common, each with too few samples for a verdict",
            place="--fail-if",
            fix=_more_samples(judged.unjudged),
            code=ExitCode.NOTHING_COMPARED,
        )
    if not matched(changes):
        raise SshbenchError(
            f"--fail-if {fail_if} checked nothing: runs {side_a} and {side_b} have no scenario in common "
            f"({len(changes)} on one side only)",
            place="--fail-if",
            fix="compare runs that measured the same rows (the same command and algorithms: see `sshbench show N`)",
            code=ExitCode.NOTHING_COMPARED,
        )
    if judged.failing:
        raise SshbenchError(
            f"{len(judged.failing)} scenario(s) of run {side_b} are slower than run {side_a} by more than "
            f"{threshold:g}% even at their interval's best end",
            place="--fail-if",
            fix="see the table above; rerun both to rule out drift between runs, and compare several runs per side",
            code=ExitCode.REGRESSION,
        )
