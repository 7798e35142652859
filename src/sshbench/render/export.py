"""Exporters: a stored run as JSON (self-describing) or CSV (one row per sample); other tools' layouts are
render/layouts.py.

Each writer takes a `StoredRun` and returns {file name: text} ("" for a single file); the table of formats
that names them is render/formats.py.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from collections.abc import Sequence
from typing import Any

from sshbench.analyse import fleet, policy, sweep
from sshbench.analyse.claims import bounds
from sshbench.analyse.claims.baselines import efficiency
from sshbench.analyse.claims.collect import run_claims, run_recommendation
from sshbench.analyse.kexcost import kex_costs
from sshbench.analyse.logins import login_split
from sshbench.analyse.results import Row, ranked
from sshbench.errors import SshbenchError
from sshbench.model import Kind
from sshbench.records import SCHEMA_VERSION, RunRecord, StoredRun, StoredScenario
from sshbench.runkinds import entry
from sshbench.units import FIELD_UNITS

CSV_COLUMNS = (
    "run",
    "kind",
    "server",
    "profile",
    "kex",
    "hostkey",
    "cipher",
    "mac",
    "direction",
    "round",
    "warmup",
    "ok",
    "value",
    "unit",
    "wall_s",
    "bytes",
    "client_cpu_s",
    "server_cpu_s",
    "client_peak_rss_bytes",
    "server_peak_rss_bytes",
    "phases",
    "error",
    "tool",  # the columns after `error` came later (issue 37): a row's tool, remedy, client and its setting
    "remedy",
    "client",
    "mode",
)


def analysis(stored: StoredRun) -> dict[str, Any] | None:
    """Return the derived results its kind's row names (a sweep's, a `tools` run's or a fleet's, under the run's
    policy: computed on read), else None."""
    row = stored.run.kind.row
    found: dict[str, Any] | None = entry(row.analysis)(stored) if row.analysis else None
    return found


def fleet_document(stored: StoredRun) -> dict[str, Any]:
    """Return a fleet's derived results under its policy: hosts, groups, outliers, the configuration for all."""
    return fleet.to_document(stored, policy.resolve(stored.run.options.policy))


def sweep_document(stored: StoredRun, top: int = 10) -> dict[str, Any]:
    """Return a sweep's derived results: dimensions, the top combinations, the recommendation."""
    run, scenarios = stored.run, stored.scenarios
    combos = sweep.combinations(scenarios)
    ways = sweep.measured_directions(scenarios)
    rec = run_recommendation(run, scenarios, _policy(run))
    return {
        "design": "full cartesian product" if run.options.full_latency else "factorised",
        "directions": list(ways),
        "dimensions": [dataclasses.asdict(r) for r in sweep.dimensions(scenarios, run.options.full_latency)],
        "top": [
            {
                "cipher": c.cipher,
                "mac": c.mac,
                "label": c.label,
                "predicted": c.predicted,
                "rates": {d: dataclasses.asdict(e) for d, e in c.rates.items()},
                "combined": {"over": sweep.ways_text(c.directions), **dataclasses.asdict(c.combined)},
            }
            for c in combos[:top]
        ],
        "not_predicted": sweep.predictions(scenarios)[1],
        "recommendation": rec.to_dict(),
    }


def tools_document(stored: StoredRun) -> dict[str, Any]:
    """Return a `tools` run's efficiency per direction: each copy's shares and the baselines that failed."""
    run = stored.run
    groups = ranked(stored.scenarios, run.options.plan.ci_target, run.options.margin)
    out: dict[str, Any] = {}
    for group, way in (("tool download", "download"), ("tool upload", "upload")):
        items = efficiency(groups.get(group, []), run.environment.crypto_ceilings)
        out[way] = [
            {
                "row": e.row.scenario.metric.labels.name(e.row.scenario),
                "tool": e.row.scenario.tool,
                "MBps": e.row.summary.median if e.row.summary else None,
                "of_tcp": e.of_tcp,
                "of_rsyncd": e.of_rsyncd,
                "of_crypto": e.of_crypto,
                "failed_baselines": list(e.failed),
            }
            for e in items
        ]
    return {"efficiency": out}


def _policy(run: RunRecord) -> policy.Policy:
    """Return the run's policy, or `modern` when its policy file is gone."""
    try:
        return policy.resolve(run.options.policy)
    except SshbenchError:
        return policy.builtin("modern")


def run_document(stored: StoredRun) -> dict[str, Any]:
    """Return the whole run, raw samples and summaries, as one JSON-ready document."""
    run = stored.run
    if run.fleet is not None:  # hosts are not ranked against each other: each host's results on their own
        return _document(stored, _host_results(stored))
    limits = bounds.limits(run.environment, bounds.has_evidence(stored.scenarios))
    doc = _document(stored, _results(stored.scenarios, run, limits))
    if run.kind.row.document:  # a part of its own, under its kind's name
        doc[run.kind.value] = entry(run.kind.row.document)(stored)
    return doc


def tune_document(stored: StoredRun) -> dict[str, Any]:
    """Return a `tune` run's own part: each group's findings and the lines to paste."""
    from sshbench.analyse import tune

    found = tune.findings(stored.run, stored.scenarios)
    pasted = tune.paste(found)
    doc: dict[str, Any] = {"findings": [f.to_dict() for f in found], "paste": pasted}
    doc["loses"] = tune.losses(stored.run, pasted)
    if stored.run.environment.master_conninfo:  # OpenSSH 10.3+: the master's own account
        doc["master_conninfo"] = stored.run.environment.master_conninfo
    return doc


