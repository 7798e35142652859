"""A client by path (`--ssh PATH`): every measuring command's connections go through it, the run names it, and a
path that is no OpenSSH client is refused before anything is stored. The client here is a wrapper script that logs
its arguments and runs the system's ssh, with the system's scp and sftp beside it."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import sshbench
from fleet_hosts import LoopbackFleet, loopback_fleet

pytestmark = pytest.mark.integration
GCM = "aes128-gcm@openssh.com"
ONCE = ["--warmup", "0", "--rounds", "1", "--max-rounds", "1", "--no-race"]
SMALL = ["--size", "4M", "--direction", "down", *ONCE]
COMMANDS = {
    "run": ["run", "--kex", "curve25519-sha256", "--hostkey", "ssh-ed25519", "--cipher", GCM, *SMALL],
    "algos": ["algos"],
    "latency": ["latency", "--kex", "curve25519-sha256", "--hostkey", "ssh-ed25519", *ONCE],
    "throughput": ["throughput", "--cipher", GCM, *SMALL],
    "sweep": ["sweep", "--kex", "curve25519-sha256", "--hostkey", "ssh-ed25519", "--cipher", GCM, *SMALL],
    "servers": ["servers", "local:openssh", "--hostkey", "ssh-ed25519", "--cipher", GCM, *SMALL],
    "tools": ["tools", "--tool", "scp,sftp", "--cipher", GCM, *SMALL],
    "tune": ["tune", "--direction", "down", "--size", "4M", "--rounds", "6", "--max-rounds", "6", "--max-time", "2m"],
    "clients": ["clients", "--client", "openssh", "--cipher", GCM, *SMALL],
}


@pytest.fixture
def wrapper(tmp_path: Path) -> Path:
    """Return an `ssh` that logs each invocation's arguments to ssh.log beside it, with scp and sftp beside it."""
    where = tmp_path / "client"
    where.mkdir()
    script = where / "ssh"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {where}/ssh.log\nexec {shutil.which("ssh")} "$@"\n')
    script.chmod(0o755)
    for tool in ("scp", "sftp"):
        os.symlink(str(shutil.which(tool)), where / tool)
    return script


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackFleet]:
    """One OpenSSH host on loopback, described as remote."""
    tmp = tmp_path_factory.mktemp("fleet-by-path")
    (tmp / "home").mkdir()
    with loopback_fleet(tmp, tmp / "home", ["openssh"]) as found:
        yield found


def _stored_client(db: Path) -> list[str | None]:
    """Return the `ssh` option of every run stored in a database."""
    with sqlite3.connect(db) as con:
        return [json.loads(o).get("ssh") for (o,) in con.execute("SELECT options FROM runs ORDER BY id")]


def _logins(wrapper: Path) -> list[str]:
    """Return the invocations the wrapper logged."""
    log = wrapper.parent / "ssh.log"
    return log.read_text().splitlines() if log.exists() else []


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_measuring_command_connects_through_the_client_given_by_path(
    command: str, wrapper: Path, cli_env: dict[str, str], tmp_path: Path
) -> None:
    db = tmp_path / "runs.db"
    done = sshbench(cli_env, *COMMANDS[command], "--ssh", str(wrapper), "--db", str(db), timeout=240)
    assert done.returncode in (0, 9), done.stderr  # 9: a budget too small for every row, which is not the point here
    logins = _logins(wrapper)
    assert any("sshbench-local" in line.split() for line in logins), logins  # logins to the server, not just `-Q`
    assert _stored_client(db) == [str(wrapper)]
    shown = sshbench(cli_env, "show", "--db", str(db))
    assert f"ssh client: {wrapper} (--ssh)" in shown.stdout, shown.stdout


def test_a_fleet_connects_through_the_client_given_by_path(
    fleet: LoopbackFleet, wrapper: Path, cli_env: dict[str, str], tmp_path: Path
) -> None:
    db = tmp_path / "fleet.db"
    args = ["fleet", "-i", str(fleet.inventory), "--ssh-config", str(fleet.client_config), "--ssh", str(wrapper)]
    done = sshbench(cli_env, *args, "--rounds", "3", "--max-rounds", "3", "--kex", "curve25519-sha256", "--db", str(db))
    assert done.returncode in (0, 4), done.stderr  # 4: the fixture's closed port is not measured
    assert len(_logins(wrapper)) >= 4  # discovery's two profiles and three connection samples at least
    assert set(_stored_client(db)) == {str(wrapper)}
    shown = sshbench(cli_env, "show", "--db", str(db))
    assert f"ssh client {wrapper} (--ssh)" in shown.stdout, shown.stdout


def test_a_path_that_is_no_openssh_client_is_refused_with_nothing_stored(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    fake = tmp_path / "ssh"
    fake.write_text("#!/bin/sh\necho 'not ssh at all' >&2\nexit 1\n")
    fake.chmod(0o755)
    db = tmp_path / "runs.db"
    done = sshbench(cli_env, "latency", "--ssh", str(fake), "--db", str(db))
    assert done.returncode == 2, done.stderr
    assert f"{fake} is not an OpenSSH client" in done.stderr and "--ssh" in done.stderr
    assert "not ssh at all" in done.stderr
    assert not db.exists() or _stored_client(db) == []
