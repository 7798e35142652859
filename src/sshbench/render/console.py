"""Terminal presentation with rich: result tables, claims, history, the one-line answer (the run header is
render/header.py). Never computes.

Every table reads its units, labels and columns from the scenarios' `Metric`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.console import Console
from rich.table import Table

from sshbench import hints, kex
from sshbench.analyse import policy as policies
from sshbench.analyse.claims import bounds
from sshbench.analyse.claims.core import Claim, ClaimKind
from sshbench.analyse.claims.fastest import fastest_claims, pick
from sshbench.analyse.kexcost import kex_costs
from sshbench.analyse.logins import login_split
from sshbench.analyse.policy import Policy
from sshbench.analyse.results import Row, ranked
from sshbench.discovery import Negotiated
from sshbench.errors import SshbenchError
from sshbench.model import OPENSSH_CLIENT, Kind, Scenario, client_name, is_local
from sshbench.ratios import Standing
from sshbench.records import RunRecord, StoredScenario
from sshbench.render import screen
from sshbench.render.answer import print_answer
from sshbench.render.header import print_unfinished
from sshbench.render.kexcost import print_kex_costs
from sshbench.render.layout import Column, build, fit, hidden_note
from sshbench.render.logins import print_login_split
from sshbench.render.notes import decided_early, not_measured_word, row_notes, warned
from sshbench.samples import RunStatus, not_measurable
from sshbench.stats import CONFIDENCE, Summary
from sshbench.units import format_value

BRIEF_RANKS = 3  # a brief table lists the ranks a reader chooses among; the slower rows after them are counted
STATUS_STYLE = {
    RunStatus.COMPLETE: "green",
    RunStatus.INCOMPLETE: "yellow",
    RunStatus.INTERRUPTED: "yellow",
    RunStatus.FAILED: "red",
    RunStatus.RUNNING: "cyan",
}


def rank_cell(row: Row) -> str:
    """Return the rank cell: `=2` for statistically tied ranks, `-` when unranked (too few samples, not told apart
    from the leader yet, failed)."""
    if row.rank == 0:
        return "-"
    return f"={row.rank}" if row.tied else str(row.rank)


def _pair(row: Row, client: str, server: str, unit: str) -> str:
    """Format a client / server pair of cost medians ('-' when neither was measured)."""
    if row.costs is None:
        return "-"
    a, b = getattr(row.costs, client), getattr(row.costs, server)
    if a is None and b is None:
        return "-"
    return f"{format_value(unit, a)} / {format_value(unit, b)}"


def cost_columns(rows: Sequence[Row]) -> list[tuple[str, Callable[[Row], str]]]:
    """Return the CPU/memory columns that have data in these rows, as (title, cell) pairs."""
    cols: list[tuple[str, Callable[[Row], str]]] = []
    if rows[0].scenario.metric.costs_per_gib:
        cols = [
            ("CPU s/GiB client / server", lambda r: _pair(r, "client_cpu_gib", "server_cpu_gib", "s/GiB")),
            ("peak RSS MiB client / server", lambda r: _pair(r, "client_rss", "server_rss", "MiB")),
        ]
    else:
        cols = [("server CPU ms", lambda r: format_value("ms", r.costs.server_cpu if r.costs else None))]
    return [(title, cell) for title, cell in cols if any(cell(r) != "-" for r in rows if r.summary is not None)]


def inline_bar(value: float, best: float, width: int = 16) -> str:
    """Return a bar of block characters proportional to value / best."""
    if best <= 0:
        return ""
    eighths = round(max(0.0, min(value / best, 1.0)) * width * 8)
    return "█" * (eighths // 8) + ("", "▏", "▎", "▍", "▌", "▋", "▊", "▉")[eighths % 8]


def ci_cell(s: Summary, fmt: Callable[[float], str], labelled: bool = True) -> str:
    """Return the median's confidence interval, labelled with its real coverage when below 95 % ('-' for n=1;
    `labelled` False: without it, where a legend line says it)."""
    if s.n < 2:
        return "-"
    cover = "" if s.coverage >= CONFIDENCE or not labelled else f" ({format_value('share', s.coverage)})"
    return f"{fmt(s.ci_low)}-{fmt(s.ci_high)}{cover}"


def median_cell(row: Row) -> str:
    """Return the median (flagged ! when unstable), or why there is none."""
    s = row.summary
    if s is None:
        if row.failure:
            return f"[dim]{not_measured_word(row.failure)}[/]" if not_measurable(row.failure) else "[red]failed[/]"
        return "[dim]pending[/]"
    if decided_early(row):
        return row.scenario.metric.format(s.median) + " ~"
    return row.scenario.metric.format(s.median) + (" [yellow]![/]" if row.warning and warned(row) else "")


def _ci(row: Row, fmt: Callable[[float], str]) -> str:
    """Return a row's interval cell; a row racing stopped early (~) without its coverage on the brief screen (its
    legend line says it)."""
    if row.summary is None:
        return ""
    return ci_cell(row.summary, fmt, labelled=not (screen.brief() and decided_early(row)))


def _measured(rows: Sequence[Row], cell: Callable[[Summary], str]) -> tuple[str, ...]:
    """Return one cell per row from its summary ('' for rows without one)."""
    return tuple("" if r.summary is None else cell(r.summary) for r in rows)


def client_columns(rows: Sequence[Row]) -> list[Column]:
    """Return the client (with its settings) and server columns of a `clients` run's rows (none for other runs)."""
    if not any(r.scenario.client for r in rows):
        return []
    named = tuple(client_name(r.scenario.client or OPENSSH_CLIENT, r.scenario.mode) for r in rows)
    cols = [Column("client", named, fold=True)]  # `asyncssh (64 MiB window, 128 requests)` folds at its spaces
    if any(r.scenario.server for r in rows):
        cols.append(Column("server", tuple(r.scenario.server or "" for r in rows)))
    return cols


