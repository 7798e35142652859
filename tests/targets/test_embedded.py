"""The embedded OpenSSH server: a private 0700 directory, removed with every process it started; no shell rc files."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import sshbench_processes
from sshbench.ssh.destination import Target
from sshbench.targets.servers import openssh
from sshbench.targets.servers.openssh import OpenSSHServer

pytestmark = pytest.mark.integration


@pytest.mark.alone  # looks for any embedded server left on the machine
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


def test_nothing_of_the_users_account_runs_in_a_session(tmp_path: Path) -> None:
    """Issue 21, item 10: the embedded sshd ran the user's ~/.ssh/rc (a `sleep 0.2` there turned a 48 ms session
    phase into 254 ms, silently). The user's real ~/.ssh stays untouched: sshd, in a private mount namespace, sees a
    throw-away directory bound over it, whose rc and environment would leave a mark if they ran."""
    home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    if os.geteuid() != 0:
        pytest.skip("binding a directory over ~/.ssh needs root (a mount namespace)")
    fake = tmp_path / "dot-ssh"
    fake.mkdir()
    marker = tmp_path / "rc-ran"
    (fake / "rc").write_text(f"touch {marker}\n")
    (fake / "environment").write_text("SSHBENCH_LEAK=yes\n")
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    argv = ["unshare", "-m", "--propagation", "private", sys.executable, str(probe), str(home), str(fake)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert "leak=" in done.stdout and "leak=yes" not in done.stdout
    assert not marker.exists(), "sshd ran ~/.ssh/rc"
    assert "PermitUserRC no" in done.stdout and "PermitUserEnvironment no" in done.stdout


# Run inside the mount namespace: with Python and sshbench loaded, put the fake ~/.ssh where sshd will look (bound
# over an existing one, or in a private tmpfs over the home when there is none), start an embedded server, run one
# command and print what the session saw. Nothing outside the namespace changes.
PROBE = """
import subprocess, sys
from pathlib import Path
from sshbench.targets.servers.openssh import OpenSSHServer
import sshbench.targets.servers.base, sshbench.leases, sshbench.targets.limits.cgroups, psutil
home, fake = Path(sys.argv[1]), sys.argv[2]
if not (home / ".ssh").is_dir():
    subprocess.run(["mount", "-t", "tmpfs", "none", str(home)], check=True)
    (home / ".ssh").mkdir()
subprocess.run(["mount", "--bind", fake, str(home / ".ssh")], check=True)
server = OpenSSHServer()
with server as target:
    print((server.workdir / "sshd_config").read_text())
    argv = target.argv("ssh", [], "echo leak=$SSHBENCH_LEAK")
    print(subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout)
"""


def test_system_startup_files_that_run_anyway_are_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """/etc/ssh/sshrc runs whatever sshd_config says: it is reported with the run's server settings."""
    rc = tmp_path / "sshrc"
    rc.write_text("true\n")
    monkeypatch.setattr(openssh, "SYSTEM_RC", rc)
    assert any("sshrc exists: sshd runs it in every session" in s for s in openssh.system_startup_files())
    monkeypatch.setattr(openssh, "SYSTEM_RC", tmp_path / "none")
    assert not any("sshrc" in s for s in openssh.system_startup_files())
