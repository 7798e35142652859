"""Exporters: a run as JSON (self-describing) or CSV (one row per sample)."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from collections.abc import Sequence
from typing import Any

from sshbench.analysis import dimensions
from sshbench.model import Kind, MemoryRecord
from sshbench.results import build_rows, groups
from sshbench.store import SCHEMA_VERSION, RunRecord, StoredScenario

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


def unit(kind: Kind) -> str:
    """Return the unit of a scenario kind's values."""
    return "s" if kind is Kind.LATENCY else "MB/s"


def run_document(
    run: RunRecord,
    stored: list[StoredScenario],
    memory: Sequence[MemoryRecord] = (),
    analysis: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Return the whole run, raw samples and summaries, as one JSON-ready document."""
    ci_target = float(run.options.get("plan", {}).get("ci_target", 0.05))
    results = {}
    for name, members in groups(stored).items():
        results[name] = [
            {
                "scenario": row.scenario.to_dict(),
                "summary": None if row.summary is None else dataclasses.asdict(row.summary),
                "rank": row.rank,
                "tied": row.tied,
                "failure": row.failure,
                "warning": row.warning,
                "phases_median_s": dict(row.phases),
                "client_cpu_median_s": row.client_cpu,
                "costs": None if row.costs is None else dataclasses.asdict(row.costs),
            }
            for row in build_rows(members, ci_target)
        ]
    return {
        "schema_version": SCHEMA_VERSION,
        "run": {k: v for k, v in dataclasses.asdict(run).items() if k != "discovery"},
        "discovery": run.discovery,
        "results": results,
        "memory": [dataclasses.asdict(m) for m in memory],
        "analysis": analysis,
        "samples": [
            {"scenario": st.scenario.to_dict(), "failure": st.failure, "samples": [_sample_dict(s) for s in st.samples]}
            for st in stored
        ],
    }


def _sample_dict(s: Any) -> dict[str, Any]:
    """Return a sample's fields without the repeated scenario."""
    d = dataclasses.asdict(s)
    d.pop("scenario")
    d["phases"] = dict(s.phases)
    return d


def to_json(
    run: RunRecord,
    stored: list[StoredScenario],
    memory: Sequence[MemoryRecord] = (),
    analysis: dict[str, Any] | None = None,
) -> str:
    """Return the run document as indented JSON."""
    return json.dumps(run_document(run, stored, memory, analysis), indent=2)


def to_csv(run: RunRecord, stored: list[StoredScenario]) -> str:
    """Return every sample of the run as CSV rows."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for st in stored:
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
                    unit(sc.kind),
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
    return buf.getvalue()


SHELL_FILES = {
    "kex.csv": ("kex", None),
    "cipher-send.csv": ("cipher", "up"),
    "cipher-receive.csv": ("cipher", "down"),
    "mac-send.csv": ("mac", "up"),
    "mac-receive.csv": ("mac", "down"),
}


def to_shell_csv(stored: list[StoredScenario], full: bool) -> dict[str, str]:
    """Return the layout of the common shell benchmark scripts: one `algorithm,time` file per test.

    time is seconds: per connection for kex.csv; to move 1 GiB at the median rate (handshake excluded)
    for the cipher and MAC files. send = client -> server (upload), receive = server -> client.
    """
    dims = dimensions(stored, full)
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