def result_columns(rows: Sequence[Row], names: Sequence[Column] | None = None) -> list[Column]:
    """Return a result group's columns: rank, names, median, CI, IQR, n, the verdict against the group's leader,
    costs, bar, phases."""
    metric = rows[0].scenario.metric
    fmt = metric.format
    if names is None:
        clients = client_columns(rows)  # a `clients` run's connections are told apart by client alone
        names = clients + [
            Column(title, tuple(metric.labels.cells(r.scenario)[i] for r in rows), fold=True)
            for i, title in enumerate(metric.labels.titles)
            if not (clients and metric.kind is Kind.LATENCY)
        ]
        if clients and metric.kind is Kind.LATENCY and any(r.scenario.kex for r in rows):  # `clients --kex`
            names.append(Column("key exchange", tuple(r.scenario.kex or "" for r in rows), fold=True))
    best = max((r.summary.median for r in rows if r.summary), default=0.0)
    cols = [
        Column("#", tuple(rank_cell(r) for r in rows), right=True),
        *names,
        Column(f"median {metric.unit}", tuple(median_cell(r) for r in rows), right=True),
        Column("95% CI", tuple(_ci(r, fmt) for r in rows), right=True),
        Column("IQR", _measured(rows, lambda s: f"{fmt(s.q1)}-{fmt(s.q3)}"), right=True, shed=4, hidden_as="IQR"),
        Column("n", _measured(rows, lambda s: str(s.n)), right=True),
        Column("vs leader", tuple(r.standing.value if r.standing else "" for r in rows)),  # the claim itself, never
        # shed: leader | equivalent | slower | inconclusive (docs/CLAIMS.md)
    ]
    for title, cell in cost_columns(rows):
        cells = tuple("" if r.summary is None else cell(r) for r in rows)
        cols.append(Column(title, cells, right=True, shed=2, hidden_as="CPU and memory"))
    cols.append(Column("", _measured(rows, lambda s: inline_bar(s.median, best)), shed=1, hidden_as="bar"))
    if metric.phases:
        phases = tuple("/".join(format_value("ms", v, ".0f") for k, v in r.phases if k != "startup") for r in rows)
        cols.append(Column("phases ms tcp/ver/kex/auth/session", phases, shed=3, hidden_as="phases"))
    return cols


def result_table(rows: Sequence[Row], width: int | None = None) -> tuple[Table, str | None]:
    """Return the table of one result group fitted to `width`, and the note on what it had to hide."""
    full = result_columns(rows)
    shown, shed = fit(full, width)
    return build(shown), hidden_note(shed, full)


