"""`compare` from stored runs: golden table, exit codes of --fail-if, JSON (the real CLI)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import jsonschema
import pytest
from referencing import Registry, Resource

from conftest import sshbench
from fakes import CHACHA, ENVIRONMENT, GCM, runs_db
from sshbench.errors import ExitCode
from sshbench.joboptions import JobOptions
from sshbench.model import Direction, Kind, Scenario
from sshbench.runkinds import RunKind
from sshbench.samples import RunStatus, Sample
from sshbench.storage.store import Store

GOLDEN = Path(__file__).parent.parent / "golden"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """The hand-made runs of fakes.runs_db."""
    return runs_db(tmp_path / "runs.db")


def test_compare_golden_output(cli_env: dict[str, str], db: Path) -> None:
    done = sshbench({**cli_env, "COLUMNS": "120"}, "compare", "1", "2", "--db", str(db))
    assert done.returncode == 0, done.stderr
    golden = GOLDEN / "compare.txt"
    if os.environ.get("SSHBENCH_UPDATE_GOLDEN"):
        golden.write_text(done.stdout)
    assert done.stdout == golden.read_text()


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (["--fail-if", "slower:5%"], ExitCode.REGRESSION, "slower than run 1 by more than 5% even at their"),
        (["--fail-if", "slower:25%"], ExitCode.OK, ""),
        (["--fail-if", "faster:5%"], ExitCode.USAGE, "slower:PERCENT"),
        (["--fail-if", "slower:lots"], ExitCode.USAGE, "percentage"),
    ],
)
def test_compare_exit_codes(cli_env: dict[str, str], db: Path, args: list[str], code: int, words: str) -> None:
    done = sshbench(cli_env, "compare", "1", "2", "--db", str(db), *args)
    assert done.returncode == code, done.stderr
    assert words in done.stderr
    if code == ExitCode.REGRESSION:
        assert "FAIL" in done.stdout and f"{GCM} down at least" in done.stdout


def test_compare_json(cli_env: dict[str, str], db: Path) -> None:
    done = sshbench(cli_env, "compare", "1", "2", "--db", str(db), "--json")
    doc = json.loads(done.stdout)
    verdicts = {c["label"]: c["verdict"] for c in doc["changes"]}
    assert verdicts[f"{GCM} down"] == "slower" and verdicts[f"{CHACHA} up"] == "equivalent"
    gcm = next(c for c in doc["changes"] if c["label"] == f"{GCM} down")
    assert gcm["ratio"]["high"] < 1 and gcm["ratio"]["method"].startswith("unpaired")
    assert doc["margin"] == 0.05 and "drift between runs" in doc["note"]
    assert any("emulation differs" in w for w in doc["environment_differences"])


def _run_with(store: Store, values: dict[Scenario, list[float]]) -> int:
    """Store a complete run whose scenarios hold exactly these measured values (one round each, in order)."""
    run_id = store.create_run(JobOptions(command=RunKind.RUN), "local", ENVIRONMENT)
    ids = store.add_scenarios(run_id, list(values))
    for sc, vals in values.items():
        for i, v in enumerate(vals, 1):
            store.add_sample(ids[sc.key], Sample(sc, i, False, True, v, 1.0, nbytes=2**28))
    store.set_status(run_id, RunStatus.COMPLETE)
    return run_id


UP = Scenario(Kind.THROUGHPUT, cipher=GCM, direction=Direction.UP)


def test_item_6_overlapping_wide_intervals_are_never_no_change(cli_env: dict[str, str], tmp_path: Path) -> None:
    """Issue 21, item 6: `compare` said "no change" for aes128-gcm up 1663 -> 370 MB/s because the CIs overlapped."""
    db = tmp_path / "wide.db"
    store = Store(db)
    _run_with(store, {UP: [400.0, 1663.0, 1700.0, 1600.0, 1800.0, 350.0, 1650.0, 1690.0]})
    _run_with(store, {UP: [370.0, 360.0, 1500.0, 380.0, 365.0, 390.0, 1400.0, 372.0]})
    store.close()
    done = sshbench(cli_env, "compare", "1", "2", "--db", str(db), "--json")
    change = json.loads(done.stdout)["changes"][0]
    assert change["percent"] < -70
    assert change["verdict"] in ("slower", "inconclusive") and change["verdict"] != "equivalent"
    text = sshbench(cli_env, "compare", "1", "2", "--db", str(db)).stdout
    assert "no change" not in text


def test_fail_if_is_inconclusive_when_the_interval_straddles_the_limit(cli_env: dict[str, str], tmp_path: Path) -> None:
    """`--fail-if slower:5%` fails only when the ratio's upper end is below 0.95; when the interval straddles it, the
    outcome is INCONCLUSIVE: exit 0 with a warning."""
    db = tmp_path / "straddle.db"
    store = Store(db)
    _run_with(store, {UP: [1000.0, 1010.0, 990.0, 1005.0, 995.0, 1000.0]})
    _run_with(store, {UP: [900.0, 1000.0, 950.0, 1020.0, 880.0, 960.0]})
    store.close()
    done = sshbench(cli_env, "compare", "1", "2", "--db", str(db), "--fail-if", "slower:5%")
    assert done.returncode == ExitCode.OK, done.stderr
    assert "INCONCLUSIVE" in done.stdout and "warning" in done.stderr and "inconclusive, not failed" in done.stderr


def test_several_runs_per_side_are_pooled_and_their_spread_shown(cli_env: dict[str, str], tmp_path: Path) -> None:
    db = tmp_path / "sides.db"
    store = Store(db)
    for centre in (1000.0, 1080.0, 700.0, 760.0):
        _run_with(store, {UP: [centre * f for f in (1.0, 0.99, 1.01, 1.0, 0.995, 1.005)]})
    store.close()
    done = sshbench(cli_env, "compare", "1,2", "3,4", "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert "runs 1+2" in done.stdout and "runs 3+4" in done.stdout and "slower" in done.stdout
    assert "side A: its runs' medians of one scenario differ by up to 8.0%" in done.stdout


def test_compare_json_follows_its_schema(cli_env: dict[str, str], db: Path) -> None:
    """`compare --json` validates against docs/schema/compare-document.schema.json (which uses the run document's
    ratio)."""
    schemas = Path(__file__).parent.parent.parent / "docs" / "schema"
    run_schema = json.loads((schemas / "run-document.schema.json").read_text())
    compare_schema = json.loads((schemas / "compare-document.schema.json").read_text())
    registry = Registry().with_resource(run_schema["$id"], Resource.from_contents(run_schema))
    validator = jsonschema.Draft202012Validator(compare_schema, registry=registry)
    for args in (["1", "2"], ["1,2", "2", "--fail-if", "slower:5%"]):
        doc = json.loads(sshbench(cli_env, "compare", *args, "--db", str(db), "--json").stdout)
        assert [e.message for e in validator.iter_errors(doc)] == []


def test_a_default_row_meets_the_same_measurement_stored_under_its_negotiated_names(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Issue 34, item 6: a tune run's "default kex / default host key" against a sweep's named rows matched nothing."""
    from fakes import fake_discovery

    db = tmp_path / "names.db"
    store = Store(db)
    default = Scenario(Kind.LATENCY)  # the client's own algorithms, as tune stores its fresh login
    tuned = _run_with(store, {default: [0.160, 0.161, 0.159, 0.160, 0.162, 0.158]})
    named = Scenario(Kind.LATENCY, kex="curve25519-sha256", hostkey="ssh-ed25519")  # what fake_discovery negotiates
    swept = _run_with(store, {named: [0.150, 0.151, 0.149, 0.150, 0.152, 0.148]})
    for run_id in (tuned, swept):
        store.set_discovery(run_id, fake_discovery())
    store.close()
    done = sshbench(cli_env, "compare", str(tuned), str(swept), "--db", str(db), "--fail-if", "slower:5%")
    assert done.returncode == ExitCode.OK, done.stderr
    assert "1 scenario matched in both" in done.stdout
    assert "curve25519-sha256" in done.stdout and "on one side only" not in done.stdout


