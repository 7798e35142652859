"""A killed sshbench leaves nothing: its servers die with it (PR_SET_PDEATHSIG), its guardian (or else the next
sshbench) removes its directories and cgroups and marks its run interrupted; a live run cannot be resumed twice."""

from __future__ import annotations

import contextlib
import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from conftest import sshbench, started, stored_samples
from fakes import ENVIRONMENT
from sshbench import leases
from sshbench.errors import SshbenchError
from sshbench.joboptions import JobOptions
from sshbench.runkinds import RunKind
from sshbench.storage.store import Store

ONE_KEX = ["--kex", "curve25519-sha256", "--hostkey", "ssh-ed25519"]
ARGS = ["throughput", "--cipher", "aes128-gcm@openssh.com", "--size", "16M", "--max-time", "60"]
ARGS += ["--rounds", "6", "--max-rounds", "6"]  # the resume is whole at 6 rounds, not once the noise allows


def _start(env: dict[str, str], db: Path, minimum: int = 2) -> subprocess.Popen[str]:
    """Start a throughput run and return once it has stored `minimum` samples."""
    proc = started(env, *ARGS, "--db", str(db))
    deadline = time.monotonic() + 60
    while stored_samples(db) < minimum:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.monotonic() < deadline, "no samples stored in time"
        time.sleep(0.1)
    return proc


def _lease(env: dict[str, str]) -> leases.Lease:
    """Return the one live lease under the test's HOME."""
    files = list((Path(env["HOME"]) / ".local" / "state" / "sshbench" / "live").glob("*.json"))
    assert len(files) == 1, files
    lease = leases.Lease.from_dict(json.loads(files[0].read_text()))
    assert lease is not None
    return lease


def _tree(pid: int) -> list[psutil.Process]:
    """Return a process and all its descendants."""
    root = psutil.Process(pid)
    return [root, *root.children(recursive=True)]


def _cmdline(proc: psutil.Process) -> str:
    """Return a process's command line, "" once it has exited (a sample's ssh ends between the listing and this)."""
    try:
        return " ".join(proc.cmdline())
    except psutil.Error:
        return ""


def _gone(procs: list[psutil.Process], timeout: float = 5.0) -> list[str]:
    """Wait for processes to end; return the command lines of those still running."""
    deadline = time.monotonic() + timeout
    alive = procs
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if _running(p)]
        time.sleep(0.05)
    return [line for p in alive if _running(p) and (line := _cmdline(p))]


def _running(proc: psutil.Process) -> bool:
    """Return whether a process still runs (not a zombie), False when it ended while we asked."""
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _left(lease: leases.Lease) -> list[str]:
    """Return what of a lease still exists: directories, cgroups, processes."""
    left = [d for d in lease.dirs if Path(d).exists()] + [c for c in lease.cgroups if Path(c).exists()]
    return left + [f"pid {pid}" for pid, ticks in lease.processes if leases.start_ticks(pid) == ticks]


def _status(db: Path) -> str:
    """Return run 1's stored status."""
    with sqlite3.connect(db) as con:
        return str(con.execute("SELECT status FROM runs WHERE id=1").fetchone()[0])


