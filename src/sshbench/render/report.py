"""Reports: one self-contained offline HTML file (jinja2 + inlined Vega bundle), or charts as PNG/SVG files.

The Vega, Vega-Lite and Vega-Embed JavaScript comes from vl-convert's bundler and is inlined, the chart
data is inlined in each spec, and no spec carries a URL: the file opens from disk with no network.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import altair as alt
import jinja2
import vl_convert as vlc
from markupsafe import Markup
from rich.text import Text

from sshbench import __version__
from sshbench.analyse import fleet, policy, sweep, tune
from sshbench.analyse.claims.baselines import efficiency
from sshbench.analyse.claims.caveats import measured_under
from sshbench.analyse.claims.collect import bound_claims, run_recommendation
from sshbench.analyse.claims.fastest import fastest_claims
from sshbench.analyse.compare import Change, compare, environment_differences
from sshbench.analyse.results import build_rows, ranked
from sshbench.model import Direction, Kind
from sshbench.records import RunRecord, StoredRun
from sshbench.render import charts, screen
from sshbench.render.charts import Figure
from sshbench.render.compare import explanation, ratio_cell, side_cell, steps_only
from sshbench.render.console import policy_of
from sshbench.render.fleet import ms, ms_range, server, ssh_config_block, sshd_config_lines
from sshbench.render.header import environment_lines, options_line
from sshbench.render.notes import row_notes
from sshbench.render.snippets import host_for, ssh_config, sshd_config
from sshbench.runkinds import entry


def run_figures(data: StoredRun) -> list[Figure]:
    """Return every chart that has data in this run (ids prefixed with the run id)."""
    run, stored = data.run, data.scenarios
    prefix = f"run{run.id}-"
    if run.kind.row.own_charts_only:
        return list(entry(run.kind.row.figures)(data, prefix))
    ci_target = run.options.plan.ci_target
    lat = [st for st in stored if st.scenario.kind is Kind.LATENCY]
    by_dir = {
        d.value: build_rows([st for st in stored if st.scenario.direction is d], ci_target, run.options.margin)
        for d in Direction
        if any(st.scenario.direction is d for st in stored)
    }
    figures = []
    if lat:
        figures += charts.latency_figures(build_rows(lat, ci_target, run.options.margin), prefix)
    figures += charts.throughput_figures(by_dir, prefix, by_server=run.kind.side_by_side or run.fleet is not None)
    figures += charts.cost_figures(by_dir, prefix)
    figures += charts.memory_figures(data.memory, prefix)
    row = run.kind.row
    figures += entry(row.figures)(data, prefix) if row.figures else []
    figures += _series_figures(data, prefix)
    figures += entry(row.figures_after)(data, prefix) if row.figures_after else []
    return figures


def dimension_figures(data: StoredRun, prefix: str) -> list[Figure]:
    """Return a sweep's per-dimension charts (cipher, MAC, kex, host key)."""
    return charts.dimension_figures(sweep.dimensions(data.scenarios, data.run.options.full_latency), prefix)


def efficiency_figures(data: StoredRun, prefix: str) -> list[Figure]:
    """Return a `tools` run's copies as shares of plain TCP, per direction."""
    run = data.run
    groups = ranked(data.scenarios, run.options.plan.ci_target, run.options.margin)
    shares = {
        way: [(e.row.scenario.metric.labels.name(e.row.scenario), e.of_tcp) for e in items if e.of_tcp]
        for way, group in (("down", "tool download"), ("up", "tool upload"))
        if (items := efficiency(groups.get(group, []), run.environment.crypto_ceilings))
    }
    return charts.efficiency_figures(shares, prefix)