def test_fail_if_over_runs_with_nothing_in_common_fails_with_its_own_code(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    db = tmp_path / "apart.db"
    store = Store(db)
    _run_with(store, {UP: [1000.0, 1010.0, 990.0]})
    _run_with(store, {Scenario(Kind.LATENCY, kex="curve25519-sha256"): [0.15, 0.16, 0.15]})
    store.close()
    done = sshbench(cli_env, "compare", "1", "2", "--db", str(db), "--fail-if", "slower:5%")
    assert done.returncode == ExitCode.NOTHING_COMPARED == 11, done.stderr
    assert "checked nothing" in done.stderr and "no scenario in common" in done.stderr
    assert "0 scenarios matched in both" in done.stdout


def test_compare_of_two_load_runs_names_each_step_by_its_rate_and_percentile(tmp_path: Path) -> None:
    """Issue 54, item 8: every row of a load run read `default kex / default host key`; a step is now two rows, its
    p50 and its p99, and a p99 from 40 logins gets no verdict but the logins it needs."""
    from fakes import _add_load_run
    from sshbench.analyse.compare import compare
    from sshbench.storage.store import Store

    store = Store(tmp_path / "runs.db")
    _add_load_run(store)
    _add_load_run(store)
    changes = compare(store.scenarios(1), store.scenarios(2))
    assert [c.label for c in changes] == ["10/s: p50", "10/s: p99", "20/s: p50", "20/s: p99"]
    assert [c.verdict for c in changes] == ["equivalent", "too few samples", "equivalent", "too few samples"]
    assert [c.needs for c in changes] == [None, 435, None, 435]
    assert changes[3].a is not None and changes[3].a.median == pytest.approx(0.48)  # the p99 of 38 logins


def _load_run(store: Store, rate: float, latencies: list[float]) -> int:
    """Store a complete load run of one step whose logins took `latencies` seconds (all successful)."""
    from sshbench.joboptions import LoadOptions
    from sshbench.loadsteps import StepKey

    opts = JobOptions(command=RunKind.LOAD, measure_throughput=False, own=LoadOptions(rates=(rate,)))
    run = store.create_run(opts, "local:openssh", ENVIRONMENT)
    sc = Scenario(Kind.LATENCY, load=StepKey.rate(rate))
    sid = store.add_scenarios(run, [sc])[sc.key]
    for i, v in enumerate(latencies):
        phases = (("intended", i / rate), ("late", 0.001))
        store.add_sample(sid, Sample(sc, i + 1, False, True, v, wall=v, client_cpu=0.002, phases=phases))
    store.set_status(run, RunStatus.COMPLETE)
    return run


def _tail(n: int, slow: float) -> list[float]:
    """Return n login times: 80-90 ms, the slowest 3 % at `slow` seconds (a p99 there)."""
    return [slow if i % 33 == 0 else 0.080 + (i % 10) / 1000 for i in range(n)]


def _gate(cli_env: dict[str, str], tmp_path: Path, rate: float, n: int) -> subprocess.CompletedProcess[str]:
    """Store two load runs of one step of n logins, B's slowest 3 % twice A's, and gate B on A at 10 %."""
    db = tmp_path / "runs.db"
    store = Store(db)
    _load_run(store, rate, _tail(n, 0.200))
    _load_run(store, rate, _tail(n, 0.400))
    store.close()
    return sshbench({**cli_env, "COLUMNS": "120"}, "compare", "1", "2", "--db", str(db), "--fail-if", "slower:10%")


def test_fail_if_gates_a_p99_at_a_rate(cli_env: dict[str, str], tmp_path: Path) -> None:
    """Issue 54, item 8: the CI capacity gate: B's p99 at 20/s doubled (p50 unchanged) fails `--fail-if slower:10%`
    with exit 10, naming the step's p99; the same runs in the other order pass."""
    done = _gate(cli_env, tmp_path, 20.0, 600)
    assert done.returncode == ExitCode.REGRESSION, done.stderr
    assert "FAIL: slower by more than 10%: 20/s: p99 at least" in done.stdout
    assert "the change of each step's p50 and p99" in done.stdout and "order statistics" in done.stdout
    rows = {line.split()[1]: line for line in done.stdout.splitlines() if line.startswith("20/s:")}
    assert "equivalent" in rows["p50"] and "slower" in rows["p99"]
    back = sshbench(cli_env, "compare", "2", "1", "--db", str(tmp_path / "runs.db"), "--fail-if", "slower:10%")
    assert back.returncode == ExitCode.OK and "PASS" in back.stdout, back.stderr


def test_fail_if_says_which_rows_it_could_not_check_and_that_none_is_not_a_pass(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Issue 54, item 8: 300 logins a step bound no p99 (435 needed): with the p50 judged and the p99 not, the gate
    passes on the p50 and warns that the p99 was not checked; with 5 logins neither is judged, and a gate that
    checked nothing exits 11, not 0."""
    done = _gate(cli_env, tmp_path, 10.0, 300)
    assert done.returncode == ExitCode.OK, done.stderr
    assert "not checked: 10/s: p99" in done.stderr
    assert "no verdict on the p99 of 1 step(s): its interval needs 435 logins a side, these had 300" in done.stdout
    assert "(a longer --step-time gives more)" in done.stdout
    assert "PASS: nothing is slower by more than 10% (1 not checked: too few samples)" in done.stdout
    few = _gate(cli_env, tmp_path / "few", 10.0, 5)
    assert few.returncode == ExitCode.NOTHING_COMPARED, few.stderr
    assert "checked nothing: runs 1 and 2 have 2 scenario(s) in common, each with too few samples" in few.stderr
