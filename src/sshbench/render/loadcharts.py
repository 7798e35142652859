"""A `load` run's report charts: latency percentiles against the offered rate with the SLO, and each step's logins
served or failed by cause; for bursts, the share dropped per setting with its exact interval; for sessions held,
the server's memory per session against how many are held, whole and by process role."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import altair as alt

from sshbench.analyse.capacity import KexCapacity, capacities
from sshbench.analyse.load import PERCENTILES, Step
from sshbench.analyse.sessions import Held, held_steps, server_label
from sshbench.joboptions import LoadOptions
from sshbench.records import StoredRun
from sshbench.render.bursts import settings
from sshbench.render.charts import WIDTH, Figure, bar_height, inline_data, vega_spec
from sshbench.render.load import step_name, steps

SERVED = "served"
CAUSE_CHARS = 70  # a cause's words in a legend


def load_figures(data: StoredRun, prefix: str) -> list[Figure]:
    """Return a run of rate steps' charts (its own: the shared connection-time chart would read its steps as key
    exchanges)."""
    own = data.run.options.own_as(LoadOptions)
    rows = [s for s in steps(data) if s.logins]
    if not rows:
        return []
    if len(data.run.options.kex) > 1:  # key exchanges compared: p99 per key exchange, and what each costs
        table = capacities(rows, data.run.options.kex, own.slo)
        return [_p99_per_kex(rows, own, prefix), _capacity(table, prefix), _outcomes(rows, prefix, kexes=True)]
    return [_percentiles(rows, own, prefix), _outcomes(rows, prefix)]


def _p99_per_kex(rows: list[Step], own: LoadOptions, prefix: str) -> Figure:
    """Each key exchange's p99 (from the intended start) against the offered rate, with the SLO."""
    points = [{"offered": s.rate, "kex": s.kex or "", "ms": v * 1000} for s in rows if (v := s.at(99.0)) is not None]
    lines = (
        alt.Chart(inline_data(points))
        .mark_line(point=True)
        .encode(
            x=alt.X("offered:Q", title="offered logins per second", scale=alt.Scale(type="log", nice=False)),
            y=alt.Y("ms:Q", title="p99 ms from the intended start (log)", scale=alt.Scale(type="log")),
            color=alt.Color("kex:N", title="key exchange", sort=None),
            tooltip=["kex:N", "offered:Q", alt.Tooltip("ms:Q", format=".1f")],
        )
    )
    slo = alt.Chart(inline_data([{"ms": own.slo * 1000}])).mark_rule(strokeDash=[4, 4]).encode(y="ms:Q")
    title = "p99 against the offered rate, per key exchange (dashed: the SLO)"
    return Figure(
        f"{prefix}load-p99-kex", title, vega_spec((lines + slo).properties(width=WIDTH, height=260, title=title))
    )


def _capacity(table: list[KexCapacity], prefix: str) -> Figure:
    """Per key exchange: the knee found and the logins a second one core serves at its server CPU a login."""
    bars = [
        {"kex": r.kex or "", "measure": "logins/s one core serves (its CPU a login)", "per_s": r.per_core}
        for r in table
        if r.per_core is not None
    ]
    bars += [
        {
            "kex": r.kex or "",
            "measure": "knee" if r.knee.broken is not None else "knee (at least)",
            "per_s": r.knee.rate,
        }
        for r in table
        if r.knee.rate is not None
    ]
    title = "What each key exchange lets the server take: its knee, and the logins a second one core serves"
    chart = (
        alt.Chart(inline_data(bars))
        .mark_bar()
        .encode(
            y=alt.Y("kex:N", title=None, sort=[r.kex or "" for r in table]),
            yOffset=alt.YOffset("measure:N"),
            x=alt.X("per_s:Q", title="logins a second"),
            color=alt.Color("measure:N", title=None, legend=alt.Legend(orient="bottom", labelLimit=420)),
            tooltip=["kex:N", "measure:N", alt.Tooltip("per_s:Q", format=".1f")],
        )
        .properties(width=WIDTH, height=bar_height(len(table) * 2), title=title)
    )
    return Figure(f"{prefix}load-capacity", title, vega_spec(chart))


def _percentiles(rows: list[Step], own: LoadOptions, prefix: str) -> Figure:
    """Latency percentiles (from each login's intended start) against the offered rate, with the SLO."""
    points = [
        {"offered": s.rate, "percentile": f"p{p:g}", "ms": v * 1000}
        for s in rows
        for p, v in s.percentiles
        if v is not None
    ]
    points += [{"offered": s.rate, "percentile": "max", "ms": s.worst * 1000} for s in rows if s.worst is not None]
    order = [*(f"p{p:g}" for p in PERCENTILES), "max"]
    x = alt.X("offered:Q", title="offered logins per second", scale=alt.Scale(type="log", nice=False))
    lines = (
        alt.Chart(inline_data(points))
        .mark_line(point=True)
        .encode(
            x=x,
            y=alt.Y("ms:Q", title="ms from the intended start (log)", scale=alt.Scale(type="log")),
            color=alt.Color("percentile:N", sort=order, title="percentile"),
            tooltip=["offered:Q", "percentile:N", alt.Tooltip("ms:Q", format=".1f")],
        )
    )
    slo = (
        alt.Chart(inline_data([{"ms": own.slo * 1000, "label": f"SLO {own.slo * 1000:g} ms"}]))
        .mark_rule(strokeDash=[4, 4])
        .encode(y="ms:Q", tooltip=["label:N"])
    )
    cut = [f"{r.rate:g}/s ({r.logins} of {r.planned} logins)" for r in rows if r.cut]
    title = "Latency percentiles against the offered rate (dashed: the SLO)"
    title += f"; cut short, not read for the knee: {', '.join(cut)}" if cut else ""
    chart = (lines + slo).properties(width=WIDTH, height=260, title=title)
    return Figure(f"{prefix}load-percentiles", title, vega_spec(chart))


