"""Exporters: a stored run as JSON (self-describing), CSV (one row per sample) or the shell-script layout.

Each writer takes a `StoredRun` and returns {file name: text} ("" for a single file); the table of formats
that names them is render/formats.py.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
import shlex
import statistics
from collections.abc import Sequence
from typing import Any

from sshbench.analyse import fleet, policy, sweep
from sshbench.analyse.claims import bounds
from sshbench.analyse.claims.baselines import efficiency
from sshbench.analyse.claims.collect import run_claims, run_recommendation
from sshbench.analyse.results import Row, ranked
from sshbench.errors import SshbenchError
from sshbench.model import LEGACY_SCP, SOCAT_BLOCK, Direction, Kind, Sample, Scenario
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
            {"cipher": c.cipher, "mac": c.mac, "label": c.label, "predicted": c.predicted,
             "rates": {d: dataclasses.asdict(e) for d, e in c.rates.items()},
             "combined": {"over": sweep.ways_text(c.directions), **dataclasses.asdict(c.combined)}}
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
            {"row": e.row.scenario.metric.labels.name(e.row.scenario), "tool": e.row.scenario.tool,
             "MBps": e.row.summary.median if e.row.summary else None, "of_tcp": e.of_tcp, "of_rsyncd": e.of_rsyncd,
             "of_crypto": e.of_crypto, "failed_baselines": list(e.failed)}
            for e in items
        ]  # fmt: skip
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
    return {"findings": [f.to_dict() for f in found], "paste": pasted, "loses": tune.losses(stored.run, pasted)}


def _host_results(stored: StoredRun) -> dict[str, Any]:
    """Return a fleet's results per host, each host's rows ranked among themselves."""
    run = stored.run
    return {h.name: _results([st for st in stored.scenarios if st.scenario.server == h.name], run)
            for h, _ in stored.hosts}  # fmt: skip


NO_LIMITS = ("no emulated link, CPU limit or emulated CPU in this run, and no kernel evidence of its sockets: nothing "
             "known to diagnose the rate against")


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
        return {"kind": "unknown", "limit": None, "unit": "MB/s", "used": None, "evidence": {"reason": NO_LIMITS},
                "remedy": ""}  # fmt: skip
    found = bounds.diagnose(row, limits, group)
    return None if found is None else found.bound.to_dict()


def _document(stored: StoredRun, results: dict[str, Any]) -> dict[str, Any]:
    """Return the run document around its results."""
    run = stored.run
    return {
        "schema_version": SCHEMA_VERSION,
        "units": FIELD_UNITS,
        "run": run.to_dict(),
        "discovery": run.discovery_dict(),
        "results": results,
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
    for the cipher and MAC files. send = client -> server (upload), receive = server -> client. Each value is a
    row `show` prints: a cipher with the reference MAC, a MAC with the reference cipher (aes128-ctr); MAC files are
    written only when the run measured MACs against one cipher (`--macs each`, a sweep), since a MAC measured with
    one cipher alone is that cipher's speed. A run of several servers (or a fleet's hosts) gets one set of files per
    server, named `SERVER-kex.csv` and so on: a value pooled over servers would be no row `show` prints. A `clients`
    run has none: those scripts time ssh's algorithms, and its rows are clients.
    """
    if not stored.run.kind.row.shell_csv:
        return {}
    servers = sorted({st.scenario.server for st in stored.scenarios}, key=lambda s: s or "")
    if servers == [None]:
        return _shell_files(stored.scenarios, stored.run.options.full_latency)
    files: dict[str, str] = {}
    for server in servers:
        mine = [st for st in stored.scenarios if st.scenario.server == server]
        prefix = re.sub(r"[^A-Za-z0-9._-]+", "_", server or "none")
        own = _shell_files(mine, stored.run.options.full_latency)
        files |= {f"{prefix}-{name}": text for name, text in own.items()}
    return files


def _shell_files(scenarios: Sequence[StoredScenario], full: bool) -> dict[str, str]:
    """Return the shell-script files of one server's scenarios."""
    dims = sweep.dimensions(scenarios, full)
    files = {}
    for name, (kind, direction) in SHELL_FILES.items():
        rows = [r for r in dims if r.kind == kind and r.direction == direction and r.estimate is not None]
        if not rows:
            continue
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(("algorithm", "time"))
        for r in rows:
            assert r.estimate is not None
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
    """Return the command line a sample stands for: the ssh pipe, or the file copy of a `tools` row."""
    target = "TARGET" if run.target.startswith("local") else run.target
    if sc.client not in (None, "openssh"):  # a client of `clients`: its registry row and driver are the command
        what = {Kind.LATENCY: "connect", Kind.TOOL: f"sftp {sc.direction}"}.get(sc.kind, f"exec {sc.direction}")
        return f"{sc.metric.labels.name(sc)}: {what} {nbytes or ''}".strip() + " (sshbench clients)"
    if sc.kind is Kind.TOOL:
        return _copy_command(target, sc, f"file-{nbytes}")
    ssh = shlex.join(["ssh", *sc.ssh_options(), target])
    if sc.kind is Kind.LATENCY:
        return f"{ssh} true"
    if sc.direction is Direction.DOWN:
        return f"{ssh} 'head -c {nbytes} /dev/zero' > /dev/null"
    return f"{ssh} 'wc -c' < payload-{nbytes}"


def _copy_command(target: str, sc: Scenario, file: str) -> str:
    """Return the copy a `tools` sample stands for, as measure/tools.py runs it (paths and ports as placeholders;
    the plaintext baselines run no ssh at all)."""
    down, opts = sc.direction is Direction.DOWN, sc.ssh_options()
    ends = [f"{target}:{file}", "."] if down else [file, f"{target}:"]
    if sc.tool in ("scp", LEGACY_SCP):
        return shlex.join(["scp", *(["-O"] if sc.tool == LEGACY_SCP else []), *opts, *ends])
    if sc.tool == "sftp":
        return f"echo {'get' if down else 'put'} {file} | " + shlex.join(["sftp", "-b", "-", *opts, target])
    if sc.tool == "rsync":
        return shlex.join(["rsync", "--whole-file", "--inplace", "-e", shlex.join(["ssh", *opts]), *ends])
    if sc.tool == "tcp":  # socat to or from a socat listener beside the server
        way = ["TCP:SERVER:PORT", f"CREATE:{file}"] if down else [f"OPEN:{file}", "TCP:SERVER:PORT"]
        return shlex.join(["socat", "-u", "-b", str(SOCAT_BLOCK), *way])
    url = "rsync://SERVER:PORT/sshbench/" + (file if down else "inbox/file")
    return shlex.join(["rsync", "--whole-file", "--inplace", *([url, "."] if down else [file, url])])


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