def _host_results(stored: StoredRun) -> dict[str, Any]:
    """Return a fleet's results per host, each host's rows ranked among themselves."""
    run = stored.run
    return {
        h.name: _results([st for st in stored.scenarios if st.scenario.server == h.name], run) for h, _ in stored.hosts
    }


NO_LIMITS = (
    "no emulated link, CPU limit or emulated CPU in this run, and no kernel evidence of its sockets: nothing "
    "known to diagnose the rate against"
)


def _results(
    scenarios: Sequence[StoredScenario], run: RunRecord, limits: bounds.Limits | None = None
) -> dict[str, Any]:
    """Return each result group's ranked rows as JSON-ready dicts, with each row's standing against its group's
    leader and what bounds each rate."""
    results = {}
    for name, rows in ranked(scenarios, run.options.plan.ci_target, run.options.margin).items():
        results[name] = [
            {
                "scenario": row.scenario.to_dict(),
                "unit": row.scenario.metric.stored_unit,
                "summary": None if row.summary is None else dataclasses.asdict(row.summary),
                "rank": row.rank,
                "tied": row.tied,
                "standing": row.standing.value if row.standing else None,
                "against_leader": row.against_leader.to_dict() if row.against_leader else None,
                "failure": row.failure,
                "warning": row.warning,
                "phases_median_s": dict(row.phases),
                "client_cpu_median_s": row.client_cpu,
                "costs": None if row.costs is None else dataclasses.asdict(row.costs),
            }
            | ({"bound": _bound(row, rows, limits)} if row.scenario.kind in (Kind.THROUGHPUT, Kind.TOOL) else {})
            | ({"tcp": row.tcp} if row.tcp else {})
            for row in rows
        ]
    return results


def _bound(row: Row, group: Sequence[Row], limits: bounds.Limits | None) -> dict[str, Any] | None:
    """Return what bounds a row's rate (kind, limit, unit, used, evidence, remedy), or None without a median."""
    if row.summary is None:
        return None
    if limits is None:
        return {
            "kind": "unknown",
            "limit": None,
            "unit": "MB/s",
            "used": None,
            "evidence": {"reason": NO_LIMITS},
            "remedy": "",
        }
    found = bounds.diagnose(row, limits, group)
    return None if found is None else found.bound.to_dict()


def _login_steps(stored: StoredRun) -> dict[str, Any]:
    """Return where the run's logins go after their key exchange (analyse/logins.py), when they say it."""
    split = login_split(stored.scenarios)
    return {} if split is None else {"login_steps": split.to_dict()}


def _document(stored: StoredRun, results: dict[str, Any]) -> dict[str, Any]:
    """Return the run document around its results."""
    run = stored.run
    return {
        "schema_version": SCHEMA_VERSION,
        "units": FIELD_UNITS,
        "run": run.to_dict(),
        "discovery": run.discovery_dict(),
        "results": results,
        "kex_costs": [c.to_dict() for c in kex_costs(stored.scenarios)],
        **_login_steps(stored),
        "memory": [dataclasses.asdict(m) for m in stored.memory],
        "analysis": analysis(stored),
        "claims": [c.to_dict() for c in run_claims(stored, _policy(run))],
        "samples": [
            {"scenario": st.scenario.to_dict(), "failure": st.failure, "samples": [_sample_dict(s) for s in st.samples]}
            for st in stored.scenarios
        ],
    }


def _sample_dict(s: Any) -> dict[str, Any]:
    """Return a sample's fields without the repeated scenario."""
    d = dataclasses.asdict(s)
    d.pop("scenario")
    d["phases"] = dict(s.phases)
    return d


def to_json(stored: StoredRun) -> dict[str, str]:
    """Return the run document as indented JSON (one file)."""
    return {"": json.dumps(run_document(stored), indent=2)}


def to_csv(stored: StoredRun) -> dict[str, str]:
    """Return every sample of the run as CSV rows (one file)."""
    run = stored.run
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for st in stored.scenarios:
        sc = st.scenario
        for s in st.samples:
            writer.writerow(
                [
                    run.id,
                    sc.kind.value,
                    sc.server or "",
                    sc.profile or "",
                    sc.kex or "",
                    sc.hostkey or "",
                    sc.cipher or "",
                    sc.mac or "",
                    sc.direction.value if sc.direction else "",
                    s.round,
                    int(s.warmup),
                    int(s.ok),
                    "" if s.value is None else repr(s.value),
                    sc.metric.stored_unit,
                    repr(s.wall),
                    s.nbytes or "",
                    "" if s.client_cpu is None else repr(s.client_cpu),
                    "" if s.server_cpu is None else repr(s.server_cpu),
                    "" if s.client_rss is None else s.client_rss,
                    "" if s.server_rss is None else s.server_rss,
                    ";".join(f"{k}={v:.6f}" for k, v in s.phases),
                    s.error or "",
                    sc.tool or "",
                    sc.remedy or "",
                    sc.client or "",
                    sc.mode or "",
                ]
            )
    return {"": buf.getvalue()}


def history_document(runs: list[tuple[RunRecord, int]]) -> list[dict[str, Any]]:
    """Return the stored runs as listed by `history --json`."""
    return [
        {
            "id": r.id,
            "started_at": r.started_at,
            "command": r.kind.value,
            "target": r.target,
            "status": r.status.value,
            "samples": n,
        }
        for r, n in runs
    ]