def print_table(console: Console, title: str, table: Table, note: str | None, lines: Sequence[str] = ()) -> None:
    """Print a title, its table, the note on hidden columns, and the lines under it."""
    screen.say(console, title, style="bold")
    console.print(table)
    for line in ([note] if note else []) + list(lines):
        screen.say(console, line, markup=True)


def print_results(console: Console, run: RunRecord, stored: Sequence[StoredScenario]) -> None:
    """Print every result group of a run, its warnings, what bounds its rates, and who is fastest (the brief screen:
    the answer in a few lines instead, render/answer.py)."""
    by_group = ranked(stored, run.options.plan.ci_target, run.options.margin)
    kind = run.kind.row
    if screen.brief() and kind.own_findings:  # a tune run's findings below say what each row gained
        _print_measured(console, stored, by_group)
        return
    _print_tables(console, run, by_group)
    if screen.brief() and kind.judged and kind.fastest and not kind.own_findings:
        print_answer(console, run, stored, by_group, policy_of(run))
        print_unfinished(console, run)
        return
    print_kex_costs(console, kex_costs(stored))
    print_login_split(console, login_split(stored))
    if not kind.judged:
        console.print(kind.bounds, highlight=False, style="dim")
    elif not kind.own_findings:  # a tune run names its default's bound and measures the remedies itself
        print_bounds(console, run, stored)
    if not kind.own_findings:  # a tune run's rows are timed two ways: its own section compares them
        print_claims(
            console, "Fastest here:", fastest_claims(by_group, run.discovery, policy_of(run), run.options.margin)
        )
    if any(g in by_group for g in ("download", "upload", "latency")) and kind.recommends:
        screen.say(
            console,
            f"  `{hints.sshbench('recommend', str(run.id))}` turns this into config lines under a security "
            "policy (--policy)",
        )
    if not kind.own_findings:  # a tune run says so under its findings, where it ends
        print_unfinished(console, run)


def _print_measured(console: Console, stored: Sequence[StoredScenario], by_group: dict[str, list[Row]]) -> None:
    """Print, instead of the tables, how many rows were measured and a login's delayed-ACK waits (brief screen)."""
    rows = sum(len(rows) for rows in by_group.values())
    screen.say(console, f"Measured: {rows} rows in {len(by_group)} tables (--details shows them; the gains below)")
    split = login_split(stored)
    if split is not None and split.waits > 0:
        screen.say(
            console, f"  a login waits {split.waits * 1e3:.0f} ms on delayed ACKs: --details says what removes them"
        )


def _print_tables(console: Console, run: RunRecord, by_group: dict[str, list[Row]]) -> None:
    """Print each result group's table with the lines under it, then why a host of the user's shows no server CPU."""
    hidden: set[str] = set()  # the brief screen says which columns are hidden once, not under every table
    default = run.discovery.default() if run.discovery else None
    for rows in by_group.values():
        sc = rows[0].scenario
        chosen = pick(rows, policy_of(run), default, run.options.margin) if run.kind.row.fastest else None
        listed = listed_rows(rows, default, chosen.chosen if chosen else None)
        table, note = result_table(listed, console.width)
        title = sc.metric.group(sc).title
        if run.kind.row.timed:  # a tune copy is timed as a user's copy is
            title = title.replace("handshake excluded", run.kind.row.timed)
        _, shed = fit(result_columns(listed), console.width)
        names = {c.hidden_as or c.title for c in shed}
        if screen.brief() and names <= hidden:
            note = None
        hidden |= names
        costs_shown = not any(c.hidden_as == "CPU and memory" for c in shed)
        print_table(console, title, table, note, row_notes(rows, run.id, costs_shown, listed))
    unread = _server_cpu_unread(run, [r for rows in by_group.values() for r in rows])
    if unread:
        console.print(unread, highlight=False, style="dim", markup=False)