@pytest.mark.integration  # real sshbench runs against embedded servers
@pytest.mark.parametrize("guardian", [True, False], ids=["guardian-reaps", "next-command-reaps"])
def test_sigkill_leaves_nothing_and_the_run_resumes(cli_env: dict[str, str], tmp_path: Path, guardian: bool) -> None:
    db = tmp_path / "runs.db"
    proc = _start(cli_env, db)
    lease = _lease(cli_env)
    assert lease.processes and lease.dirs and lease.runs == [(str(db.resolve()), 1)]
    tree = _tree(proc.pid)
    guard = [p for p in tree if "sshbench.guardian" in _cmdline(p)]
    assert len(guard) == 1
    kept = stored_samples(db)
    if not guardian:
        guard[0].kill()
    proc.kill()
    proc.wait()
    assert _gone(tree) == []  # the listener by PDEATHSIG; sessions and clients follow their connection
    if guardian:
        deadline = time.monotonic() + 10
        while _left(lease) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _left(lease) == []
        assert _status(db) == "interrupted"
    else:
        assert _left(lease) == [dir_ for dir_ in lease.dirs] + lease.cgroups  # nothing removed them yet
        shown = sshbench(cli_env, "history", "--db", str(db))
        assert shown.returncode == 0, shown.stderr
        assert f"cleaned up after sshbench process {proc.pid}, which was killed" in shown.stderr
        assert "run 1 marked interrupted" in shown.stderr
        assert "interrupted" in shown.stdout
        assert _left(lease) == []
    assert not (Path(cli_env["HOME"]) / ".local" / "state" / "sshbench").exists()
    assert stored_samples(db) >= kept  # every sample stored before the kill is still there
    done = sshbench(cli_env, "throughput", "--db", str(db), "--resume", "1", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["run"]["status"] == "complete"


@pytest.mark.integration  # real sshbench runs against embedded servers
def test_a_live_run_cannot_be_resumed_by_another_process(cli_env: dict[str, str], tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    proc = _start(cli_env, db)
    try:
        shown = sshbench(cli_env, "history", "--db", str(db))
        assert shown.returncode == 0 and "running" in shown.stdout, shown.stderr
        second = sshbench(cli_env, "throughput", "--db", str(db), "--resume", "1")
        assert second.returncode == 2
        assert "run 1 is being measured right now by another sshbench" in second.stderr
        assert second.stderr.count("\n") == 1
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    assert proc.returncode == 130
    assert _status(db) == "interrupted"


def test_claim_is_refused_while_the_owner_lives(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    run_id = store.create_run(JobOptions(command=RunKind.RUN), "local", ENVIRONMENT)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        owner = leases.Owner(live.pid, leases.start_ticks(live.pid) or 0)
        store.db.execute("UPDATE runs SET status='running', owner=? WHERE id=?", (owner.text, run_id))
        with pytest.raises(SshbenchError, match=f"process {live.pid}"):
            store.claim(run_id)
    finally:
        live.kill()
        live.wait()
    assert store.run(run_id).status.value == "interrupted"  # its owner is gone: it reads as interrupted
    store.claim(run_id)
    assert store.db.execute("SELECT owner FROM runs WHERE id=?", (run_id,)).fetchone()[0] == leases.me().text


@pytest.mark.integration  # real sshbench runs against embedded servers
def test_ssh_clients_die_with_sshbench_even_against_a_remote_host(
    cli_env: dict[str, str], tmp_path: Path, testhost: Path
) -> None:
    args = [
        "throughput",
        "testhost",
        "--ssh-config",
        str(testhost),
        "--cipher",
        "aes128-gcm@openssh.com",
        "--direction",
        "down",
        "--size",
        "64G",
        "--max-time",
        "none",
        "--db",
        str(tmp_path / "runs.db"),
    ]
    proc = started(cli_env, *args)
    try:
        client = _long_transfer(proc)
        if not Path(f"/proc/{proc.pid}/cgroup").read_text().count("sshbench-client-"):
            pytest.skip("no cgroup could be made here: remote clients end when their transfer does")
        proc.kill()
        proc.wait()
        assert _gone([client], timeout=5) == []  # a 64 GB download would otherwise run on for a minute
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _long_transfer(proc: subprocess.Popen[str]) -> psutil.Process:
    """Return the ssh client of the long download once it runs (bounded: 60 s)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        for child in psutil.Process(proc.pid).children():
            with contextlib.suppress(psutil.Error):
                if child.name() == "ssh" and "68719476736" in " ".join(child.cmdline()):
                    return child
        time.sleep(0.05)
    raise AssertionError("the long download did not start")


@pytest.mark.integration  # real sshbench runs against embedded servers
def test_ctrl_c_during_discovery_stores_no_failed_run(cli_env: dict[str, str], tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    proc = started(cli_env, "run", "--db", str(db))
    deadline = time.monotonic() + 30
    while not _ssh_child(proc.pid):  # the first ssh connection: discovery is under way
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.005)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "sshbench: interrupted"  # nothing measured yet: nothing to resume
    if db.exists():
        with sqlite3.connect(db) as con:
            statuses = [row[0] for row in con.execute("SELECT status FROM runs")]
        assert "failed" not in statuses and "running" not in statuses


def _ssh_child(pid: int) -> bool:
    """Return True while sshbench runs an ssh client."""
    with contextlib.suppress(psutil.Error):
        return any(child.name() == "ssh" for child in psutil.Process(pid).children())
    return False
