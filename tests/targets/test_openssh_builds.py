"""OpenSSH builds given by path: the algorithm lists of their own version (the ssh beside them, else what `sshd -t`
accepts), the lines a 9.8+ sshd needs, and process roles of both layouts (`sshd:` before 9.8, `sshd-session` and
`sshd-auth` since)."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from sshbench.targets.servers import openssh
from sshbench.targets.servers.tools import Tools, sibling

needs_sshd = pytest.mark.skipif(shutil.which("sshd", path="/usr/sbin:/usr/bin") is None, reason="no sshd here")


@dataclass
class _Proc:
    """A process as psutil shows it: a PID and a command line (its title)."""

    pid: int
    title: str

    def cmdline(self) -> list[str]:
        """Return the title as sshd sets it."""
        return self.title.split()


@pytest.mark.parametrize(
    ("title", "role"),
    [
        ("sshd: alice [priv]", "monitor"),
        ("sshd: alice [net]", "pre-auth"),
        ("sshd: alice [preauth]", "pre-auth"),
        ("sshd: alice@notty", "session"),
        ("sshd-session: alice [priv]", "monitor"),
        ("sshd-auth: alice [net]", "pre-auth"),
        ("sshd-session: alice [net]", "pre-auth"),
        ("sshd-session: alice@notty", "session"),
        ("sh -c true", "command"),
    ],
)
def test_process_roles_read_both_layouts(title: str, role: str) -> None:
    server = openssh.OpenSSHServer()
    assert server.role(_Proc(12345, title)) == role  # type: ignore[arg-type]


def test_the_ssh_and_keygen_of_a_build_are_found_beside_its_sshd(tmp_path: Path) -> None:
    prefix = tmp_path / "usr"
    for path in (prefix / "sbin" / "sshd", prefix / "bin" / "ssh", prefix / "bin" / "ssh-keygen"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("#!/bin/sh\n")
        path.chmod(0o755)
    tools = Tools.find(sshd=str(prefix / "sbin" / "sshd"))
    assert tools.ssh == str(prefix / "bin" / "ssh") and tools.keygen == str(prefix / "bin" / "ssh-keygen")
    alone = tmp_path / "alone" / "sshd"
    alone.parent.mkdir()
    shutil.copy(prefix / "sbin" / "sshd", alone)
    assert sibling(str(alone), "ssh") is None and Tools.find(sshd=str(alone)).ssh == ""


def _probe_config(tmp_path: Path) -> Path:
    """Return a config `sshd -t` accepts: a host key of its own."""
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "hk")], check=True)
    config = tmp_path / "config"
    config.write_text(f"HostKey {tmp_path / 'hk'}\nPidFile {tmp_path / 'pid'}\n")
    return config


@needs_sshd
def test_an_sshd_alone_gets_the_algorithms_sshd_t_accepts(tmp_path: Path) -> None:
    sshd = str(shutil.which("sshd", path="/usr/sbin:/usr/bin"))
    config = _probe_config(tmp_path)
    lines = dict(line.split(" ", 1) for line in openssh._probed_lines(sshd, config))
    assert set(lines) == {"Ciphers", "MACs", "KexAlgorithms", "HostKeyAlgorithms"}
    assert "aes128-cbc" in lines["Ciphers"].split(",")  # what this build supports, CBC included
    own = openssh._algorithm_lines(str(shutil.which("ssh")))  # this machine's ssh is of the same build
    assert set(lines["KexAlgorithms"].split(",")) == set(dict(x.split(" ", 1) for x in own)["KexAlgorithms"].split(","))
    assert not openssh.accepts(sshd, config, ["KexAlgorithms=no-such-kex"])


@needs_sshd
def test_a_build_before_9_8_needs_no_helper_or_penalty_lines(tmp_path: Path) -> None:
    sshd = str(shutil.which("sshd", path="/usr/sbin:/usr/bin"))
    version = subprocess.run([str(shutil.which("ssh")), "-V"], capture_output=True, text=True).stderr
    if not version.startswith("OpenSSH_9.2"):
        pytest.skip(f"this checks the system's OpenSSH 9.2; here: {version.strip()}")
    assert openssh.version_lines(sshd, _probe_config(tmp_path)) == []
