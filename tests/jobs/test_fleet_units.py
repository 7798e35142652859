"""Fleet job pieces without hosts: which hosts a (resumed) fleet works on, `parallel`'s bound and its stop, and
the progress bar shared by several hosts."""

from __future__ import annotations

import threading
from pathlib import Path

from fakes import ENVIRONMENT
from sshbench.joboptions import JobOptions
from sshbench.jobs.fleet import FleetProgress, _needs_work, parallel
from sshbench.records import FleetHost
from sshbench.runkinds import RunKind
from sshbench.samples import RunStatus
from sshbench.ssh.inventory import REFUSED
from sshbench.storage.store import Store


def test_hosts_to_work_on(tmp_path: Path) -> None:
    store = Store(tmp_path / "r.db")
    done = store.create_run(JobOptions(command=RunKind.RUN), "a", ENVIRONMENT)
    store.set_status(done, RunStatus.COMPLETE)
    cut = store.create_run(JobOptions(command=RunKind.RUN), "b", ENVIRONMENT)
    store.set_status(cut, RunStatus.INTERRUPTED)
    assert not _needs_work(store, FleetHost("a", "a", run=done))
    assert _needs_work(store, FleetHost("b", "b", run=cut))
    assert _needs_work(store, FleetHost("c", "c", failure="cannot log in: refused"))  # tried again
    assert not _needs_work(store, FleetHost("d", "d", failure=f"{REFUSED}ansible_connection=local is not SSH"))


def test_parallel_runs_at_most_forks_at_once_and_every_item() -> None:
    lock, running, peak, seen = threading.Lock(), [0], [0], []
    together = threading.Barrier(3, timeout=10)  # passes only when 3 items run at once

    def work(item: int) -> None:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        together.wait()
        with lock:
            running[0] -= 1
            seen.append(item)

    parallel(list(range(9)), 3, work, threading.Event())
    assert peak[0] == 3 and sorted(seen) == list(range(9))


def test_one_failing_worker_stops_the_others_and_its_error_is_raised() -> None:
    started: list[int] = []
    stop = threading.Event()

    def work(item: int) -> None:
        started.append(item)
        if item == 0:
            raise OSError("disk full")
        assert stop.wait(10)  # the other worker holds its item until the failure stops the fleet

    try:
        parallel(list(range(20)), 2, work, stop)
    except OSError as exc:
        assert "disk full" in str(exc)
    else:
        raise AssertionError("the worker's error was swallowed")
    assert 0 in started and set(started) <= {0, 1}  # at most one item each; none taken after the stop


def test_progress_sums_every_hosts_rounds() -> None:
    seen: list[tuple[str, int, int]] = []

    class Bar:
        def update(self, description: str, done: int, total: int) -> None:
            seen.append((description, done, total))

    fleet = FleetProgress(Bar())
    fleet.host("a").update("round 1", 1, 4)
    fleet.host("b").update("round 2", 2, 4)
    assert seen[-1] == ("b: round 2", 3, 8)
