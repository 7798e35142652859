"""Chart specifications (Vega-Lite through altair) from stored results; no I/O, no rendering.

Every chart is a `Figure`: an id, a title and a Vega-Lite spec with its data inlined, so the report and
the PNG/SVG files need nothing from the network.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import altair as alt

from sshbench.analyse.compare import Change
from sshbench.analyse.results import Row
from sshbench.analyse.sweep import DimensionRow
from sshbench.model import METRICS, PHASES, Kind, Scenario
from sshbench.records import MemoryRecord

WIDTH = 560
NO_PHASES = "total (no phases)"  # the bar of a connection whose client reports no phases
DIRECTION_NAMES = {"down": "download", "up": "upload"}
DIMENSIONS = (  # a sweep's dimensions: (kind, what measures it, chart title)
    ("cipher", Kind.THROUGHPUT, "Sweep: throughput per cipher"),
    ("mac", Kind.THROUGHPUT, "Sweep: throughput per MAC (non-AEAD ciphers)"),
    ("kex", Kind.LATENCY, "Sweep: connection time per key exchange"),
    ("hostkey", Kind.LATENCY, "Sweep: connection time per host key"),
)


@dataclass(frozen=True)
class Figure:
    """One chart of a report."""

    id: str
    title: str
    spec: dict[str, Any]


def vega_spec(chart: alt.TopLevelMixin) -> dict[str, Any]:
    """Return the chart's Vega-Lite spec without the remote $schema URL (the report sets the mode)."""
    spec: dict[str, Any] = chart.to_dict()
    spec.pop("$schema", None)
    return spec


def inline_data(values: Sequence[dict[str, Any]]) -> alt.Data:
    """Return inline chart data."""
    return alt.Data(values=list(values))  # type: ignore[no-untyped-call]


def bar_height(n: int) -> int:
    """Return a chart height for n bars."""
    return max(60, 18 * n)


def ci_bars(
    data: Sequence[dict[str, Any]], unit: str, title: str, group: str | None = None, sort_desc: bool = True
) -> dict[str, Any]:
    """Horizontal bars of medians with 95 % CI rules; `group` colours and offsets bars within a row."""
    source = inline_data(data)
    order = sorted(
        dict.fromkeys(d["label"] for d in data), key=lambda lab: -max(d["median"] for d in data if d["label"] == lab)
    )
    if not sort_desc:
        order.reverse()
    y = alt.Y("label:N", sort=order, title=None, axis=alt.Axis(labelLimit=360))
    x_title = f"{unit} (median, 95% CI)"
    base = alt.Chart(source)
    tooltip = [
        "label:N",
        alt.Tooltip("median:Q", format=".1f"),
        alt.Tooltip("low:Q", format=".1f"),
        alt.Tooltip("high:Q", format=".1f"),
    ]
    enc: dict[str, Any] = {"y": y}
    if group:
        enc["color"] = alt.Color(f"{group}:N", title=None)
        enc["yOffset"] = alt.YOffset(f"{group}:N")
        tooltip.append(f"{group}:N")
    bars = base.mark_bar().encode(x=alt.X("median:Q", title=x_title), tooltip=tooltip, **enc)
    positions = {k: v for k, v in enc.items() if k != "color"}
    rules = base.mark_rule(color="#888", strokeWidth=1.5).encode(x="low:Q", x2="high:Q", **positions)
    rows = len(order) * (len({d[group] for d in data}) if group else 1)
    chart = alt.layer(bars, rules).properties(width=WIDTH, height=bar_height(rows), title=title)
    return vega_spec(chart)


def _label(sc: Scenario) -> str:
    """Return `[server: ]name` for a chart row: `cipher[ + MAC]`, `kex / host key`, or a profile and host key."""
    name = f"{sc.profile} profile, {sc.hostkey}" if sc.profile else sc.metric.labels.name(sc)
    return f"{sc.server}: {name}" if sc.server else name


def _interval(r: Row) -> dict[str, float]:
    """Return a row's median and CI in its metric's shown unit."""
    assert r.summary is not None
    scale = r.scenario.metric.scale
    return {"median": r.summary.median * scale, "low": r.summary.ci_low * scale, "high": r.summary.ci_high * scale}


def throughput_figures(rows_by_direction: Mapping[str, Sequence[Row]], prefix: str, by_server: bool) -> list[Figure]:
    """Throughput per cipher (x MAC), download and upload side by side, with CI error bars."""
    data = []
    for direction, rows in rows_by_direction.items():
        for r in rows:
            if r.summary is None:
                continue
            direction_name = DIRECTION_NAMES.get(direction, direction)
            data.append({"label": _label(r.scenario), "direction": direction_name, **_interval(r)})
    if not data:
        return []
    title = "Throughput per server and cipher" if by_server else "Throughput per cipher (x MAC)"
    unit = METRICS[Kind.THROUGHPUT].unit
    return [Figure(f"{prefix}throughput", title, ci_bars(data, unit, title, group="direction"))]