def listed_rows(rows: Sequence[Row], default: Negotiated | None, chosen: Row | None = None) -> list[Row]:
    """Return the rows a table lists: all of them, but on the brief screen only those a reader chooses among (the
    leader, the rows not told apart from it, the first BRIEF_RANKS ranks racing did not stop early), the client's
    default (what the reader runs today) and the policy's pick (`chosen`); the other slower rows are counted in one
    line under the table (render/notes.py)."""
    if not screen.brief() or any(r.scenario.client or r.scenario.tool for r in rows):  # clients, tools: compared
        return list(rows)
    kept = [r for r in rows if _chosen_among(r) or r is chosen or _is_default(r.scenario, default)]
    return kept or list(rows)


def _chosen_among(r: Row) -> bool:
    """Return True for a row a brief table lists whatever else it lists: not measured or not ranked (said), the
    leader or a row not told apart from it, or a slower row among the first BRIEF_RANKS that racing did not stop."""
    if r.summary is None or r.standing is not Standing.SLOWER:
        return True
    return not decided_early(r) and r.rank <= BRIEF_RANKS


def _is_default(sc: Scenario, default: Negotiated | None) -> bool:
    """Return True for the row of what the client's default profile negotiated (its kex and host key for a login,
    its cipher and MAC for a transfer)."""
    if default is None or sc.client is not None:
        return False
    if sc.kind is Kind.LATENCY:
        return kex.same(sc.kex, default.kex) and sc.hostkey == default.hostkey
    return sc.cipher == default.cipher and (sc.mac or None) == (default.mac or None)


def _server_cpu_unread(run: RunRecord, rows: Sequence[Row]) -> str | None:
    """Return the line saying why a host of the user's shows no server CPU, where its rows have the client's only."""
    if is_local(run.target) or run.fleet is not None:
        return None
    client_only = [r for r in rows if r.costs and r.costs.client_cpu_gib is not None and r.costs.server_cpu_gib is None]
    if not client_only:
        return None
    return (
        "  server CPU: not reported by your host for these rows (its session reports its own CPU where it is Linux "
        "with `ss` and `mktemp`; elsewhere nothing is guessed); the client's is measured here"
    )


def print_claims(console: Console, title: str, claims: Sequence[Claim]) -> None:
    """Print claims under a title, one sentence each (caveats marked !)."""
    if not claims:
        return
    if title:
        console.print(title, style="bold", highlight=False)
    for claim in claims:
        mark = "! " if claim.kind is ClaimKind.CAVEAT or claim.kind is ClaimKind.CEILING else ""
        said = claim.brief if claim.brief and screen.brief() else claim.text
        for line in said.split("\n"):
            screen.say(console, f"  {mark}{line}")


def print_bounds(console: Console, run: RunRecord, stored: Sequence[StoredScenario]) -> None:
    """Say what bounds the rates of a run across an emulated link or under a CPU limit."""
    lim = bounds.limits(run.environment, bounds.has_evidence(stored))
    if lim is not None:
        claims = bounds.bound_claims(ranked(stored, run.options.plan.ci_target, run.options.margin), lim)
        print_claims(console, "What bounds these rates:", claims)


def policy_of(run: RunRecord) -> Policy:
    """Return the run's policy, or `modern` when its policy file is gone."""
    try:
        return policies.resolve(run.options.policy)
    except SshbenchError:
        return policies.builtin("modern")


def _target(run: RunRecord) -> str:
    """Return what a run measured, for the history: a fleet host's run names its fleet."""
    return run.target if run.parent is None else f"{run.target} (fleet {run.parent})"


def print_history(console: Console, runs: Sequence[tuple[RunRecord, int]]) -> None:
    """Print one line per stored run."""
    columns = [
        Column("run", tuple(str(run.id) for run, _ in runs), right=True),
        Column("started (UTC)", tuple(run.started_at[:16].replace("T", " ") for run, _ in runs)),
        Column("command", tuple(run.kind.value for run, _ in runs)),
        Column("target", tuple(_target(run) for run, _ in runs), fold=True),
        Column("status", tuple(f"[{STATUS_STYLE.get(run.status, '')}]{run.status}[/]" for run, _ in runs)),
        Column("samples", tuple(str(n) for _, n in runs), right=True),
    ]
    shown, _ = fit(columns, console.width)
    console.print("Stored runs", style="bold")
    console.print(build(shown))
