"""`sshbench load --job session` against embedded servers: sessions opened and held, each stored as it opens, the
server read at rest per step; a step the open-file limit cannot hold is not run and says the largest that fits."""

from __future__ import annotations

import json
import resource
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


def test_tinyssh_holds_past_tcpservers_default_limit_and_a_step_past_the_open_files_is_not_run(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """45 sessions: past tcpserver's default of 40 connections at once, which the job raises; under a hard limit of
    120 open files, 80 sessions (144 files for the driver) are not run and the largest that fits is said."""
    db = tmp_path / "sessions.db"

    def few_files() -> None:
        """Allow the CLI and what it starts 120 open files, hard."""
        resource.setrlimit(resource.RLIMIT_NOFILE, (120, 120))

    argv = [sys.executable, "-m", "sshbench", "load", "local:tinyssh", "--job", "session", "--sessions", "1,45,80"]
    done = subprocess.run(
        [*argv, "--db", str(db), "--json"],
        env=cli_env,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=few_files,
    )
    assert done.returncode == 0, done.stderr
    plan = " ".join(done.stderr.split())
    assert "Plan: steps of 1, 45, 80 sessions held (8 opened at a time: ~" in plan, plan  # issue 54, item 7
    assert "ms each, from the first 16;" in plan and "set-up ~" in plan, plan
    doc = json.loads(done.stdout)
    one, many, past = doc["sessions"]["held"]
    assert (one["held"], many["held"], many["opened"], many["failed"]) == (1, 45, 44, 0), many
    assert many["processes_by_role"] == {"session": 45, "command": 45}, many  # tinysshd and `cat` per session
    assert 0 < many["pss_per_session"] < 8 * 2**20 and many["rss_per_session"] > many["pss_per_session"], many
    assert 0 < many["open_p50"] <= many["open_p99"] < 5 and many["server_cpu_share_at_rest"] < 0.05, many
    assert "tcpserver -c 88" in " ".join(doc["run"]["environment"]["server_settings"])
    assert past["held"] is None and past["not_run"].startswith("skipped: not run: they need about 144 open files")
    assert "allows 120 (ulimit -Hn); the largest that fits is 56" in past["not_run"], past
    with sqlite3.connect(db) as con:
        states = {r[0] for r in con.execute("SELECT state FROM memory")}
        rounds = [r[0] for r in con.execute("SELECT round FROM samples WHERE warmup = 0 ORDER BY round")]
    assert states == {"idle", "1 sessions", "45 sessions"} and rounds == sorted([1, *range(1, 45)])  # per step
    shown = subprocess.run([*argv[:3], "show", "--db", str(db)], env=cli_env, capture_output=True, text=True)
    words = " ".join(shown.stdout.split())
    assert "80 sessions: not run: they need about 144 open files" in words, words
    assert "held 45 sessions in" in words and "MiB a session above the idle server" in words, words


def test_a_budget_too_short_for_the_steps_is_refused_from_the_pace_of_the_first_sessions(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Issue 54, item 7: `--job session` printed no plan; its estimate is made from the pace of the first 16
    sessions opened, and a budget that cannot hold the steps is refused there (what was opened is stored)."""
    argv = [sys.executable, "-m", "sshbench", "load", "local:tinyssh", "--job", "session", "--sessions", "1,400"]
    done = subprocess.run(
        [*argv, "--max-time", "2s", "--db", str(tmp_path / "s.db")], env=cli_env, capture_output=True, text=True
    )
    words = " ".join(done.stderr.split())
    assert done.returncode == 2, words
    assert "Plan: steps of 1, 400 sessions held (8 opened at a time" in words, words
    assert "to run them: does not fit the 2.0 s budget" in words and "Fix: raise --max-time to at least" in words
