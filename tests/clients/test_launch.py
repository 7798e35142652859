"""How clients other than ssh are found, reach a host and verify it: argv, known_hosts, ssh -G (no server)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sshbench.clients.launch import (
    Address,
    Detected,
    Launcher,
    dbclient_home,
    dbclient_problem,
    known_keys,
    resolve,
    verifiable,
)
from sshbench.clienttypes import NAMES, client_type, parse_clients
from sshbench.errors import SshbenchError
from sshbench.measure.clientside import transfer_problem
from sshbench.model import IN_PROCESS, Direction, Kind, Scenario
from sshbench.ssh.destination import Target
from sshbench.ssh.timed import Finished

GCM, CTR, MAC = "aes128-gcm@openssh.com", "aes128-ctr", "hmac-sha2-256"


def known_hosts(tmp_path: Path, hashed: bool = False) -> Path:
    """Write a known_hosts file holding a fresh ed25519 key for [127.0.0.1]:2222 (hashed with `ssh-keygen -H`)."""
    key = tmp_path / "hostkey"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    path = tmp_path / "known_hosts"
    path.write_text(
        f"[127.0.0.1]:2222 {key.with_suffix('.pub').read_text().split(' ', 2)[0]} "
        f"{key.with_suffix('.pub').read_text().split()[1]}\n"
    )
    if hashed:
        subprocess.run(["ssh-keygen", "-q", "-H", "-f", str(path)], check=True, capture_output=True)
    return path


def test_parse_clients_takes_all_or_names_and_refuses_others() -> None:
    assert parse_clients("all") == NAMES
    assert parse_clients("paramiko, openssh,paramiko") == ("paramiko", "openssh")
    with pytest.raises(SshbenchError, match="unknown client putty") as err:
        parse_clients("putty")
    assert "openssh,dropbear,paramiko,asyncssh,libssh,libssh2,gossh" in (err.value.fix or "")


def test_a_driver_gets_the_address_the_pinned_algorithms_and_the_tuned_flag() -> None:
    driver = ("/venv/bin/python", "-m", "sshbench.clients.drivers.paramiko_driver")
    found = Detected(client_type("paramiko"), "paramiko 5.1.0", (GCM, CTR), (MAC,), path=driver[0])
    launcher = Launcher(found, Address("10.0.0.1", 2222, "me", ("/k",), ("/kh",), False))
    sc = Scenario(Kind.THROUGHPUT, client="paramiko", mode="tuned", cipher=CTR, mac=MAC, direction=Direction.DOWN)
    where = ["--host", "10.0.0.1", "--port", "2222", "--user", "me", "--key", "/k", "--known-hosts", "/kh"]
    pinned = ["--cipher", CTR, "--mac", MAC, "--tuned"]
    assert launcher.argv(sc, "exec", "head -c 1 /dev/zero") == [*driver, *where, *pinned, "exec", "head -c 1 /dev/zero"]
    assert launcher.mark == "sshbench-driver: command sent"
    latency = Scenario(Kind.LATENCY, client="paramiko", mode=IN_PROCESS)
    assert launcher.argv(latency, "connect", "2")[-2:] == ["connect", "2"]


def test_the_go_driver_is_its_own_command_with_the_same_options() -> None:
    built = "/cache/sshbench/drivers/gossh-0123/sshbench-gossh"
    found = Detected(client_type("gossh"), "x/crypto/ssh", (GCM,), (MAC,), path=built)
    launcher = Launcher(found, Address("127.0.0.1", 2222, "me", ("/k",), ("/kh",), False))
    sc = Scenario(Kind.TOOL, tool="sftp", client="gossh", mode="tuned", cipher=GCM, direction=Direction.UP)
    where = ["--host", "127.0.0.1", "--port", "2222", "--user", "me", "--key", "/k", "--known-hosts", "/kh"]
    assert launcher.argv(sc, "put", "/l", "/r") == [built, *where, "--cipher", GCM, "--tuned", "put", "/l", "/r"]
    assert launcher.mark == "sshbench-driver: command sent"


def test_dbclient_runs_the_command_with_its_own_flags_and_no_mark() -> None:
    found = Detected(client_type("dropbear"), "Dropbear v2022.83", (CTR,), (MAC,), path="/usr/bin/dbclient")
    launcher = Launcher(found, Address("h", 22, "me", ("/k",), (), False), keys=("/home/id0",))
    sc = Scenario(Kind.THROUGHPUT, client="dropbear", mode="tuned", cipher=CTR, mac=MAC, direction=Direction.UP)
    assert launcher.argv(sc, "exec", "wc -c") == [
        "/usr/bin/dbclient",
        "-T",
        "-p",
        "22",
        "-l",
        "me",
        "-i",
        "/home/id0",
        "-c",
        CTR,
        "-m",
        MAC,
        "-W",
        "2097152",
        "h",
        "wc -c",
    ]
    assert launcher.argv(Scenario(Kind.LATENCY, client="dropbear"), "connect", "1")[-1] == "true"
    assert launcher.mark is None


@pytest.mark.parametrize("hashed", [False, True])
def test_known_keys_finds_a_hosts_line_also_when_hashed(tmp_path: Path, hashed: bool) -> None:
    path = known_hosts(tmp_path, hashed)
    address = Address("127.0.0.1", 2222, "me", ("/k",), (str(path),), False)
    assert [kind for kind, _ in known_keys(address)] == ["ssh-ed25519"]
    assert verifiable(address, client_type("paramiko")) is None
    other_port = Address("127.0.0.1", 2223, "me", ("/k",), (str(path),), False)
    assert "never accepts a host key" in (verifiable(other_port, client_type("paramiko")) or "")


def test_a_client_is_not_run_where_it_could_not_verify_or_log_in(tmp_path: Path) -> None:
    path = str(known_hosts(tmp_path))
    paramiko = client_type("paramiko")
    assert "ProxyJump" in (verifiable(Address("h", 22, "me", ("/k",), (path,), True), paramiko) or "")
    assert "no IdentityFile" in (verifiable(Address("h", 22, "me", (), (path,), False), paramiko) or "")
    assert verifiable(Address("h", 22, "me", (), (), True), client_type("openssh")) is None


def test_dbclient_gets_a_private_home_with_the_hosts_lines_by_name_and_a_converted_key(tmp_path: Path) -> None:
    key = tmp_path / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    address = Address("127.0.0.1", 2222, "me", (str(key),), (str(known_hosts(tmp_path)),), False)
    with dbclient_home(address) as (home, keys):
        line = (home / ".ssh" / "known_hosts").read_text()
        assert line.startswith("127.0.0.1 ssh-ed25519 ") and (home.stat().st_mode & 0o777) == 0o700
        assert len(keys) == 1 and Path(keys[0]).parent == home
        assert dbclient_problem(address, ("ssh-ed25519", "rsa-sha2-512"), home) is None
        assert "ecdsa-sha2-nistp256" in (dbclient_problem(address, ("ecdsa-sha2-nistp256",), home) or "")
    assert not home.exists()


def test_resolve_reads_address_keys_and_known_hosts_from_ssh_G(tmp_path: Path) -> None:
    key, kh = tmp_path / "id", known_hosts(tmp_path)
    key.write_text("not a key, but a file")
    config = tmp_path / "config"
    config.write_text(
        f"Host box\n  HostName 127.0.0.1\n  Port 2222\n  User tester\n  IdentityFile {key}\n"
        f"  IdentityFile {tmp_path}/missing\n  UserKnownHostsFile {kh} {tmp_path}/none\n"
    )
    target = Target("box", "box", ("-F", str(config)), "box", 22, embedded=False)
    address = resolve("ssh", target)
    assert address == Address("127.0.0.1", 2222, "tester", (str(key),), (str(kh),), False)


def finished(returncode: int = 0, lines: tuple[str, ...] = (), stdout: bytes = b"", written: int = 0) -> Finished:
    """Return a finished client process."""
    return Finished(
        ("client",),
        returncode,
        0.0,
        1.0,
        tuple((0.5, t) for t in lines),
        stdout,
        0.1,
        0.0,
        progress=((0.5, 0, 0), (1.0, 0, written)),
    )


def test_a_transfer_is_valid_only_when_every_byte_arrived() -> None:
    assert transfer_problem(finished(lines=("sshbench-driver: received 100",), written=120), True, 100, 60) is None
    assert "says it received 99" in (
        transfer_problem(finished(lines=("sshbench-driver: received 99",), written=99), True, 100, 60) or ""
    )
    assert "wrote 50 of 100" in (transfer_problem(finished(written=50), True, 100, 60) or "")
    assert transfer_problem(finished(stdout=b"100\n"), False, 100, 60) is None
    assert "counted 7 of 100" in (transfer_problem(finished(stdout=b"7\n"), False, 100, 60) or "")
    why = transfer_problem(finished(1, ("sshbench-driver: error: AuthenticationException: denied",)), True, 100, 60)
    assert why == "AuthenticationException: denied"
