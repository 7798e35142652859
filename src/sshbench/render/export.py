"""Exporters: a stored run as JSON (self-describing), CSV (one row per sample) or the shell-script layout.

Each writer takes a `StoredRun` and returns {file name: text} ("" for a single file); the table of formats
that names them is render/formats.py.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import shlex
import statistics
from collections.abc import Sequence
from typing import Any

from sshbench.analyse import bounds, fleet, policy, sweep
from sshbench.analyse.results import Row, ranked
from sshbench.model import Direction, Kind, Sample, Scenario
from sshbench.records import SCHEMA_VERSION, RunRecord, StoredRun, StoredScenario

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
)


def analysis(stored: StoredRun) -> dict[str, Any] | None:
    """Return a sweep's or a fleet's derived results under the run's policy (computed on read), else None."""
    run = stored.run
    if run.fleet is not None:
        return fleet.to_document(stored, policy.resolve(run.options.policy))
    if not run.kind.sweep:
        return None
    pol = policy.resolve(run.options.policy)
    return sweep.to_document(stored.scenarios, run.discovery, pol, run.options.full_latency)


UNITS = {
    "value": "per result's `unit`: s (connection time) or MB/s (10^6 bytes per second, throughput)",
    "wall": "s",
    "client_cpu": "s",
    "client_system": "s",
    "server_cpu": "s",
    "phases": "s",
    "client_rss": "bytes",
    "server_rss": "bytes",
    "nbytes": "bytes",
    "memory": "bytes",
    "costs": "client_cpu_gib/server_cpu_gib: CPU s per GiB moved; server_cpu: s per sample; *_rss: bytes",
}


def run_document(stored: StoredRun) -> dict[str, Any]:
    """Return the whole run, raw samples and summaries, as one JSON-ready document."""
    run = stored.run
    if run.fleet is not None:  # hosts are not ranked against each other: each host's results on their own
        return _document(stored, _host_results(stored))
    return _document(stored, _results(stored.scenarios, run.options.plan.ci_target, bounds.limits(run.environment)))


def _host_results(stored: StoredRun) -> dict[str, Any]:
    """Return a fleet's results per host, each host's rows ranked among themselves."""
    ci = stored.run.options.plan.ci_target
    return {
        h.name: _results([st for st in stored.scenarios if st.scenario.server == h.name], ci) for h, _ in stored.hosts
    }


def _results(
    scenarios: Sequence[StoredScenario], ci_target: float, limits: bounds.Limits | None = None
) -> dict[str, Any]:
    """Return each result group's ranked rows as JSON-ready dicts (with what bounds each rate, under a link or a
    CPU limit)."""
    results = {}
    for name, rows in ranked(scenarios, ci_target).items():
        results[name] = [
            {
                "scenario": row.scenario.to_dict(),
                "unit": row.scenario.metric.stored_unit,
                "summary": None if row.summary is None else dataclasses.asdict(row.summary),
                "rank": row.rank,
                "tied": row.tied,
                "failure": row.failure,
                "warning": row.warning,
                "phases_median_s": dict(row.phases),
                "client_cpu_median_s": row.client_cpu,
                "costs": None if row.costs is None else dataclasses.asdict(row.costs),
            }
            | ({"bound": _bound(row, limits)} if limits is not None and row.scenario.kind is Kind.THROUGHPUT else {})
            for row in rows
        ]
    return results


def _bound(row: Row, limits: bounds.Limits) -> dict[str, Any] | None:
    """Return what bounds a row's rate (kind, limit MB/s, share of it used), or None."""
    found = bounds.diagnose(row, limits)
    return None if found is None else {"kind": found.kind, "limit_MBps": found.limit, "used": found.used}


def _document(stored: StoredRun, results: dict[str, Any]) -> dict[str, Any]:
    """Return the run document around its results."""
    run = stored.run
    return {
        "schema_version": SCHEMA_VERSION,
        "units": UNITS,
        "run": run.to_dict(),
        "discovery": run.discovery_dict(),
        "results": results,
        "memory": [dataclasses.asdict(m) for m in stored.memory],
        "analysis": analysis(stored),
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
                ]
            )
    return {"": buf.getvalue()}


SHELL_FILES = {
    "kex.csv": ("kex", None),
    "cipher-send.csv": ("cipher", "up"),
    "cipher-receive.csv": ("cipher", "down"),
    "mac-send.csv": ("mac", "up"),
    "mac-receive.csv": ("mac", "down"),
}


def to_shell_csv(stored: StoredRun) -> dict[str, str]:
    """Return the layout of the common shell benchmark scripts: one `algorithm,time` file per test.

    time is seconds: per connection for kex.csv; to move 1 GiB at the median rate (handshake excluded)
    for the cipher and MAC files. send = client -> server (upload), receive = server -> client.
    """
    dims = sweep.dimensions(stored.scenarios, stored.run.options.full_latency)
    files = {}
    for name, (kind, direction) in SHELL_FILES.items():
        rows = [r for r in dims if r.kind == kind and r.direction == direction]
        if not rows:
            continue
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(("algorithm", "time"))
        for r in rows:
            seconds = r.estimate.median if kind == "kex" else 2**30 / (r.estimate.median * 1_000_000)
            writer.writerow((r.algorithm, f"{seconds:.4f}"))
        files[name] = buf.getvalue()
    return files


def to_hyperfine(stored: StoredRun) -> dict[str, str]:
    """Return the run in hyperfine's --export-json schema, so hyperfine's own scripts read it (one file).

    One result per scenario; times are seconds per connection, or per transfer at the measured steady rate
    (payload / rate: the handshake is excluded, as in sshbench's ranking). user/system are the ssh client's
    CPU seconds per sample (system is null for samples stored before schema 3).
    """
    results = []
    for st in stored.scenarios:
        good = [s for s in st.samples if s.measured]
        if not good:
            continue
        times = [_seconds(s) for s in good]
        system = [s.client_system for s in good]
        known = all(v is not None for v in system)
        cpu = [s.client_cpu or 0.0 for s in good]
        results.append(
            {
                "command": _command(stored.run, st.scenario, good[0].nbytes),
                "mean": statistics.fmean(times),
                "stddev": statistics.stdev(times) if len(times) > 1 else None,
                "median": statistics.median(times),
                "user": statistics.fmean(c - (v or 0.0) for c, v in zip(cpu, system, strict=True)),
                "system": statistics.fmean(v or 0.0 for v in system) if known else None,
                "min": min(times),
                "max": max(times),
                "times": times,
                "exit_codes": [0] * len(times),
                "parameters": {k: v for k, v in st.scenario.to_dict().items() if k != "kind"},
            }
        )
    return {"": json.dumps({"results": results}, indent=2)}


def _seconds(s: Sample) -> float:
    """Return a sample as seconds: the connection time, or the payload over the steady rate."""
    assert s.value is not None
    if s.scenario.kind is Kind.LATENCY:
        return s.value
    return (s.nbytes or 0) / (s.value * 1_000_000)


def _command(run: RunRecord, sc: Scenario, nbytes: int | None) -> str:
    """Return the ssh command line a sample stands for."""
    target = "TARGET" if run.target.startswith("local") else run.target
    ssh = shlex.join(["ssh", *sc.ssh_options(), target])
    if sc.kind is Kind.LATENCY:
        return f"{ssh} true"
    if sc.direction is Direction.DOWN:
        return f"{ssh} 'head -c {nbytes} /dev/zero' > /dev/null"
    return f"{ssh} 'wc -c' < payload-{nbytes}"


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
