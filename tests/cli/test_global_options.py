"""Options every command shares may come before the command (`sshbench --db X tune box`), as git's and docker's do;
`sshbench --max-time 90s` stays `run`'s shorthand, and a name that is no command says how to measure such a host."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import sshbench
from fakes import runs_db
from sshbench.errors import ExitCode


def test_shared_options_before_the_command_reach_the_command(cli_env: dict[str, str], tmp_path: Path) -> None:
    db = runs_db(tmp_path / "runs.db")
    done = sshbench(cli_env, "--db", str(db), "--json", "show", "1")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["run"]["id"] == 1
    done = sshbench(cli_env, f"--db={db}", "--ssh-config", str(tmp_path / "config"), "tune", "box", "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Usage: sshbench tune [OPTIONS] [TARGET]")  # `box` went to tune, not to run


def test_an_option_of_run_first_still_runs_the_main_job(cli_env: dict[str, str], tmp_path: Path) -> None:
    done = sshbench(cli_env, "--db", str(tmp_path / "runs.db"), "--max-time", "90s", "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Usage: sshbench run [OPTIONS] [TARGET]")


def test_a_name_that_is_no_command_says_how_to_measure_a_host_of_that_name(cli_env: dict[str, str]) -> None:
    done = sshbench(cli_env, "127.0.0.1:1")
    assert done.returncode == ExitCode.USAGE
    assert "'127.0.0.1:1' is no sshbench command" in done.stderr and "run 127.0.0.1:1`" in done.stderr
