"""Leases: reaping kills only recorded processes whose start time still matches, removes only directories that
carry the dead owner's marker, never touches a live owner's lease, and one of two reapers wins."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sshbench import leases


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the lease folder at a temporary state directory."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return leases.live_dir()


def _dead_owner() -> leases.Owner:
    """Return the owner identity of a process that has exited."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    ticks = leases.start_ticks(proc.pid)
    proc.wait()
    return leases.Owner(proc.pid, ticks or 1)


def _sleeper() -> subprocess.Popen[bytes]:
    """Start a process that sleeps (bounded: 30 s)."""
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])


def test_owner_text_round_trips_and_rejects_garbage() -> None:
    me = leases.me()
    assert leases.Owner.parse(me.text) == me and me.alive()
    for bad in (None, "", "12", "a:b", "1:2:3", ":5"):
        assert leases.Owner.parse(bad) is None
    assert not leases.alive("1:2")  # PID 1 exists, but did not start at tick 2


def test_reaping_a_dead_owner_spares_reused_pids_and_foreign_directories(state: Path, tmp_path: Path) -> None:
    owner = _dead_owner()
    ours, foreign = tmp_path / "ours", tmp_path / "foreign"
    for folder, marker in ((ours, owner.text), (foreign, "999999:1")):
        folder.mkdir()
        (folder / leases.MARKER).write_text(marker + "\n")
    recorded, innocent = _sleeper(), _sleeper()
    try:
        ticks = leases.start_ticks(recorded.pid)
        assert ticks is not None
        lease = leases.Lease(owner, [(recorded.pid, ticks), (innocent.pid, 1)], [], [str(ours), str(foreign)], [])
        state.mkdir(parents=True)
        (state / f"{owner.pid}-{owner.start}.json").write_text(json.dumps(lease.to_dict()))
        settled: list[str] = []
        reaped = leases.reap_stale(settled.append)
        assert [r.owner for r in reaped] == [owner]
        assert recorded.wait(5) == -9  # recorded and started when recorded: killed
        assert innocent.poll() is None  # same PID slot, other start time: untouched
        assert not ours.exists() and foreign.exists()
        assert not state.exists()  # the lease and its empty folder are gone
    finally:
        for proc in (recorded, innocent):
            proc.kill()
            proc.wait()


def test_a_live_owners_lease_is_left_alone(state: Path) -> None:
    keeper = leases.Keeper(owner_wait=0.5)  # its guardian waits half a second for this live owner, not 10 s
    folder = state.parent / "mine"
    folder.mkdir(parents=True)
    keeper.directory(folder)
    try:
        assert keeper.path.exists()
        assert leases.reap_stale(None) == []
        assert folder.exists() and keeper.path.exists()
    finally:
        keeper.forget(path=folder)
        if keeper.guardian is not None:
            assert keeper.pipe is not None
            os.close(keeper.pipe)  # as if this process had exited: the guardian finds no lease and leaves
            assert keeper.guardian.wait(15) == 0
    assert not keeper.path.exists() and folder.exists()  # forgotten, so not the guardian's to remove


def test_only_one_of_two_reapers_claims_a_lease(state: Path) -> None:
    owner = _dead_owner()
    state.mkdir(parents=True)
    path = state / f"{owner.pid}-{owner.start}.json"
    path.write_text(json.dumps(leases.Lease(owner, runs=[("x.db", 1)]).to_dict()))
    first = leases.reap_file(path, None)
    second = leases.reap_file(path, None)
    assert first is not None and second is None
