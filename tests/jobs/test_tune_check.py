"""Issue 55: a gain `tune` predicts for 10 MB copies is checked by 10 MB copies measured in the same run (pure, and
the job on the fake bench)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from rich.console import Console

import fakes
from fakes import ListProgress, fake_stage, stored_copies, stored_values
from sshbench import jobs
from sshbench.analyse import sizes, tune
from sshbench.environment import Environment
from sshbench.joboptions import JobOptions, Plan
from sshbench.measure.remedies import MB, Sizing, combine, moving
from sshbench.model import Direction, Kind, Scenario
from sshbench.ratios import DECIDING_PAIRS
from sshbench.records import RunRecord
from sshbench.remedy import ONE_CONNECTION, Remedy, RemedyKind
from sshbench.render.tune import print_tune
from sshbench.runkinds import RunKind
from sshbench.samples import FIXED, RunStatus, Sample
from sshbench.storage.store import Store

COPY = Scenario(Kind.THROUGHPUT, direction=Direction.DOWN, remedy=ONE_CONNECTION)
FOUR = dataclasses.replace(COPY, remedy=Remedy.streams(4))
TWO = dataclasses.replace(COPY, remedy=Remedy.streams(2))
BIG = 128 * 2**20


def _run() -> RunRecord:
    """Return a tune run's record."""
    opts = JobOptions(command=RunKind.TUNE, target="backup")
    return RunRecord(
        1, "2026-11-29T00:00:00", "2026-11-29T00:00:00", RunStatus.COMPLETE, RunKind.TUNE, "backup", opts, Environment()
    )


def _measured(four_fixed_at_10mb: float) -> tuple[tune.Remedy, str]:
    """Return the 4-connection remedy (20 -> 60 MB/s steady, 3 s -> 4 s fixed on 128 MiB copies) and what is printed,
    when its 10 MB check copies took `four_fixed_at_10mb` s besides their bytes."""
    stored = [
        stored_values(dataclasses.replace(COPY, remedy=None), [24.0] * 6),
        stored_copies(COPY, 20, 3),
        stored_copies(FOUR, 60, 4),
        stored_copies(sizes.checked(COPY), 20, 3, sizes.CHECK_SIZE),
        stored_copies(sizes.checked(FOUR), 60, four_fixed_at_10mb, sizes.CHECK_SIZE),
    ]
    (down,) = tune.findings(_run(), stored)
    printed = Console(record=True, width=250)
    print_tune(printed, _run(), stored)
    return down.remedies[0], printed.export_text()


def test_a_check_copy_is_its_own_row_stored_by_its_size_and_in_a_group_of_its_own() -> None:
    checked = sizes.checked(FOUR)
    assert checked.remedy is not None and checked.remedy.text == "streams=4@10000000"
    assert Remedy.parse(checked.remedy.text) == checked.remedy and Remedy.parse("streams=4") == Remedy.streams(4)
    assert checked.key != FOUR.key and checked.metric.group(checked).name == "download check"
    assert checked.remedy.label == " x 4 connections at once, 10 MB copies"
    for bad in ("streams=4@", "streams=4@0", "streams=4@ten", "bogus@10"):
        with pytest.raises(ValueError, match="not a remedy"):
            Remedy.parse(bad)


def test_the_best_remedy_each_way_is_checked_only_where_the_copies_are_four_times_the_check_size() -> None:
    stored = [stored_copies(COPY, 20, 3), stored_copies(TWO, 38, 3.5), stored_copies(FOUR, 60, 4)]
    assert sizes.to_check(stored, {Direction.DOWN: BIG}) == [sizes.checked(COPY), sizes.checked(FOUR)]
    assert sizes.to_check(stored, {Direction.DOWN: 3 * sizes.CHECK_SIZE}) == []
    assert sizes.to_check(stored, {Direction.UP: BIG}) == []  # nothing measured that way


