"""What varies inside a command is a row: a load mode and a `tune` remedy, each given here as one test-local row (and
the functions its row names), run end to end on the fake bench. A kind's name is an enum member, so each row here
takes the place of an existing kind's (monkeypatched for the test); nothing else in sshbench is told about it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from fakes import ListProgress, fake_stage
from sshbench import jobs
from sshbench.joboptions import JobOptions, LoadOptions, Plan
from sshbench.jobs.loadrun import staged
from sshbench.jobs.recording import Job
from sshbench.loadsteps import StepKey
from sshbench.model import Direction, Kind, Scenario
from sshbench.records import StoredRun
from sshbench.remedy import ROWS as REMEDY_ROWS
from sshbench.remedy import Remedy, RemedyKind, RemedyRow
from sshbench.render.charts import Figure
from sshbench.render.export import run_document
from sshbench.render.report import render_html
from sshbench.render.show import print_run
from sshbench.runkinds import ROWS, KindRow, RunKind
from sshbench.samples import RunStatus
from sshbench.storage.store import Store

INTERRUPT: list[bool] = []  # the pulses job stops after its first step when this holds True


def pulses(job: Job) -> int:
    """A test-local load mode: one login per step, at each rate's key, taken through the shared load staging."""
    own = job.opts.own_as(LoadOptions)
    with staged(job) as (bench, _):
        where = bench.only
        steps = [Scenario(Kind.LATENCY, load=StepKey.rate(r)) for r in own.rates]
        rec = job.record(job.opts.target, bench.environment(where, None))
        with rec.status():
            rec.register(steps)
            take = bench.latency(where)
            for i, sc in enumerate(steps):
                if not rec.samples(sc):
                    rec.sample(take(sc, 1, False))
                if INTERRUPT and i == 0:
                    raise KeyboardInterrupt
        return rec.run_id


def print_pulses(console: Console, stored: StoredRun, db: Path, discovery_only: bool = False) -> None:
    """Print each pulse's step and its login."""
    for st in stored.scenarios:
        console.print(f"pulse {st.scenario.load}: {len(st.samples)} login", highlight=False)


def pulses_document(stored: StoredRun) -> dict[str, Any]:
    """Return the pulses' part of the JSON document."""
    return {"steps": [str(st.scenario.load) for st in stored.scenarios]}


def pulses_figures(stored: StoredRun, prefix: str) -> list[Figure]:
    """Return one chart of the pulses' steps."""
    spec = {"mark": "point", "data": {"values": [{"step": str(st.scenario.load)} for st in stored.scenarios]}}
    return [Figure(f"{prefix}pulses", "Pulses", spec)]


PULSES = KindRow(
    job=f"{__name__}:pulses",
    printer=f"{__name__}:print_pulses",
    document=f"{__name__}:pulses_document",
    figures=f"{__name__}:pulses_figures",
    own_charts_only=True,
    options="sshbench.joboptions:LoadOptions",
    resumed_by=RunKind.LOAD,
    recommends=False,
    fastest=False,
    bounds="What bounds a pulse is not judged.",
    shell_csv=False,
    counts_failures=True,
)


def test_a_load_mode_is_one_row_and_its_functions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(ROWS, RunKind.SESSIONS, PULSES)
    opts = JobOptions(
        RunKind.SESSIONS, plan=Plan(warmup=0, min_rounds=1, max_rounds=1), own=LoadOptions(rates=(5.0, 10.0))
    )
    store = Store(tmp_path / "runs.db")
    monkeypatch.setattr(f"{__name__}.INTERRUPT", [True])  # the first run stops after its first step
    with pytest.raises(KeyboardInterrupt):
        jobs.run(jobs.Job(store, opts, ListProgress(), stage=fake_stage()))  # type: ignore[arg-type]
    monkeypatch.setattr(f"{__name__}.INTERRUPT", [])
    ((record, _),) = store.runs(10)
    first = record.id
    assert store.run(first).status is RunStatus.INTERRUPTED
    assert store.run(first).kind.resume_command == "load"  # `load --resume` finishes it
    resumed = store.run(first).options
    job = jobs.Job(store, resumed, ListProgress(), resume=first, stage=fake_stage())  # type: ignore[arg-type]
    assert jobs.run(job) == first and store.run(first).status is RunStatus.COMPLETE
    stored = store.load(first)
    assert [len(st.samples) for st in stored.scenarios] == [1, 1]  # the first step kept, the second taken
    console = Console(record=True, width=100)
    print_run(console, stored, tmp_path / "runs.db")
    assert console.export_text().splitlines() == ["pulse 5/s: 1 login", "pulse 10/s: 1 login"]
    doc = run_document(stored)
    assert doc["sessions"] == {"steps": ["5/s", "10/s"]} and doc["run"]["command"] == "sessions"
    assert f"run{first}-pulses" in render_html([stored])


PACED = RemedyRow(  # a test-local remedy: the path's bound answered by an ssh option, pasted as a line
    label=" with IPQoS=throughput",
    ssh_options=(("IPQoS", "throughput"),),
    answers=("network", "ssh-window", "tcp-window", "unknown"),
    directions=("down",),
    paste=("IPQoS throughput",),
)


def test_a_remedy_is_one_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(REMEDY_ROWS, RemedyKind.COMPRESSION, PACED)  # the test's remedy in the place of one kind
    streams = REMEDY_ROWS[RemedyKind.STREAMS]
    monkeypatch.setitem(REMEDY_ROWS, RemedyKind.STREAMS, RemedyRow(streams.label, sized=True))  # tried: none
    paced = Remedy(RemedyKind.COMPRESSION)
    assert Remedy.parse(paced.text) == paced and paced.label == " with IPQoS=throughput"
    assert Scenario(Kind.THROUGHPUT, direction=Direction.DOWN, remedy=paced).ssh_options() == ["-o", "IPQoS=throughput"]
    opts = JobOptions(RunKind.TUNE, target="local:openssh", directions=(Direction.DOWN,), plan=Plan(warmup=1))
    store = Store(tmp_path / "runs.db")
    run_id = jobs.run(jobs.Job(store, opts, ListProgress(), stage=fake_stage()))  # type: ignore[arg-type]
    stored = store.load(run_id)
    copies = {st.scenario.remedy for st in stored.scenarios if st.scenario.kind is Kind.THROUGHPUT}
    assert paced in copies and not any(r is not None and r.kind is RemedyKind.STREAMS and r.n > 1 for r in copies)
    (found,) = [f for f in json.loads(json.dumps(run_document(stored)))["tune"]["findings"] if f["group"] != "latency"]
    (row,) = [r for r in found["remedies"] if r["scenario"].get("remedy") == "compression"]
    assert row["config"] == ["IPQoS throughput"] and len(stored.scenarios[0].samples) >= 1
