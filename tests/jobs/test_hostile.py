"""Hostile and broken servers: one clear line, the right exit code, no hang, no traceback; a connection cut
in the middle of a transfer fails that sample with its reason and the run goes on."""

from __future__ import annotations

import sqlite3
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import pytest

from conftest import sshbench, started
from hostile import MODES, hostile_server
from sshbench.errors import ExitCode, SshbenchError
from sshbench.ssh import audit

pytestmark = pytest.mark.integration
STUCK = 12  # seconds: the login timeout these tests give (SSHBENCH_LOGIN_TIMEOUT; 30 s by default), past ssh's
# ConnectTimeout (10 s), so that a silent server is still ssh's own time-out
LIMIT = 10.0 + STUCK + 8.0  # seconds: a probe plus the login timeout, with room for a loaded machine


def _against(env: dict[str, str], mode: str, command: str) -> tuple[str, int, str, float]:
    """Run one command against a hostile server; return (mode, exit status, stderr, seconds)."""
    with hostile_server(mode) as port:
        started = time.monotonic()
        done = sshbench(env, command, f"127.0.0.1:{port}", timeout=120)
        return mode, done.returncode, done.stderr, time.monotonic() - started


def test_hostile_servers_fail_fast_with_one_line(cli_env: dict[str, str]) -> None:
    commands = ["algos", "latency"]
    jobs = [(mode, commands[i % 2]) for i, mode in enumerate(MODES)]
    env = cli_env | {"SSHBENCH_LOGIN_TIMEOUT": str(STUCK)}
    with ThreadPoolExecutor(len(jobs)) as pool:  # in parallel: the slowest (a stalled KEXINIT) takes STUCK + 5 s
        results = list(pool.map(lambda job: _against(env, *job), jobs))
    for mode, code, stderr, seconds in results:
        lines = stderr.strip().splitlines()
        assert code == ExitCode.CONNECTION_FAILED, (mode, stderr)
        assert len(lines) == 1 and lines[0].startswith("sshbench: error: cannot log in: "), (mode, stderr)
        assert "Traceback" not in stderr
        assert seconds < LIMIT, (mode, seconds)
        if mode == "silent":  # ConnectTimeout (10 s) and the probe's 5 s, not ssh's endless wait
            assert "timed out" in lines[0], stderr


def _probed(mode: str) -> tuple[str, SshbenchError | None, float]:
    """Probe one hostile server's KEXINIT; return the mode, the error raised (None if none) and the seconds."""
    with hostile_server(mode) as port:
        started = time.monotonic()
        try:
            audit.probe("127.0.0.1", port)
        except SshbenchError as caught:
            return mode, caught, time.monotonic() - started
        return mode, None, time.monotonic() - started


def test_the_kexinit_probe_raises_only_its_own_error_in_bounded_time() -> None:
    with ThreadPoolExecutor(len(MODES)) as pool:  # at once, as a fleet probes: the stalled ones wait 5 s each
        results = list(pool.map(_probed, MODES))
    for mode, caught, seconds in results:
        assert caught is not None, mode
        assert "could not read the server's algorithm lists" in str(caught.cause), (mode, caught)
        assert caught.code == ExitCode.CONNECTION_FAILED, mode
        assert seconds < audit.PROBE_DEADLINE + 6, (mode, seconds)


def _cut_one_transfer(listener: int, stop: threading.Event, cut: list[int]) -> None:
    """Kill one server session process in the middle of a transfer (bounded: 60 s)."""
    deadline = time.monotonic() + 60
    while not stop.is_set() and time.monotonic() < deadline:
        try:
            sessions = [p for p in psutil.Process(listener).children() if "notty" in " ".join(p.cmdline())]
            busy = [p for p in sessions if any("head" in " ".join(c.cmdline()) for c in p.children(recursive=True))]
        except psutil.Error:
            busy = []
        if busy:
            busy[0].kill()
            cut.append(busy[0].pid)
            return
        time.sleep(0.005)


@pytest.mark.alone  # a transfer cut in flight: on a machine shared with other tests, two more samples fell short
def test_a_connection_cut_mid_transfer_fails_that_sample_and_the_run_goes_on(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    db = tmp_path / "runs.db"
    args = [
        "throughput",
        "--db",
        str(db),
        "--cipher",
        "aes128-gcm@openssh.com",
        "--direction",
        "down",
        "--size",
        "32M",
        "--rounds",
        "6",
        "--warmup",
        "1",
    ]
    proc = started(cli_env, *args)
    stop, cut = threading.Event(), []
    try:
        listener = _listener_after_warmup(db, proc)
        cutter = threading.Thread(target=_cut_one_transfer, args=(listener, stop, cut))
        cutter.start()
        _, err = proc.communicate(timeout=240)
    finally:
        stop.set()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    cutter.join(5)
    assert cut, "no transfer was caught in flight"
    assert proc.returncode == 0, err
    with sqlite3.connect(db) as con:
        failed = con.execute("SELECT error FROM samples WHERE ok=0").fetchall()
        ok = con.execute("SELECT COUNT(*) FROM samples WHERE ok=1 AND warmup=0").fetchone()[0]
        status = con.execute("SELECT status FROM runs").fetchone()[0]
    assert len(failed) == 1 and failed[0][0], failed  # the cut sample, with ssh's reason
    assert ok >= 6 and status == "complete"


def _listener_after_warmup(db: Path, proc: subprocess.Popen[str]) -> int:
    """Wait until the warm-up sample is stored; return the embedded server's listener PID."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None
        if db.exists():
            with sqlite3.connect(db) as con:
                try:
                    if con.execute("SELECT COUNT(*) FROM samples WHERE warmup=0").fetchone()[0] >= 1:
                        break
                except sqlite3.OperationalError:
                    pass
        time.sleep(0.05)
    for child in psutil.Process(proc.pid).children():
        if "sshd" in " ".join(child.cmdline()):
            return child.pid
    raise AssertionError("no embedded sshd under sshbench")


def test_a_server_that_dies_mid_run_leaves_an_incomplete_run_that_resumes(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    db = tmp_path / "runs.db"
    args = [
        "throughput",
        "--db",
        str(db),
        "--cipher",
        "aes128-gcm@openssh.com,chacha20-poly1305@openssh.com",
        "--size",
        "8M",
        "--rounds",
        "3",
        "--max-rounds",
        "4",
        "--warmup",
        "1",
    ]
    proc = started(cli_env, *args)
    try:
        psutil.Process(_listener_after_warmup(db, proc)).kill()  # no new connection is accepted from here on
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == ExitCode.MEASUREMENT_FAILED, err
    line = err.strip().splitlines()[-1]
    assert "run 1 is incomplete" in line and "Connection refused" in line and "--resume 1" in line
    done = sshbench(cli_env, "throughput", "--db", str(db), "--resume", "1", "--json")
    assert done.returncode == 0, done.stderr  # a fresh server; the broken-off rows are measured again
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT status FROM runs").fetchone()[0] == "complete"
        assert con.execute("SELECT COUNT(*) FROM scenarios WHERE failure IS NOT NULL").fetchone()[0] == 0
