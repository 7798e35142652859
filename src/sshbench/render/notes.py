"""The lines under a result table: failures, the warnings a reader must act on (all of them on the complete
screen), the legend of rows racing stopped early, unranked rows, aliases, CPU read over one CPU, failed samples."""

from __future__ import annotations

from collections.abc import Sequence

from rich.markup import escape

from sshbench import hints, kex
from sshbench.analyse.results import Row
from sshbench.model import Kind
from sshbench.ratios import Standing
from sshbench.render import screen
from sshbench.samples import SKIPPED
from sshbench.stats import CONFIDENCE, MIN_RANKED, REMEDY

MOST_WARNED = 5  # warning lines under a table, at most: the rest counted in one line
BRIEF_REMEDY = "marked ! may be unstable: more rounds (--max-time), a quieter machine"


def not_measured_word(failure: str) -> str:
    """Return the word a row without samples is listed under: skipped, n/a (unsupported) or failed."""
    if failure.startswith(SKIPPED):
        return "skipped"
    return "n/a" if failure.startswith("unsupported") else "[red]failed[/]"


def _over_one_cpu(rows: Sequence[Row]) -> list[str]:
    """Return the rows whose CPU per GiB at their rate reads as more than one CPU (one ssh is single-threaded, an
    embedded server is pinned to one CPU), each with its sides' figures: the figure counts each sample's login, the
    rate does not; with what each side used while the payload moved, where that was read apart."""
    found = []
    for row in rows:
        costs, s = row.costs, row.summary
        if costs is None or s is None or not row.scenario.metric.costs_per_gib or row.scenario.client is not None:
            continue
        sides = [
            f"{side} {per_gib * s.median * 1e6 / 2**30:.1f}" + ("" if busy is None else f" ({busy:.2f})")
            for side, per_gib, busy in (
                ("client", costs.client_cpu_gib, costs.client_busy),
                ("server", costs.server_cpu_gib, costs.server_busy),
            )
            if per_gib is not None and per_gib * s.median * 1e6 / 2**30 > 1.05
        ]
        if sides:
            found.append(f"{row.scenario.label} {', '.join(sides)}")
    return found


def rank_notes(rows: Sequence[Row]) -> list[str]:
    """Return the lines saying why rows have no rank: too few samples, or not told apart from the leader yet."""
    lines = []
    unranked = [r for r in rows if r.summary is not None and not r.summary.rankable]
    if unranked:
        lines.append(f"  rank - : fewer than {MIN_RANKED} samples, too few to rank ({len(unranked)} row(s))")
    undecided = [r for r in rows if r.summary is not None and r.summary.rankable and r.rank == 0]
    if undecided and screen.brief():
        lines.append(f"  rank - : {len(undecided)} row(s) not told apart from the leader yet (more rounds decide)")
    elif undecided:
        lines.append(
            f"  rank - : not told apart from the leader yet ({len(undecided)} row(s), listed after the ranked ones): "
            "more rounds decide them (--max-rounds, --max-time)"
        )
    return lines


def decided_early(r: Row) -> bool:
    """Return True for a row whose few samples already decided it slower than its group's leader (racing stopped
    it: marked ~, not warned about)."""
    return (
        bool(r.warning) and r.standing is Standing.SLOWER and r.summary is not None and r.summary.coverage < CONFIDENCE
    )


def cpu_notes(rows: Sequence[Row], shown: bool = True) -> list[str]:
    """Return the line naming rows whose CPU per GiB at their rate reads as more than one CPU, if any (the brief
    screen: nothing when the table hides that column, else the rows counted)."""
    over = _over_one_cpu(rows)
    if not over or (screen.brief() and not shown):
        return []
    if screen.brief():
        return [
            f"  [dim]CPU s/GiB: {len(over)} row(s) read as more than one CPU (each sample's login counts): --details[/]"
        ]
    said = (
        "CPU s/GiB counts each sample's login (its CPU, not its time), so at these rates it reads as more than one CPU "
        "(CPUs, and in brackets those used while the payload moved): " + "; ".join(over)
    )
    return [f"  [dim]{escape(said)}[/]"]