def _series_figures(data: StoredRun, prefix: str) -> list[Figure]:
    """Return, per transfer group, the socket over time of the row its diagnosis is about (a tune run's default,
    else the group's first row): the sender's where read here, else the receiver's, in its median sample."""
    run, out = data.run, []
    groups = ranked(data.scenarios, run.options.plan.ci_target, run.options.margin)
    for name, rows in groups.items():
        if not rows or rows[0].scenario.kind is not Kind.THROUGHPUT:
            continue
        plain = [r for r in rows if r.scenario.remedy is None and r.scenario.cipher is None]
        row = plain[0] if run.kind.row.own_findings and plain else rows[0]
        samples = [s for st in data.scenarios if st.scenario == row.scenario for s in st.samples if s.measured]
        sender = "server" if row.scenario.direction is Direction.DOWN else "client"
        for side, role in ((sender, "sender"), ("client" if sender == "server" else "server", "receiver")):
            seen = sorted(
                (s for s in samples if ((s.tcp or {}).get(side) or {}).get("series")), key=lambda s: s.value or 0.0
            )
            if not seen:
                continue
            mid = seen[len(seen) // 2]
            label = row.scenario.metric.labels.name(row.scenario).strip() or "default algorithms"
            title = (
                f"{name}, {label}: the {role}'s socket ({side}) over its median sample "
                f"({mid.value:.1f} MB/s), as the kernel reported it"
            )
            series = (mid.tcp or {})[side]["series"]
            fig = charts.tcp_series_figure(f"{prefix}tcp-{name.replace(' ', '-')}", title, series)
            out += [fig] if fig else []
            break
    return out


def remedy_figures(data: StoredRun, prefix: str) -> list[Figure]:
    """Return a tune run's remedies per group: each one's change against the default copy with its interval."""
    out = []
    for f in tune.findings(data.run, data.scenarios):
        gains = [
            {
                "label": r.row.scenario.metric.labels.name(r.row.scenario).strip(),
                "verdict": r.verdict.word.value,
                **{
                    k: (getattr(r.verdict.ratio, a) - 1) * 100
                    for k, a in (("median", "value"), ("low", "low"), ("high", "high"))
                },
            }
            for r in f.remedies
            if r.verdict is not None
        ]
        better = "shorter is better" if f.group == "latency" else "higher is better"
        title = f"tune, {f.group}: each remedy against the default copy ({better})"
        fig = charts.remedy_figure(f"{prefix}remedies-{f.group}", title, gains)
        out += [fig] if fig else []
    return out


def _recommendation(data: StoredRun) -> tuple[str, list[dict[str, Any]], list[str]]:
    """Return (policy name, choices with their claims and snippets, caveats) for runs with throughput results."""
    run = data.run
    if run.fleet is not None:
        return _fleet_recommendation(data)
    if not run.kind.recommends or not any(st.scenario.kind is Kind.THROUGHPUT for st in data.scenarios):
        return "", [], []
    pol = policy_of(run)
    rec = run_recommendation(run, data.scenarios, pol)
    conditions, host = measured_under(run.environment), host_for(run)
    items = [
        {
            "title": choice.title,
            "summary": [c.text for c in choice.claims()],
            "ssh_config": ssh_config(choice, host, run.source, conditions),
            "sshd_config": sshd_config(choice, run.source, conditions),
        }
        for choice in (rec.overall, rec.within_policy, rec.handshake)
        if choice is not None
    ]
    return pol.name, items, [c.text for c in rec.caveats]


def _fleet_recommendation(data: StoredRun) -> tuple[str, list[dict[str, Any]], list[str]]:
    """Return a fleet's configuration for all its reached hosts, and its hosts that were not measured or lack it."""
    pol = policy.resolve(data.run.options.policy)
    rows = fleet.host_rows(data, pol)
    choice = fleet.recommend(rows, pol)
    notes = [f"{r.host.name}: not measured: {r.host.failure}" for r in rows if r.host.failure]
    notes += [f"{o.host}: connects {o.ratio:.1f}x slower than the rest of {o.group}" for o in fleet.outliers(rows)]
    if choice is None:
        return pol.name, [], notes
    notes += [
        f"{h}: needs {'; '.join(v)} in its sshd_config for the first choice" for h, v in choice.needs_change.items()
    ]
    notes += [f"{h}: would refuse it (offers none of the listed {', '.join(v)})" for h, v in choice.refuses.items()]
    item = {
        "title": f"One configuration for all {len(choice.hosts)} reached hosts",
        "summary": [f"{k.kind}: {k.pick.name if k.pick else 'none'} ({k.basis})" for k in choice.kinds],
        "ssh_config": ssh_config_block(choice) + "\n",
        "sshd_config": sshd_config_lines(choice) + "\n",
    }
    return pol.name, [item], notes


def _fleet_tables(data: StoredRun) -> list[dict[str, Any]]:
    """Return a fleet's host and group tables for its page (none for other runs), with the terminal's cells."""
    if data.run.fleet is None:
        return []
    rows = fleet.host_rows(data, policy.resolve(data.run.options.policy))
    hosts = [
        [
            r.host.name,
            ", ".join(r.host.groups),
            server(r),
            r.negotiated("kex") or "-",
            r.negotiated("cipher") or "-",
            str(len(r.weak)),
            ms(r.connect.median) if r.connect else "-",
            ms_range(r.connect.ci_low, r.connect.ci_high) if r.connect else "-",
            r.host.failure or ("measured" if r.measured else str(r.status)),
        ]
        for r in rows
    ]
    groups = [
        [g.name, str(g.hosts), str(g.measured), ms(g.connect) if g.connect is not None else "-", str(g.weak_hosts)]
        for g in fleet.group_rows(rows)
    ]
    return [
        {
            "title": "Hosts",
            "header": [
                "host",
                "groups",
                "server",
                "kex (default)",
                "cipher (default)",
                "weak offered",
                "connect ms",
                "95% CI",
                "state",
            ],
            "rows": hosts,
        },
        {
            "title": "Groups",
            "header": ["group", "hosts", "measured", "connect ms (median of hosts)", "hosts offering weak"],
            "rows": groups,
        },
    ]


def _environment(run: RunRecord) -> list[str]:
    """Return the run's environment and options as the terminal's header states them."""
    lines = [*environment_lines(run)[1:], options_line(run)]
    host = run.environment.client_host
    return [f"measured from {host}" if host else "measured from: not recorded", *(line.strip() for line in lines)]


def _notes(data: StoredRun) -> list[dict[str, Any]]:
    """Return what the terminal states under and after the tables: failed rows and unstable results per group,
    what bounds the rates, who is fastest, the baselines (titled sections of plain lines)."""
    run = data.run
    if run.fleet is not None:
        return []
    groups = ranked(data.scenarios, run.options.plan.ci_target, run.options.margin)
    sections = []
    for rows in groups.values() if not run.kind.row.own_charts_only else ():  # its rows are not ranked results
        sc = rows[0].scenario
        lines = [Text.from_markup(line).plain.strip() for line in row_notes(rows, run.id)]
        if lines:
            sections.append({"title": f"Notes: {sc.metric.group(sc).name}", "lines": lines})
    kind = run.kind.row
    fastest = fastest_claims(groups, run.discovery, policy_of(run), run.options.margin) if kind.fastest else []
    for title, claims in (
        ("What bounds these rates", bound_claims(run, data.scenarios)),
        ("Fastest here", fastest),
        (kind.claims_title, entry(kind.claims)(run, groups) if kind.claims else []),
    ):
        if claims:
            sections.append({"title": title, "lines": [c.text for c in claims]})
    return sections


def _comparison(a: StoredRun, b: StoredRun) -> dict[str, Any]:
    """Return the template data comparing two runs."""
    margin = b.run.options.margin
    changes: list[Change] = compare(a.scenarios, b.scenarios, margin)
    rows = [
        {
            "label": c.label,
            "a": side_cell(c, c.a),
            "b": side_cell(c, c.b),
            "change": "" if c.percent is None else f"{c.percent:+.1f}%",
            "interval": ratio_cell(c),
            "verdict": c.verdict,
            "verdict_class": c.verdict if c.verdict in ("faster", "slower") else "",
        }
        for c in changes
    ]
    return {
        "a": a.run.id,
        "b": b.run.id,
        "warnings": environment_differences(a.run.environment, b.run.environment),
        "explanation": " ".join(
            line.strip() for line in explanation([a.run.id], [b.run.id], margin, steps_only(changes))
        ),
        "figures": charts.compare_figure(changes, a.run.id, b.run.id),
        "rows": rows,
    }


@functools.cache
def javascript_bundle() -> str:
    """Return Vega + Vega-Lite + Vega-Embed as one script matching altair's Vega-Lite version."""
    version = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    snippet = "window.vegaEmbed = vegaEmbed; window.vegaLite = vegaLite; window.vega = vega;"
    return vlc.javascript_bundle(snippet, vl_version=version)


def _inline_json(text: str) -> Markup:
    """Make JSON safe inside a <script> element: `<\\/` is the same JSON string and cannot close the element."""
    return Markup(text.replace("</", "<\\/"))


def _inline_js(code: str) -> Markup:
    """Make JavaScript safe inside a <script> element (only the sequences the HTML parser reacts to)."""
    for bad, good in (("</script", "<\\/script"), ("</SCRIPT", "<\\/SCRIPT"), ("<!--", "<\\!--")):
        code = code.replace(bad, good)
    return Markup(code)


def render_html(runs: Sequence[StoredRun]) -> str:
    """Return the whole report as one self-contained HTML document (the complete screen's words, whatever the
    terminal the command runs in)."""
    with screen.briefly(False):
        return _html(runs)


def _html(runs: Sequence[StoredRun]) -> str:
    """Return the report's HTML (render_html)."""
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    template = env.from_string(resources.files("sshbench.render").joinpath("templates/report.html.j2").read_text())
    sections, every = [], []
    for data in runs:
        figures = run_figures(data)
        every += figures
        policy_name, items, caveats = _recommendation(data)
        sections.append(
            {
                "id": data.run.id,
                "command": data.run.kind.value,
                "target": data.run.environment.target or data.run.target,
                "status": data.run.status,
                "started": data.run.started_at[:19].replace("T", " ") + " UTC",
                "figures": figures,
                "recommendation": items,
                "policy": policy_name,
                "caveats": caveats,
                "environment": _environment(data.run),
                "tables": _fleet_tables(data),
                "notes": _notes(data),
            }
        )
    comparison = _comparison(runs[0], runs[1]) if len(runs) == 2 else None
    if comparison:
        every += comparison["figures"]
    across = _across(runs)
    every += across
    return template.render(
        title=", ".join(f"run {d.run.id} ({d.run.kind})" for d in runs),
        generated=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        version=__version__,
        runs=sections,
        comparison=comparison,
        across=across,
        all_figures=[{"id": f.id, "json": _inline_json(json.dumps(f.spec))} for f in every],
        bundle=_inline_js(javascript_bundle()),
    )


def all_figures(runs: Sequence[StoredRun]) -> list[Figure]:
    """Return every chart of the report (for image export)."""
    figures = [f for data in runs for f in run_figures(data)]
    if len(runs) == 2:
        figures += _comparison(runs[0], runs[1])["figures"]
    return figures + _across(runs)


def _across(runs: Sequence[StoredRun]) -> list[Figure]:
    """Return the charts that compare the runs of one kind in the report (a row's `across`: sessions held)."""
    kinds = dict.fromkeys(d.run.kind for d in runs)
    return [f for k in kinds if k.row.across for f in entry(k.row.across)([d for d in runs if d.run.kind is k])]


def write_images(figures: Sequence[Figure], outdir: Path, fmt: str) -> list[Path]:
    """Write each chart as PNG or SVG into outdir; return the paths."""
    outdir.mkdir(parents=True, exist_ok=True)
    paths = []
    version = "_".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    for fig in figures:
        path = outdir / f"{fig.id}.{fmt}"
        if fmt == "png":
            path.write_bytes(vlc.vegalite_to_png(fig.spec, vl_version=version, scale=2))
        else:
            path.write_text(vlc.vegalite_to_svg(fig.spec, vl_version=version))
        paths.append(path)
    return paths
