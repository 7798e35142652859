"""The embedded OpenSSH server: a private 0700 directory, removed with every process it started; no shell rc files."""

from __future__ import annotations

import subprocess

import pytest

from conftest import sshbench_processes
from sshbench.ssh.destination import Target
from sshbench.targets.openssh import OpenSSHServer

pytestmark = pytest.mark.integration


def test_embedded_server_teardown_removes_everything() -> None:
    server = OpenSSHServer()
    with server as target:
        workdir, pid = server.workdir, server.pid
        assert workdir is not None and (workdir / "sshd_config").exists() and pid is not None
        assert oct(workdir.stat().st_mode & 0o777) == "0o700"
        assert target.port > 0 and target.host == "127.0.0.1"
    assert not workdir.exists()
    assert all(p != pid for p, _ in sshbench_processes())


def test_shell_startup_files_are_not_charged(embedded: tuple[OpenSSHServer, Target]) -> None:
    server, target = embedded
    done = subprocess.run(target.argv("ssh", [], "echo $HOME"), capture_output=True, text=True, timeout=30)
    assert done.stdout.strip() == f"{server.workdir}/home"  # empty HOME: no ~/.bashrc to source