def row_notes(
    rows: Sequence[Row], run_id: int | None = None, costs_shown: bool = True, listed: Sequence[Row] | None = None
) -> list[str]:
    """Return the lines printed under a result table: failures, warnings, unranked rows (`costs_shown`: the table
    shows the CPU and memory columns; `listed`: the rows it lists, when not all)."""
    lines = [
        f"  {not_measured_word(r.failure)} {escape(r.scenario.label)}: {escape(r.failure.removeprefix(SKIPPED))}"
        for r in rows
        if r.summary is None and r.failure
    ]
    lines += _warning_lines(rows, rows if listed is None else listed)
    lines += rank_notes(rows)
    pending = sum(1 for r in rows if r.summary is None and not r.failure)
    if pending:
        lines.append(f"  pending: {pending} row(s) not measured yet")
    connections = (r.scenario.kex for r in rows if r.scenario.kind is Kind.LATENCY)
    aliases = kex.aliases_of(connections)  # a key exchange measured once under one of its names
    if not screen.brief():  # the brief table lists each under one name; --details says which names are one
        lines += [f"  {escape(name)} = {escape(' = '.join(others))} (one algorithm)" for name, others in aliases]
    lines += cpu_notes(rows, costs_shown)
    failed = sum(r.failed_samples for r in rows if not (r.failure or "").startswith(SKIPPED))
    if failed and run_id is not None:
        how = escape(hints.sshbench("export", str(run_id)))
        lines.append(f"  {failed} failed sample(s) kept in the database (`{how}`)")
    return lines


def _warning_lines(rows: Sequence[Row], listed: Sequence[Row]) -> list[str]:
    """Return the warnings under a table: one line per listed row a reader must act on (`warned`, at most
    MOST_WARNED; the others counted, named by --details), what to do about them, the rows a brief table does not
    list counted with their medians' range, and one legend line for the rows racing stopped early (marked ~)."""
    settled = [r for r in rows if decided_early(r)]
    unlisted = [r for r in rows if r not in listed]
    flagged = [r for r in rows if r.warning and r not in settled]
    acted = [r for r in flagged if warned(r) and r in listed][:MOST_WARNED]
    lines = [f"  [yellow]![/] {escape(r.scenario.label)}: {r.warning}" for r in acted]
    others = [r for r in flagged if r not in acted and r in listed]  # those not listed are counted below
    if others:
        wide = "a wide interval" if screen.brief() else "an interval wider than the target"
        lines.append(f"  {len(others)} other row(s) with {wide} or few samples: --details names them")
    if acted:
        lines.append(f"  [yellow]![/] {BRIEF_REMEDY if screen.brief() else REMEDY}")
    if unlisted:
        lines.append(_unlisted_line(unlisted))
    shown_early = [r for r in settled if r in listed]
    if screen.brief():  # the line above is the legend of the rows marked ~ where racing stopped all it leaves out
        if shown_early and not (unlisted and all(decided_early(r) for r in unlisted)):
            lines.append("  ~ stopped early by racing (already slower): rough figures")
    elif settled:
        least = min(r.summary.n for r in settled if r.summary is not None)
        lines.append(
            f"  ~ stopped early: {len(settled)} row(s) already significantly slower than the leader at {least} "
            "samples or more (racing stops a row there): their rank holds; their medians are rough, their "
            "intervals cover less than 95 %"
        )
    return lines


def _unlisted_line(unlisted: Sequence[Row]) -> str:
    """Return the line counting the slower rows a brief table does not list, with the range of their medians, and
    the legend of the rows racing stopped early (marked ~) where those are all it leaves out."""
    metric = unlisted[0].scenario.metric
    medians = sorted(r.summary.median for r in unlisted if r.summary is not None)
    ends = dict.fromkeys(metric.format(m) for m in (medians[0], medians[-1]))
    span = f"{' to '.join(ends)} {metric.unit}"
    if all(decided_early(r) for r in unlisted):
        return f"  ~ stopped early by racing, slower: {len(unlisted)} not listed, {span} (--details)"
    return f"  {len(unlisted)} slower row(s) not listed, {span} (--details)"


def warned(row: Row) -> bool:
    """Return True for a warning a reader must act on, the only kind the brief screen marks: on the leader or a row
    tied with it (the answer), or outliers; every warning on the complete screen."""
    if not screen.brief():
        return True
    return row.rank == 1 or row.standing is Standing.LEADER or "outlier" in (row.warning or "")