def efficiency_figures(shares: Mapping[str, Sequence[tuple[str, float]]], prefix: str) -> list[Figure]:
    """Each copy tool and cipher as a share of the plain TCP copy over the same link, download and upload."""
    data = [
        {"label": label, "direction": DIRECTION_NAMES.get(way, way), "share": share * 100}
        for way, items in shares.items()
        for label, share in items
    ]
    if not data:
        return []
    title = "Copy tools as a share of plain TCP (socat) over the same link"
    chart = (
        alt.Chart(inline_data(data))
        .mark_bar()
        .encode(
            y=alt.Y("label:N", title=None, axis=alt.Axis(labelLimit=360)),
            x=alt.X("share:Q", title="% of the plaintext rate"),
            color=alt.Color("direction:N", title=None),
            yOffset=alt.YOffset("direction:N"),
            tooltip=["label:N", "direction:N", alt.Tooltip("share:Q", format=".0f")],
        )
        .properties(width=WIDTH, height=bar_height(2 * len({d["label"] for d in data})), title=title)
    )
    return [Figure(f"{prefix}efficiency", title, vega_spec(chart))]


def latency_figures(rows: Sequence[Row], prefix: str) -> list[Figure]:
    """Connection time per kex x host key: phases stacked, with the CI of the total."""
    phases: list[dict[str, Any]] = []
    totals: list[dict[str, Any]] = []
    for r in rows:
        if r.summary is None:
            continue
        label, scale = _label(r.scenario), r.scenario.metric.scale
        timed = [(name, seconds) for name, seconds in r.phases if name != "startup"]
        for name, seconds in timed:
            phases.append({"label": label, "phase": name, "ms": seconds * scale, "order": PHASES.index(name)})
        if not timed:  # a client that says nothing of its phases (dbclient, a library's driver): its total alone
            phases.append({"label": label, "phase": NO_PHASES, "ms": r.summary.median * scale, "order": len(PHASES)})
        totals.append({"label": label, **_interval(r)})
    if not totals:
        return []
    order = [str(t["label"]) for t in sorted(totals, key=lambda t: float(t["median"]))]
    y = alt.Y("label:N", sort=order, title=None, axis=alt.Axis(labelLimit=360))
    stacked = (
        alt.Chart(inline_data(phases))
        .mark_bar()
        .encode(
            y=y,
            x=alt.X("sum(ms):Q", title="ms (phases stacked; rule: 95% CI of the total)"),
            color=alt.Color("phase:N", sort=[*(p for p in PHASES if p != "startup"), NO_PHASES], title="phase"),
            order=alt.Order("order:Q"),
            tooltip=["label:N", "phase:N", alt.Tooltip("ms:Q", format=".1f")],
        )
    )
    rules = alt.Chart(inline_data(totals)).mark_rule(color="#888", strokeWidth=1.5).encode(y=y, x="low:Q", x2="high:Q")
    title = (
        "Connection time per client, by phase where known"
        if any(r.scenario.client for r in rows)
        else "Connection time per key exchange and host key, by phase"
    )
    chart = alt.layer(stacked, rules).properties(width=WIDTH, height=bar_height(len(totals)), title=title)
    return [Figure(f"{prefix}latency", title, vega_spec(chart))]


def cost_figures(rows_by_direction: Mapping[str, Sequence[Row]], prefix: str) -> list[Figure]:
    """CPU seconds per GiB, client and server, per server x cipher and direction."""
    data = []
    for direction, rows in rows_by_direction.items():
        for r in rows:
            if r.costs is None:
                continue
            label = f"{_label(r.scenario)} {DIRECTION_NAMES.get(direction, direction)}"
            for side, value in (("client", r.costs.client_cpu_gib), ("server", r.costs.server_cpu_gib)):
                if value is not None:
                    data.append({"label": label, "side": side, "median": value, "low": value, "high": value})
    if not data:
        return []
    title = "CPU seconds per GiB moved (medians)"
    return [Figure(f"{prefix}cpu", title, ci_bars(data, "CPU s/GiB", title, group="side", sort_desc=False))]


def memory_figures(records: Sequence[MemoryRecord], prefix: str) -> list[Figure]:
    """PSS per server and state, stacked by process role."""
    if not records:
        return []
    data = [
        {"label": f"{m.server}: {m.state}", "role": m.role, "mib": (m.pss if m.pss is not None else m.rss) / 2**20}
        for m in records
    ]
    chart = (
        alt.Chart(inline_data(data))
        .mark_bar()
        .encode(
            y=alt.Y("label:N", title=None, sort=None),
            x=alt.X("sum(mib):Q", title="MiB (PSS; RSS where PSS is unreadable)"),
            color=alt.Color("role:N", title="role"),
            tooltip=["label:N", "role:N", alt.Tooltip("mib:Q", format=".2f")],
        )
        .properties(width=WIDTH, height=bar_height(len({d["label"] for d in data})), title="Memory per process role")
    )
    return [Figure(f"{prefix}memory", "Memory per process role", vega_spec(chart))]


