"""Storage under pressure: two sshbench processes writing one database at once, and a disk that fills up
in the middle of a run (a small tmpfs; root only)."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import sshbench, started

pytestmark = pytest.mark.integration
ROUNDS = ["--rounds", "8", "--max-rounds", "8"]  # every row 8 rounds: what is counted, not when the noise allows
ARGS = ["throughput", "--cipher", "aes128-gcm@openssh.com", "--size", "8M", *ROUNDS, "--json"]


def _count(db: Path, where: str = "1") -> int:
    """Return how many samples match (0 before the tables exist)."""
    with sqlite3.connect(db) as con:
        try:
            return int(con.execute(f"SELECT COUNT(*) FROM samples WHERE {where}").fetchone()[0])
        except sqlite3.OperationalError:
            return 0


def test_two_processes_write_one_database_and_lose_nothing(cli_env: dict[str, str], tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    with ThreadPoolExecutor(2) as pool:
        done = list(pool.map(lambda _: sshbench(cli_env, *ARGS, "--db", str(db), "--no-pin"), range(2)))
    for d in done:
        assert d.returncode == 0, d.stderr
    docs = [json.loads(d.stdout) for d in done]
    assert sorted(doc["run"]["id"] for doc in docs) == [1, 2]
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        for doc in docs:
            run_id = doc["run"]["id"]
            stored = con.execute(
                "SELECT COUNT(*) FROM samples JOIN scenarios ON samples.scenario_id=scenarios.id"
                " WHERE scenarios.run_id=? AND samples.warmup=0 AND samples.ok=1",
                (run_id,),
            ).fetchone()[0]
            failed = [(r["scenario"], r["failure"]) for group in doc["results"].values() for r in group if r["failure"]]
            assert not failed, failed  # a row that failed under the other process's load says why
            reported = sum(r["summary"]["n"] for group in doc["results"].values() for r in group)
            assert stored == reported and reported >= 2 * 8  # both directions, every round of every row
            assert doc["run"]["status"] == "complete"


@contextlib.contextmanager
def _small_tmpfs(path: Path, size: str) -> Iterator[Path]:
    """Mount a small tmpfs at path for the test (root only), and unmount it after."""
    path.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def _fill(folder: Path) -> Path:
    """Fill a filesystem to the last byte; return the filler file."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for chunk in (65536, 4096, 1):
            with contextlib.suppress(OSError):
                while os.write(fd, b"\0" * chunk) == chunk:
                    pass
    finally:
        os.close(fd)
    return filler


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")
def test_a_full_disk_stops_the_run_clearly_keeps_every_sample_and_resumes(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    with _small_tmpfs(tmp_path / "small", "4m") as small:
        db = small / "runs.db"
        args = ["throughput", "--db", str(db), "--cipher", "aes128-gcm@openssh.com", "--size", "8M", "--rounds", "12"]
        args += ["--max-rounds", "12"]  # the resume is whole at 12 rounds
        proc = started(cli_env, *args)
        deadline = time.monotonic() + 60
        while (not db.exists() or _count(db) < 4) and time.monotonic() < deadline:
            time.sleep(0.05)
        filler = _fill(small)
        before = _count(db)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 7, err
        lines = [line for line in err.strip().splitlines() if not line.startswith("Plan:")]
        assert len(lines) == 1 and "database or disk is full" in lines[0], err
        assert "free disk space" in lines[0] and "--resume 1" in lines[0]
        with sqlite3.connect(db) as con:
            assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert _count(db) >= before >= 4  # every sample stored before the disk filled is there
        filler.unlink()
        done = sshbench(cli_env, "throughput", "--db", str(db), "--resume", "1", "--json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["run"]["status"] == "complete"
        assert _count(db, "ok=1 AND warmup=0") >= 2 * 12
