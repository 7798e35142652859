"""Scheduler -> Recording -> store -> render with a fake sampler: exact tables, exact statistics, and an
interrupted run resumed through the same life cycle, in milliseconds (no ssh, no servers)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from rich.console import Console

from fakes import CHACHA, CTR, DISCOVERY, ENVIRONMENT, GCM, FakeSampler, ListProgress
from sshbench.joboptions import JobOptions, Plan
from sshbench.jobs.recording import Job
from sshbench.model import Direction, Kind, Scenario
from sshbench.render.export import run_document
from sshbench.render.show import print_run
from sshbench.runkinds import RunKind
from sshbench.samples import RunStatus
from sshbench.storage.store import Store

GOLDEN = Path(__file__).parent.parent / "golden"
PLAN = Plan(warmup=1, min_rounds=6, max_rounds=6)
LATENCY = [Scenario(Kind.LATENCY, kex=k, hostkey="ssh-ed25519") for k in ("curve25519-sha256", "ecdh-sha2-nistp256")]
THROUGHPUT = [
    Scenario(Kind.THROUGHPUT, cipher=c, mac=m, direction=d)
    for c, m in ((GCM, None), (CHACHA, None), (CTR, "umac-64-etm@openssh.com"))
    for d in Direction
]
UNSUPPORTED = Scenario(Kind.THROUGHPUT, cipher="3des-cbc", mac="hmac-sha1", direction=Direction.DOWN)
CENTRE = {"curve25519-sha256": 0.130, "ecdh-sha2-nistp256": 0.126, GCM: 1000.0, CHACHA: 600.0, CTR: 500.0}
WIGGLE = (1.0, 0.98, 1.02, 0.99, 1.01, 1.0, 0.97)  # per round: known spread, so CIs and ranks are exact


def value(sc: Scenario, rnd: int) -> float:
    """Return the fake measurement of a scenario in a round (upload 10 % slower than download)."""
    base = CENTRE[sc.kex if sc.kind is Kind.LATENCY else str(sc.cipher)]
    return base * WIGGLE[rnd] * (0.9 if sc.direction is Direction.UP else 1.0)


def measure(store: Store, sampler: FakeSampler, resume: int | None = None) -> int:
    """Run latency then throughput through one Recording, as the jobs do; return the run id."""
    job = Job(store, JobOptions(command=RunKind.RUN, plan=PLAN), ListProgress(), resume)
    rec = job.record("local", ENVIRONMENT)
    store.set_discovery(rec.run_id, DISCOVERY)
    with rec.status():
        rec.register([*LATENCY, *THROUGHPUT], [(UNSUPPORTED, "unsupported: the server offers no 3des-cbc")])
        rec.schedule(LATENCY, sampler, job.progress, "latency")
        rec.schedule(THROUGHPUT, sampler, job.progress, "throughput")
    return rec.run_id


@pytest.mark.parametrize("width", [80, 120, 200])
def test_tables_are_exact_and_fit(tmp_path: Path, width: int) -> None:
    store = Store(tmp_path / "runs.db")
    run_id = measure(store, FakeSampler(value))
    console = Console(file=io.StringIO(), width=width, color_system=None, force_terminal=False)
    print_run(console, store.load(run_id), Path("runs.db"))
    text = console.file.getvalue()  # type: ignore[attr-defined]
    golden = GOLDEN / ("pipeline-run.txt" if width == 200 else f"pipeline-run-{width}.txt")
    if os.environ.get("SSHBENCH_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text()
    doc = run_document(store.load(run_id))
    for rows in doc["results"].values():
        for row in rows:
            if row["summary"]:
                metric = Scenario.from_dict(row["scenario"]).metric
                assert metric.format(row["summary"]["median"]) in text  # every median, at every width
    table_lines = [line for line in text.splitlines() if "─" in line or line[:3].strip().lstrip("=").isdigit()]
    assert all(len(line) <= width for line in table_lines)
    assert "…" not in text
    assert ("hidden at this width" in text) is (width < 200)
    hidden = [line for line in text.splitlines() if "hidden at this width" in line]
    assert width != 120 or all("width: bar (" in line for line in hidden)  # 120 columns: only the bars give way


def test_statistics_are_exact(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    doc = run_document(store.load(measure(store, FakeSampler(value))))
    assert doc["run"]["status"] == "complete"
    gcm = next(r for r in doc["results"]["download"] if r["scenario"]["cipher"] == GCM)
    summary = gcm["summary"]
    assert summary["n"] == 6 and summary["median"] == pytest.approx(995.0)  # rounds 1-6 of WIGGLE
    assert (summary["ci_low"], summary["ci_high"]) == pytest.approx((970.0, 1020.0))  # n=6: min and max
    assert gcm["rank"] == 1 and not gcm["tied"]
    assert gcm["costs"]["client_cpu_gib"] == pytest.approx(0.25 / 0.25)  # 0.25 s per 256 MiB sample
    kex = {r["scenario"]["kex"]: r for r in doc["results"]["latency"]}
    assert kex["ecdh-sha2-nistp256"]["summary"]["median"] < kex["curve25519-sha256"]["summary"]["median"]
    assert all(r["rank"] == 1 and r["tied"] for r in kex.values())  # 3 % apart, CIs overlap: a tie
    failed = next(r for r in doc["results"]["download"] if r["scenario"]["cipher"] == "3des-cbc")
    assert failed["summary"] is None and failed["failure"].startswith("unsupported")


def test_an_interrupted_run_resumes_without_losing_or_repeating_samples(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")

    def interrupt_after(n: int) -> FakeSampler:
        """Return a sampler that raises KeyboardInterrupt (Ctrl-C) when asked for sample n + 1."""

        def take(sc: Scenario, rnd: int) -> float:
            """Measure, or be interrupted."""
            if len(sampler.calls) > n:
                raise KeyboardInterrupt
            return value(sc, rnd)

        sampler = FakeSampler(take)
        return sampler

    with pytest.raises(KeyboardInterrupt):
        measure(store, interrupt_after(20))
    assert store.run(1).status is RunStatus.INTERRUPTED
    kept = [(s.scenario.key, s.round) for st in store.scenarios(1) for s in st.samples]
    assert len(kept) == 20
    measure(store, FakeSampler(value), resume=1)
    after = store.load(1)
    assert after.run.status is RunStatus.COMPLETE
    rounds = [(s.scenario.key, s.round) for st in after.scenarios for s in st.samples]
    assert set(kept) <= set(rounds) and len(rounds) == len(set(rounds))  # nothing lost, nothing taken twice
    assert all(len(st.values()) == 6 for st in after.scenarios if st.scenario != UNSUPPORTED)