def dimension_figures(dims: Sequence[DimensionRow], prefix: str) -> list[Figure]:
    """A sweep's per-cipher, per-MAC, per-kex and per-host-key aggregates with CIs."""
    figures = []
    for kind, measured_by, title in DIMENSIONS:
        metric = METRICS[measured_by]
        scale = metric.scale
        data = [
            {
                "label": d.algorithm,
                "direction": DIRECTION_NAMES.get(d.direction or "", "both"),
                "median": d.estimate.median * scale,
                "low": d.estimate.low * scale,
                "high": d.estimate.high * scale,
            }
            for d in dims
            if d.kind == kind and d.estimate is not None
        ]
        if data:
            group = "direction" if any(d.direction for d in dims if d.kind == kind) else None
            chart = ci_bars(data, metric.unit, title, group, metric.higher_is_better)
            figures.append(Figure(f"{prefix}dim-{kind}", title, chart))
    return figures


def compare_figure(changes: Sequence[Change], a: int, b: int) -> list[Figure]:
    """Change in % from run A to run B per scenario, coloured by verdict."""
    data = [{"label": c.label, "percent": c.percent, "verdict": c.verdict} for c in changes if c.percent is not None]
    if not data:
        return []
    title = f"Run {b} against run {a}: change of the median (%)"
    chart = (
        alt.Chart(inline_data(data))
        .mark_bar()
        .encode(
            y=alt.Y("label:N", title=None, sort="-x", axis=alt.Axis(labelLimit=360)),
            x=alt.X("percent:Q", title="% change (throughput: + is faster; connection time: + is slower)"),
            color=alt.Color(
                "verdict:N",
                scale=alt.Scale(
                    domain=["faster", "slower", "equivalent", "inconclusive", "too few samples"],
                    range=["#2e7d32", "#c62828", "#9e9e9e", "#f9a825", "#bdbdbd"],
                ),
            ),
            tooltip=["label:N", alt.Tooltip("percent:Q", format="+.1f"), "verdict:N"],
        )
        .properties(width=WIDTH, height=bar_height(len(data)), title=title)
    )
    return [Figure("compare", title, vega_spec(chart))]


SERIES_MEASURES = (
    ("delivery_MBps", "delivery rate, MB/s"),
    ("rtt_ms", "smoothed RTT, ms"),
    ("cwnd_segments", "cwnd, segments"),
)


def tcp_series_figure(fid: str, title: str, series: Mapping[str, Sequence[float]]) -> Figure | None:
    """One transfer's socket over time, as the kernel reported it: delivery rate, RTT and cwnd, a panel each."""
    times = series.get("t_s") or []
    data = [
        {"t": t, "measure": name, "value": series[key][i]}
        for key, name in SERIES_MEASURES
        if len(series.get(key) or []) == len(times)
        for i, t in enumerate(times)
    ]
    if len(times) < 2 or not data:
        return None
    chart = (
        alt.Chart(inline_data(data))
        .mark_line(point=True)
        .encode(
            x=alt.X("t:Q", title="seconds into the transfer"),
            y=alt.Y("value:Q", title=None),
            tooltip=["measure:N", alt.Tooltip("t:Q", format=".1f"), alt.Tooltip("value:Q", format=".2f")],
        )
        .properties(width=WIDTH, height=90)
        .facet(row=alt.Row("measure:N", title=None, sort=[n for _, n in SERIES_MEASURES]))
        .resolve_scale(y="independent")
        .properties(title=title)
    )
    return Figure(fid, title, vega_spec(chart))


def remedy_figure(fid: str, title: str, gains: Sequence[dict[str, Any]]) -> Figure | None:
    """Each remedy's change against the default copy in %, with its 95 % interval, coloured by verdict."""
    if not gains:
        return None
    source = inline_data(gains)
    y = alt.Y("label:N", sort=[g["label"] for g in gains], title=None, axis=alt.Axis(labelLimit=360))
    colour = alt.Color(
        "verdict:N",
        scale=alt.Scale(
            domain=["faster", "slower", "equivalent", "inconclusive"],
            range=["#2e7d32", "#c62828", "#9e9e9e", "#f9a825"],
        ),
    )
    tooltip = [
        "label:N",
        alt.Tooltip("median:Q", format="+.1f"),
        alt.Tooltip("low:Q", format="+.1f"),
        alt.Tooltip("high:Q", format="+.1f"),
        "verdict:N",
    ]
    base = alt.Chart(source)
    bars = base.mark_bar().encode(
        x=alt.X("median:Q", title="% change against the default copy (95 % interval)"),
        y=y,
        color=colour,
        tooltip=tooltip,
    )
    rules = base.mark_rule(color="#555", strokeWidth=1.5).encode(x="low:Q", x2="high:Q", y=y)
    chart = alt.layer(bars, rules).properties(width=WIDTH, height=bar_height(len(gains)), title=title)
    return Figure(fid, title, vega_spec(chart))
