"""Issue 21, item 8: every command sshbench suggests works when pasted: it repeats --db / --ssh-config / -F as given,
names sshbench as it can be started again, and fixes fit how sshbench was installed (checkout or package)."""

from __future__ import annotations

import dataclasses
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import sshbench
from fakes import ENVIRONMENT, GCM
from sshbench import hints
from sshbench.errors import SshbenchError
from sshbench.joboptions import JobOptions
from sshbench.jobs.servers import _none_started
from sshbench.model import Direction, Kind, Scenario
from sshbench.records import ServerReport
from sshbench.remedy import Remedy
from sshbench.runkinds import RunKind
from sshbench.samples import RunStatus, Sample
from sshbench.ssh.destination import Target
from sshbench.storage.store import Store


@pytest.fixture(autouse=True)
def fresh() -> Iterator[None]:
    """Start and end each test with nothing noted."""
    hints.forget()
    yield
    hints.forget()


def test_a_resume_hint_repeats_the_database(cli_env: dict[str, str], tmp_path: Path) -> None:
    """'finish it with `sshbench throughput --resume 19`' dropped the --db the user gave."""
    db = tmp_path / "elsewhere.db"
    store = Store(db)
    run_id = store.create_run(JobOptions(command=RunKind.THROUGHPUT), "local", ENVIRONMENT)
    sc = Scenario(Kind.THROUGHPUT, cipher=GCM, direction=Direction.DOWN)
    ids = store.add_scenarios(run_id, [sc])
    store.add_sample(ids[sc.key], Sample(sc, 1, False, True, 900.0, 1.0, nbytes=2**27))
    store.set_status(run_id, RunStatus.INCOMPLETE)
    store.close()
    done = sshbench(cli_env, "show", str(run_id), "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert f"--resume {run_id} --db {db}" in done.stdout
    assert f"recommend {run_id} --db {db}" in done.stdout


def test_an_ssh_hint_repeats_the_ssh_config(tmp_path: Path) -> None:
    """'`ssh -v box-nosuch`' dropped the -F the user gave."""
    config = tmp_path / "my config"
    target = Target("box-nosuch", "box-nosuch", ("-F", str(config), "-o", "ConnectTimeout=10"), "box-nosuch", 22, False)
    assert target.ssh_hint() == shlex.join(["ssh", "-v", "-F", str(config), "box-nosuch"])
    hints.note(ssh_config=str(config))
    assert hints.ssh_verbose("HOST") == shlex.join(["ssh", "-v", "-F", str(config), "HOST"])


def test_fixes_fit_a_checkout_or_a_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """'scripts/setup' and 'sudo .venv/bin/sshbench' do not exist for someone who installed the package."""
    assert hints.checkout() is not None  # these tests run from the checkout
    assert "scripts/setup" in hints.install("socat")
    monkeypatch.setattr(hints, "CHECKOUT", tmp_path)  # an installed package: no scripts/ beside it
    assert hints.checkout() is None
    assert hints.install("socat") == "sudo apt-get install socat"
    assert "pip install --upgrade sshbench" in hints.upgrade() and "scripts/setup" not in hints.upgrade()
    assert "pip install 'sshbench[fleet]'" in hints.extra("fleet", "ansible-core")
    venv = tmp_path / "venv" / "bin" / "sshbench"
    monkeypatch.setattr(sys, "argv", [str(venv), "tools", "--link", "gbe"])
    assert hints.as_root() == f"sudo {venv} tools --link gbe"
    assert ".venv/bin" not in hints.as_root()


def test_a_root_only_server_says_it_needs_root_not_that_it_is_missing() -> None:
    """`servers local:tinyssh` as a normal user said "install the servers" although tinysshd is installed."""
    why = "TinySSH needs root here (its authorized_keys path check fails inside a user namespace)"  # before 58
    reports = {"tinyssh": ServerReport("tinyssh", "local:tinyssh", skipped=why)}
    with pytest.raises(SshbenchError) as caught:
        _none_started(reports)
    assert "needs root" in caught.value.cause
    assert "run it as root: `sudo " in caught.value.fix and "install" not in caught.value.fix


def test_hints_name_the_database_only_when_given_on_the_command_line() -> None:
    assert hints.sshbench("history") == shlex.join([*hints.program(), "history"])
    hints.note(db="/data/my runs.db")
    assert hints.sshbench("history").endswith("history --db '/data/my runs.db'")
    assert dataclasses.asdict(hints.given()) == {"db": "/data/my runs.db", "ssh_config": None}


def test_recommend_on_a_tune_run_points_at_show_and_the_hint_works(cli_env: dict[str, str], tmp_path: Path) -> None:
    """`recommend RUN` of a tune run said "what your client uses today was not measured" of a measured default."""
    db = tmp_path / "tune.db"
    store = Store(db)
    run_id = store.create_run(JobOptions(command=RunKind.TUNE), "local", ENVIRONMENT)
    sc = Scenario(Kind.THROUGHPUT, cipher=GCM, direction=Direction.DOWN, remedy=Remedy.streams(1))
    ids = store.add_scenarios(run_id, [sc])
    for rnd in (1, 2, 3):
        store.add_sample(ids[sc.key], Sample(sc, rnd, False, True, 900.0, 1.0, nbytes=2**27))
    store.set_status(run_id, RunStatus.COMPLETE)
    store.close()
    done = sshbench(cli_env, "recommend", str(run_id), "--db", str(db))
    assert done.returncode == 2 and "is a tune run" in done.stderr
    hint = done.stderr.split("`")[1]
    assert hint.endswith(f"show {run_id} --db {db}")
    pasted = subprocess.run(shlex.split(hint), env=cli_env, capture_output=True, text=True, check=False)
    assert pasted.returncode == 0 and f"Run {run_id} (tune" in pasted.stdout, pasted.stderr  # as printed