def test_a_prediction_inside_the_check_copies_interval_holds_and_one_outside_is_a_failed_check() -> None:
    """4 connections: -16 % predicted for 10 MB (a second more of fixed cost eats the faster rate)."""
    remedy, said = _measured(4.0)  # the check copies behave as the model says
    assert remedy.check is not None and remedy.check.holds is True
    assert "10 MB copies measured in this run: -" in said and "the prediction holds" in said
    remedy, said = _measured(1.0)  # a 10 MB copy over 4 connections starts faster than its large copies said
    assert remedy.check is not None and remedy.check.holds is False
    assert remedy.check.measured is not None and remedy.check.measured.ratio.low > 1
    assert "a failed check (outside the measured interval)" in said


def test_copies_large_enough_for_a_check_that_got_none_say_so() -> None:
    stored = [
        stored_values(dataclasses.replace(COPY, remedy=None), [24.0] * 6),
        stored_copies(COPY, 20, 3),
        stored_copies(FOUR, 60, 4),
    ]
    printed = Console(record=True, width=250)
    print_tune(printed, _run(), stored)
    assert "the gains predicted per copy size were not checked: no 10 MB copies" in printed.export_text()


def _sixty_four(self: fakes.FakeCopies, sizing: Sizing) -> None:
    """Give each direction copies of 64 MiB: large enough for a check."""
    self.copy_sizes.update(dict.fromkeys(sizing.rates, 64 * 2**20))


def _tune(tmp_path: Path, max_time: float | None) -> tuple[Store, int]:
    """Run tune (download only) on the fake bench; return the store and the run."""
    store = Store(tmp_path / "runs.db")
    plan = Plan(warmup=1, min_rounds=3, max_rounds=10, ci_target=0.05, max_time=max_time, racing=True)
    opts = JobOptions(command=RunKind.TUNE, target="local:openssh", plan=plan, directions=(Direction.DOWN,))
    return store, jobs.run(jobs.Job(store, opts, ListProgress(), stage=fake_stage()))  # type: ignore[arg-type]


def test_the_job_copies_the_default_and_the_best_remedy_at_10_mb_six_paired_rounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fakes.FakeCopies, "size_copies", _sixty_four)
    store, run_id = _tune(tmp_path, None)
    stored = store.load(run_id)
    assert stored.run.status is RunStatus.COMPLETE
    checks = {st.scenario: len(st.values()) for st in stored.scenarios if st.scenario.is_check}
    (best,) = [sc for sc in checks if sc.remedy is not None and sc.remedy.copy and sc.cipher]  # +200 %: a cipher
    assert set(checks) == {sizes.checked(COPY), best} and set(checks.values()) == {DECIDING_PAIRS}


def test_parts_that_ran_one_after_another_are_not_credited_a_path_each() -> None:
    """8 parts of 128 KiB on a 2.5 MB/s path whose logins staggered them: each part alone saw the whole path (its
    steady rate 2.5 MB/s), so the copy's bytes moved at one path's rate, not eight (a 1 GB prediction of +171 % for 8
    connections on a 20 Mbit/s path came from that); parts that ran together share it and count once."""
    part, n = 2**17, 8
    alone = part / (2.5 * MB)  # seconds a part moved its bytes
    sc = Scenario(Kind.THROUGHPUT, direction=Direction.DOWN, remedy=Remedy(RemedyKind.STREAMS, 8))

    def sample(rate: float) -> Sample:
        return Sample(sc, 1, False, ok=True, value=rate, wall=1.0, nbytes=part)

    staggered = [(sample(2.5), 0.4 + i * 0.1) for i in range(n)]  # each ends 0.1 s after the last: no overlap
    copy = combine(sc, 1, staggered, n, part, wall=1.2)
    assert moving([(e - alone, e) for _, e in staggered]) == pytest.approx(n * alone)
    assert dict(copy.phases)[FIXED] == pytest.approx(1.2 - n * alone)
    assert sizes.seconds_for(copy, 10**9) == pytest.approx(1.2 - n * alone + 10**9 / (2.5 * MB))  # one path's rate
    together = [(sample(2.5 / n), 1.0) for _ in range(n)]  # all at once, each an eighth of the path
    assert dict(combine(sc, 1, together, n, part, wall=1.2).phases)[FIXED] == pytest.approx(1.2 - n * alone)
