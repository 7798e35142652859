"""Presentation of `compare`: environment warnings, per-scenario changes with their verdicts, a summary line, the
`--fail-if` outcome; and its JSON."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from sshbench.analyse.claims.core import margin_text
from sshbench.analyse.compare import DRIFT, Change, FailIf, matched
from sshbench.loadsteps import StepKind
from sshbench.model import Metric
from sshbench.ratios import BY_PERCENTILES
from sshbench.render import screen
from sshbench.render.console import ci_cell
from sshbench.render.layout import Column, build, fit, hidden_note
from sshbench.stats import MIN_RANKED, Summary
from sshbench.units import format_value

VERDICT_STYLE = {"faster": "green", "slower": "red", "equivalent": "dim", "inconclusive": "yellow"}
MORE_LOGINS = {
    StepKind.RATE: "a longer --step-time",
    StepKind.BURST: "more --repeats",
    StepKind.SESSIONS: "more --sessions",
}
WORDS = ("equivalent", "faster", "slower", "inconclusive")


def summary_cell(metric: Metric, s: Summary | None) -> str:
    """Format a median with its CI (and the CI's real coverage when below 95 %), without the unit."""
    if s is None:
        return "-"
    return f"{metric.format(s.median)} ({ci_cell(s, metric.format)})"


def side_cell(c: Change, s: Summary | None) -> str:
    """Format one side of a row: its median, or a load step's percentile, with its interval (a percentile too few
    logins bound: the value and its logins)."""
    if s is not None and c.percentile is not None and s.coverage == 0:
        return f"{c.scenario.metric.format(s.median)} (n {s.n})"
    return summary_cell(c.scenario.metric, s)


def ratio_cell(c: Change) -> str:
    """Return the interval of B/A as a change in %: `-22 % .. -18 %` ('' without a verdict)."""
    if c.judged is None:
        return ""
    r = c.judged.ratio
    return f"{100 * (r.low - 1):+.1f}% .. {100 * (r.high - 1):+.1f}%"


def verdict_cell(c: Change) -> str:
    """Return the verdict, with how many more samples (a load step's: logins) would likely decide an inconclusive
    one (the brief screen: in one line under the table)."""
    more = c.judged.more if c.judged and not screen.brief() else None
    what = "login" if c.percentile is not None else "sample"
    each = f"~{more} more {what}{'s' if more and more > 1 else ''} each"
    word = c.verdict + (f" ({each})" if c.verdict == "inconclusive" and more else "")
    return f"[{VERDICT_STYLE.get(c.verdict, 'yellow')}]{word}[/]"


def compare_columns(changes: Sequence[Change], a: str, b: str) -> list[Column]:
    """Return the comparison's columns: scenario, unit, A, B, change, its interval and the verdict."""
    stat = "value" if any(c.percentile is not None for c in changes) else "median"
    units = {c.scenario.metric.unit for c in changes}
    unit = f" {units.pop()}" if len(units) == 1 else ""  # one unit: in the titles, not a column
    per_row = [Column("unit", tuple(c.scenario.metric.unit for c in changes))] if not unit else []
    return [
        Column("scenario", tuple(c.label for c in changes), fold=True),
        *per_row,
        Column(f"{a} {stat}{unit} (CI)", tuple(side_cell(c, c.a) for c in changes), right=True, narrow=True),
        Column(f"{b} {stat}{unit} (CI)", tuple(side_cell(c, c.b) for c in changes), right=True, narrow=True),
        Column(
            "change",
            tuple("" if c.percent is None else f"{c.percent:+.1f}%" for c in changes),
            right=True,
            shed=1,  # both sides' values and the interval stay
        ),
        Column("95% interval", tuple(ratio_cell(c) for c in changes), right=True),
        Column("verdict", tuple(verdict_cell(c) for c in changes)),
    ]


def compare_table(changes: Sequence[Change], a: str, b: str, width: int | None = None) -> Table:
    """Return one row per scenario, fitted to `width`."""
    shown, _ = fit(compare_columns(changes, a, b), width)
    return build(shown)


def compare_note(changes: Sequence[Change], a: str, b: str, width: int | None) -> str | None:
    """Return the line naming the columns a narrow terminal hides, if any."""
    full = compare_columns(changes, a, b)
    return hidden_note(fit(full, width)[1], full)


def _undecided(changes: Sequence[Change]) -> str | None:
    """Return the brief screen's line on how many more samples would decide the inconclusive rows."""
    more = [c.judged.more for c in changes if c.verdict == "inconclusive" and c.judged and c.judged.more]
    if not screen.brief() or not more:
        return None
    what = "logins" if any(c.percentile is not None for c in changes) else "samples"
    span = f"{min(more)}" if min(more) == max(more) else f"{min(more)}-{max(more)}"
    return f"  inconclusive: about {span} more {what} each would likely decide (--details: per row)"


def steps_only(changes: Sequence[Change]) -> bool:
    """Return True when every row both sides have is a load step's percentile."""
    both = [c for c in changes if c.a is not None and c.b is not None]
    return bool(both) and all(c.percentile is not None for c in both)


def side_name(runs: Sequence[int]) -> str:
    """Return how a side is named: `run 3`, or `runs 3+4` for several."""
    return f"run {runs[0]}" if len(runs) == 1 else "runs " + "+".join(str(r) for r in runs)


def explanation(a: Sequence[int], b: Sequence[int], margin: float, steps: bool = False) -> list[str]:
    """Return the lines that say what the verdicts mean and what the intervals do not hold; `steps`: every row is a
    load step's percentile."""
    several = len(a) > 1 or len(b) > 1
    pooled = "; each side's runs are pooled" if several else ""
    drift = (
        "the spread of each side's run medians is shown below"
        if several
        else "give several runs per side (compare 3,4 7,8) to see it"
    )
    what = "of each step's p50 and p99" if steps else "of the median"
    how = "order statistics" if steps else "Hodges-Lehmann, unpaired"
    return [
        f"{side_name(b)} against {side_name(a)}: the change {what} and the 95 % interval of B/A ({how}){pooled}. "
        f"equivalent = the interval lies {margin_text(margin)}; faster/slower = it excludes 0; "
        "inconclusive = neither.",
        f"  {DRIFT}: {drift}.",
    ]


def print_compare(
    console: Console,
    a: Sequence[Any],
    b: Sequence[Any],
    changes: Sequence[Change],
    env_diffs: Sequence[str],
    judged: FailIf | None,
    margin: float,
) -> None:
    """Print the comparison, then the --fail-if outcome when one was asked for."""
    ids_a, ids_b = [r.id for r in a], [r.id for r in b]
    heads = [f"{side_name([r.id])} ({r.kind}, {r.target})" for r in (*a, *b)]
    screen.say(console, " + ".join(heads[: len(a)]) + " -> " + " + ".join(heads[len(a) :]))
    for line in env_diffs:
        screen.say(console, f"[yellow]! environment {line}[/]: the change may come from this, not from SSH", True)
    lines = explanation(ids_a, ids_b, margin, steps_only(changes))
    screen.say(console, lines[0], style="bold")
    screen.say(console, lines[1])
    console.print(compare_table(changes, side_name(ids_a), side_name(ids_b), console.width))
    if note := compare_note(changes, side_name(ids_a), side_name(ids_b), console.width):
        screen.say(console, note, True)
    if undecided := _undecided(changes):
        screen.say(console, undecided)
    _print_spread(console, changes)
    counts = {w: sum(1 for c in changes if c.verdict == w) for w in WORDS}
    few = sum(1 for c in changes if c.verdict == "too few samples")
    if short := few - sum(1 for c in changes if c.needs is not None):
        screen.say(console, f"  no verdict for {short} scenario(s) with fewer than {MIN_RANKED} samples on a side")
    for line in percentile_notes(changes):
        screen.say(console, line)
    others = len(changes) - sum(counts.values()) - few
    summary = ", ".join(f"{n} {w}" for w, n in counts.items()) + (f", {few} without a verdict" if few else "")
    pairs = matched(changes)
    screen.say(
        console,
        f"{pairs} scenario{'s' if pairs != 1 else ''} matched in both: "
        + summary
        + (f", {others} on one side only" if others else ""),
    )
    if judged is not None:
        _print_fail_if(console, judged)


def percentile_notes(changes: Sequence[Change]) -> list[str]:
    """Return how a load step's rows were judged, and which percentiles had too few logins for a verdict."""
    rows = [c for c in changes if c.percentile is not None]
    if not rows:
        return []
    out = [f"  a load step's p50 and p99: {BY_PERCENTILES}; the logins of its latest attempt"]
    for p in sorted({c.percentile for c in rows if c.needs is not None and c.percentile is not None}):
        short = [c for c in rows if c.percentile == p and c.needs is not None]
        had = sorted({s.n for c in short for s in (c.a, c.b) if s is not None})
        out.append(
            f"  no verdict on the p{p:g} of {len(short)} step(s): its interval needs {short[0].needs:,} logins a side, "
            f"these had {', '.join(f'{n:,}' for n in had)}{_more(short)}"
        )
    return out


def _more(rows: Sequence[Change]) -> str:
    """Return which option gives a load step more logins, for the kinds of step these rows are."""
    kinds = {c.scenario.load.kind for c in rows if c.scenario.load is not None}
    knobs = [MORE_LOGINS[k] for k in StepKind if k in kinds]
    return f" ({' or '.join(knobs)} gives more)" if knobs else ""


def _print_spread(console: Console, changes: Sequence[Change]) -> None:
    """Print how far apart the runs of each side are, where a side has several."""
    for side, field in (("A", "spread_a"), ("B", "spread_b")):
        spreads = [s for c in changes if (s := getattr(c, field)) is not None]
        if spreads:
            most, middle = format_value("share", max(spreads), ".1%"), sorted(spreads)[len(spreads) // 2]
            console.print(
                f"  side {side}: its runs' medians of one scenario differ by up to {most} "
                f"(median {format_value('share', middle, '.1%')})",
                highlight=False,
            )


def _print_fail_if(console: Console, judged: FailIf) -> None:
    """Print FAIL, PASS or INCONCLUSIVE for --fail-if."""
    limit = f"{judged.threshold:g}%"
    if judged.failing:
        names = "; ".join(f"{c.label} at least {c.slower_by:.1f}% slower" for c in judged.failing)
        console.print(f"[red]FAIL[/]: slower by more than {limit}: {names}", highlight=False)
    if judged.unsure:
        names = "; ".join(c.label for c in judged.unsure)
        console.print(
            f"[yellow]INCONCLUSIVE[/]: cannot tell whether these are slower by more than {limit}: {names}"
            " (more samples or runs per side would tell)",
            highlight=False,
        )
    if not judged.failing and not judged.unsure and judged.checked:
        unread = f" ({len(judged.unjudged)} not checked: too few samples)" if judged.unjudged else ""
        console.print(f"[green]PASS[/]: nothing is slower by more than {limit}{unread}", highlight=False)


def compare_document(
    a: Sequence[Any],
    b: Sequence[Any],
    changes: Sequence[Change],
    diffs: Sequence[str],
    judged: FailIf | None,
    margin: float,
) -> dict[str, Any]:
    """Return the comparison as JSON-ready data."""
    return {
        "run_a": a[0].id if len(a) == 1 else [r.id for r in a],
        "run_b": b[0].id if len(b) == 1 else [r.id for r in b],
        "margin": margin,
        "note": DRIFT,
        "environment_differences": list(diffs),
        "matched": matched(changes),
        "changes": [
            {
                "scenario": c.scenario.to_dict(),
                "label": c.label,
                "unit": c.scenario.metric.stored_unit,
                "a_median": c.a.median if c.a else None,
                "b_median": c.b.median if c.b else None,
                "a_n": c.a.n if c.a else None,
                "b_n": c.b.n if c.b else None,
                "percent": c.percent,
                "percentile": c.percentile,
                "needs": c.needs,
                "verdict": c.verdict,
                "ratio": c.judged.to_dict() if c.judged else None,
                "spread_a": c.spread_a,
                "spread_b": c.spread_b,
            }
            for c in changes
        ],
        "failing": None if judged is None else [c.label for c in judged.failing],
        "inconclusive": None if judged is None else [c.label for c in judged.unsure],
    }
