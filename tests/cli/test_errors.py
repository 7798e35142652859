"""Errors are one clear line with the right exit code and fix, store no run, and leave nothing behind
(real CLI, real ssh; unreachable hosts are a closed loopback port and a loopback listener that never speaks)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from conftest import private_dirs, sshbench
from sshbench.errors import ExitCode

pytestmark = pytest.mark.integration


def _one_line(stderr: str) -> str:
    """Return the single error line (a progress bar may leave a blank line before it)."""
    lines = [line for line in stderr.splitlines() if not line.startswith("Plan:")]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("sshbench: error: ") and ". Fix: " in lines[0]
    return lines[0]


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (["throughput", "--cipher", "rot13-cbc"], ExitCode.UNSUPPORTED_ALGORITHM, "does not support cipher"),
        (["throughput", "--cipher", "aes128-ctr;rm"], ExitCode.USAGE, "not a valid cipher"),
        (["throughput", "--size", "lots"], ExitCode.USAGE, "bad --size"),
        (["latency", "127.0.0.1:1"], ExitCode.CONNECTION_FAILED, "ssh -v -p 1 127.0.0.1"),
        (["algos", "127.0.0.1:1"], ExitCode.CONNECTION_FAILED, "Connection refused"),
        (["run", "--db", "/proc/sshbench/x.db"], ExitCode.STORAGE, "results database"),
        (["run", "--resume", "99"], ExitCode.USAGE, "there is no run 99"),
        (["show", "12345"], ExitCode.USAGE, "no results database yet"),
        (["throughput", "--kex", "curve25519-sha256"], ExitCode.USAGE, "No such option '--kex'"),
        (["latency", "--size", "8M"], ExitCode.USAGE, "sshbench latency --help"),
        (["throughput", "--cipher", "aes128-ctr", "--max-time", "1s"], ExitCode.USAGE, "raise --max-time to at least"),
        (["show", "yesterday"], ExitCode.USAGE, "or `last`"),
    ],
)
def test_errors_are_one_clear_line_and_store_no_run(
    cli_env: dict[str, str], own_tmp: Path, args: list[str], code: int, words: str
) -> None:
    before = private_dirs(own_tmp)  # counted in its own temp directory
    done = sshbench(cli_env, *args)
    assert done.returncode == code, done.stderr
    assert words in _one_line(done.stderr)
    assert private_dirs(own_tmp) - before == set()
    db = Path(cli_env["XDG_DATA_HOME"]) / "sshbench" / "sshbench.db"
    if db.exists():
        assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


def _db_with(path: Path, sql: str) -> Path:
    """Create an SQLite file with these statements."""
    con = sqlite3.connect(path)
    con.executescript(sql)
    con.close()
    return path


def test_database_errors_name_their_cause(cli_env: dict[str, str], tmp_path: Path) -> None:
    foreign = _db_with(tmp_path / "foreign.db", "CREATE TABLE invoices (id INTEGER);")
    done = sshbench(cli_env, "history", "--db", str(foreign))
    assert done.returncode == ExitCode.STORAGE and "not sshbench's" in _one_line(done.stderr)
    done = sshbench(cli_env, "algos", "--db", str(foreign))
    assert done.returncode == ExitCode.STORAGE
    tables = {r[0] for r in sqlite3.connect(foreign).execute("SELECT name FROM sqlite_master")}
    assert tables == {"invoices"}  # never adds its tables to another program's database
    newer = tmp_path / "newer.db"
    assert sshbench(cli_env, "history", "--db", str(newer), "--json").returncode == 0
    sshbench(cli_env, "algos", "--db", str(newer))
    with sqlite3.connect(newer) as con:
        con.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    done = sshbench(cli_env, "history", "--db", str(newer))
    assert done.returncode == ExitCode.STORAGE and "upgrade sshbench" in _one_line(done.stderr)
    garbage = tmp_path / "garbage.db"
    garbage.write_text("not a database\n" * 200)
    done = sshbench(cli_env, "history", "--db", str(garbage))
    assert done.returncode == ExitCode.STORAGE and "not an SQLite database" in _one_line(done.stderr)


def test_locked_and_read_only_databases(cli_env: dict[str, str], tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    assert sshbench(cli_env, "algos", "--db", str(db)).returncode == 0
    db.chmod(0o444)
    done = sshbench(cli_env, "history", "--db", str(db), "--json")
    assert done.returncode == 0 and json.loads(done.stdout)[0]["command"] == "algos"  # read commands read only
    assert sshbench(cli_env, "show", "last", "--db", str(db)).returncode == 0
    db.chmod(0o644)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        done = sshbench(cli_env, "algos", "--db", str(db))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert done.returncode == ExitCode.STORAGE and "another sshbench is using it" in _one_line(done.stderr)


def test_resume_refuses_new_options(cli_env: dict[str, str], tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    done = sshbench(cli_env, "latency", "--db", str(db), "--resume", "1", "--kex", "curve25519-sha256")
    assert done.returncode == ExitCode.USAGE
    assert "--kex cannot change them" in _one_line(done.stderr)