def _outcomes(rows: list[Step], prefix: str, kexes: bool = False) -> Figure:
    """Each step's logins: served, and failed by cause, stacked (each named by its key exchange when `kexes`)."""
    bars = [{"offered": step_name(s, kexes), "outcome": SERVED, "logins": s.logins - s.failures} for s in rows]
    bars += [
        {"offered": step_name(s, kexes), "outcome": words[:CAUSE_CHARS], "logins": n}
        for s in rows
        for words, n in s.causes
    ]
    chart = (
        alt.Chart(inline_data(bars))
        .mark_bar()
        .encode(
            y=alt.Y("offered:N", title=None, sort=[step_name(s, kexes) for s in rows]),
            x=alt.X("sum(logins):Q", title="logins (failed ones by cause)"),
            color=alt.Color("outcome:N", title="outcome", legend=alt.Legend(labelLimit=420, orient="bottom")),
            tooltip=["offered:N", "outcome:N", "logins:Q"],
        )
        .properties(width=WIDTH, height=bar_height(len(rows)), title="Logins per step: served and failed by cause")
    )
    return Figure(f"{prefix}load-outcomes", "Logins per step: served and failed by cause", vega_spec(chart))


def burst_figures(data: StoredRun, prefix: str) -> list[Figure]:
    """The share of each setting's burst connections dropped, with its exact 95 % interval."""
    rows = [b for b in settings(data) if b.logins]
    if not rows:
        return []
    values = [
        {
            "setting": b.label,
            "dropped": 100 * b.dropped / b.logins,
            "low": 100 * b.interval[0],
            "high": 100 * b.interval[1],
            "of": f"{b.dropped} of {b.logins}",
        }
        for b in rows
    ]
    base = alt.Chart(inline_data(values)).encode(y=alt.Y("setting:N", title=None, sort=None))
    bars = base.mark_bar().encode(
        x=alt.X("dropped:Q", title="% of connections dropped (rule: exact 95 % interval)"),
        tooltip=["setting:N", "of:N", alt.Tooltip("dropped:Q", format=".1f")],
    )
    rule = base.mark_rule().encode(x="low:Q", x2="high:Q")
    title = "Burst connections dropped per setting"
    chart = (bars + rule).properties(width=WIDTH, height=bar_height(len(rows)), title=title)
    return [Figure(f"{prefix}load-bursts", title, vega_spec(chart))]


def _per_session(points: list[dict[str, Any]], line: str, legend: str, name: str, title: str) -> Figure:
    """Return PSS per session (`MiB`) against the sessions held (`sessions`, log), a line per `line` field."""
    chart = (
        alt.Chart(inline_data(points))
        .mark_line(point=True)
        .encode(
            x=alt.X("sessions:Q", title="sessions held (log)", scale=alt.Scale(type="log", nice=False)),
            y=alt.Y("MiB:Q", title="PSS per session above the idle server, MiB"),
            color=alt.Color(f"{line}:N", title=legend),
            tooltip=[f"{line}:N", "sessions:Q", alt.Tooltip("MiB:Q", format=".2f")],
        )
    )
    return Figure(name, title, vega_spec(chart.properties(width=WIDTH, height=260, title=title)))


def _held(data: StoredRun) -> list[Held]:
    """Return a session run's steps read at rest."""
    return [h for h in held_steps(data) if h.per_session is not None and h.held]


def _mib(h: Held) -> float:
    """Return a step's PSS per session in MiB."""
    return (h.per_session or 0) / 2**20


def session_figures(data: StoredRun, prefix: str) -> list[Figure]:
    """The server's PSS per session against the sessions held (log), whole and by process role."""
    rows = _held(data)
    points = [{"sessions": h.held, "part": "whole", "MiB": _mib(h)} for h in rows]
    points += [{"sessions": h.held, "part": r.role, "MiB": r.per_session / 2**20} for h in rows for r in h.roles]
    if not points:
        return []
    title = f"{server_label(data.run.environment)}: memory per session held (PSS, whole and by process role)"
    return [_per_session(points, "part", "the server's", f"{prefix}load-sessions", title)]


def sessions_across(runs: Sequence[StoredRun]) -> list[Figure]:
    """Return, for two or more runs of sessions held in one report, PSS per session against the sessions held, a
    line per run's server (named by its banner and run)."""
    points = [
        {"sessions": h.held, "server": f"{server_label(d.run.environment)} (run {d.run.id})", "MiB": _mib(h)}
        for d in runs
        for h in _held(d)
    ]
    if len({p["server"] for p in points}) < 2:
        return []
    title = "Memory per session held, server by server (PSS above the idle server's)"
    return [_per_session(points, "server", "server", "across-load-sessions", title)]
