"""Issue 21, item 9: the budget is the budget. `--max-time` covers the set-up (link check, ceilings) and the
warm-ups, the plan line says so, `0` is refused with the accepted forms, and `sshbench [run options]` is the
documented default job."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from conftest import sshbench
from fakes import ENVIRONMENT, ListProgress
from sshbench.cli.options import parse_budget
from sshbench.errors import SshbenchError
from sshbench.joboptions import JobOptions, Plan
from sshbench.jobs.recording import Job
from sshbench.measure.budget import Estimate, check
from sshbench.runkinds import RunKind
from sshbench.storage.store import Store


def test_zero_is_refused_not_read_as_no_limit() -> None:
    """`--max-time 0` silently meant "no limit"."""
    with pytest.raises(SshbenchError) as caught:
        parse_budget("0")
    assert "`none`" in caught.value.fix
    assert parse_budget("none") is None and parse_budget("90s") == 90


def test_the_plan_counts_the_set_up_inside_the_budget() -> None:
    """Link checks and `openssl speed` ceilings (~20 s) ran outside a 60 s budget: runs took 66-97 s."""
    est = Estimate(connections=2, transfers=4, warmup=5.0, per_round=8.0, budget=60.0, setup=22.0)
    assert est.rounds == 4  # (60 - 22 - 5) / 8
    assert "set-up ~22 s" in est.describe() and "~4 rounds fit the 60 s budget" in est.describe()
    tight = Estimate(connections=2, transfers=4, warmup=5.0, per_round=8.0, budget=40.0, setup=22.0)
    with pytest.raises(SshbenchError) as caught:
        check(tight)
    assert "~22 s of set-up" in caught.value.cause and "at least 51s" in caught.value.fix
    assert "~22 s of set-up (discovery, probes) and" in caught.value.cause  # what the set-up was, as the plan says


def test_a_refusal_after_building_drivers_asks_for_what_the_next_run_needs() -> None:
    """`clients --max-time 150s` on a new machine built the Rust and Go drivers (5 min 13 s), then asked for 673 s
    though the next run, with the drivers kept, needs about 360 s."""
    est = Estimate(connections=15, transfers=59, warmup=70.0, per_round=97.0, budget=150.0, setup=313.0, kept=300.0)
    with pytest.raises(SshbenchError) as caught:
        check(est)
    assert "at least 374s (the 5 min 00 s it took to build drivers is not spent again" in caught.value.fix


def test_the_budget_counts_from_the_start_of_the_job(tmp_path: Path) -> None:
    """What a job did before its first sample (link, discovery, probes, ceilings) is spent from the same budget."""
    store = Store(tmp_path / "runs.db")
    opts = JobOptions(command=RunKind.RUN, plan=Plan(max_time=60.0))
    job = Job(store, opts, ListProgress(), started=time.monotonic() - 25.0)  # 25 s of set-up already spent
    rec = job.record("local", ENVIRONMENT)
    rec.register([])
    left = rec.remaining().max_time
    assert left is not None and 34.0 < left <= 35.0


def test_run_options_without_a_command_run_the_main_job(cli_env: dict[str, str], tmp_path: Path) -> None:
    """`sshbench --max-time 90s` (the documented default job) was refused with "No such option"."""
    done = sshbench(cli_env, "--max-time", "0", "--db", str(tmp_path / "x.db"))
    assert done.returncode == 2
    assert "No such option" not in done.stderr and "bad --max-time '0'" in done.stderr
    helped = sshbench(cli_env, "--max-time", "90s", "--help")
    assert helped.returncode == 0 and "Usage: sshbench run" in helped.stdout
    assert "--max-time 90s" in sshbench(cli_env, "--help").stdout


def test_a_probe_whose_login_outlasted_its_copy_takes_the_copy_at_its_steady_rate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a busy machine the probe's login (0.9 s) outlasted another login and the copy together (0.5 s): the probe
    was None, no plan was checked, and `--max-time 1s` ended in "nothing could be measured" instead of its refusal
    (the suite, twice in a day)."""
    from sshbench.measure import budget
    from sshbench.model import Kind, Scenario
    from sshbench.samples import Sample
    from sshbench.ssh.destination import Target

    monkeypatch.setattr(budget, "latency_sample", lambda *a: Sample(Scenario(Kind.LATENCY), 0, True, True, None, 0.9))
    monkeypatch.setattr(
        budget, "throughput_sample", lambda *a: Sample(Scenario(Kind.THROUGHPUT), 0, True, True, 200.0, 0.5)
    )
    opts = JobOptions(command=RunKind.THROUGHPUT, plan=Plan(max_time=1.0))
    target = Target("local", "127.0.0.1", (), "127.0.0.1", 22, True)  # not reached: the samplers are replaced
    found = budget.probe("ssh", target, opts, Path("/nonexistent"))
    assert found is not None and found.connection == 0.9 and found.steady == 200.0
    assert found.rate == pytest.approx(200.0)  # the copy at its steady rate, not a difference of two noisy walls
