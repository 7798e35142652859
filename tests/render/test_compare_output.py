"""`compare` from stored runs: golden table, exit codes of --fail-if, JSON (the real CLI)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import sshbench
from fakes import CHACHA, GCM, runs_db
from sshbench.errors import ExitCode

GOLDEN = Path(__file__).parent.parent / "golden"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """The hand-made runs of fakes.runs_db."""
    return runs_db(tmp_path / "runs.db")


def test_compare_golden_output(cli_env: dict[str, str], db: Path) -> None:
    done = sshbench({**cli_env, "COLUMNS": "120"}, "compare", "1", "2", "--db", str(db))
    assert done.returncode == 0, done.stderr
    golden = GOLDEN / "compare.txt"
    if os.environ.get("SSHBENCH_UPDATE_GOLDEN"):
        golden.write_text(done.stdout)
    assert done.stdout == golden.read_text()


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (["--fail-if", "slower:5%"], ExitCode.REGRESSION, "slower than run 1 by more than 5%"),
        (["--fail-if", "slower:25%"], ExitCode.OK, ""),
        (["--fail-if", "faster:5%"], ExitCode.USAGE, "slower:PERCENT"),
        (["--fail-if", "slower:lots"], ExitCode.USAGE, "percentage"),
    ],
)
def test_compare_exit_codes(cli_env: dict[str, str], db: Path, args: list[str], code: int, words: str) -> None:
    done = sshbench(cli_env, "compare", "1", "2", "--db", str(db), *args)
    assert done.returncode == code, done.stderr
    assert words in done.stderr
    if code == ExitCode.REGRESSION:
        assert "FAIL" in done.stdout and f"{GCM} down 20.0% slower" in done.stdout


def test_compare_json(cli_env: dict[str, str], db: Path) -> None:
    done = sshbench(cli_env, "compare", "1", "2", "--db", str(db), "--json")
    doc = json.loads(done.stdout)
    verdicts = {c["label"]: c["verdict"] for c in doc["changes"]}
    assert verdicts[f"{GCM} down"] == "slower" and verdicts[f"{CHACHA} up"] == "no change"
    assert any("emulation differs" in w for w in doc["environment_differences"])
