"""`sshbench clients` with the real clients: every installed client against the embedded OpenSSH, Dropbear and
TinySSH, connections and both directions, every transfer's size verified; and what a user sees when a client is
missing or a TARGET and --server are both given."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import CURVE, MLKEM, OPENSSH10_SSH, OPENSSH10_SSHD, sshbench
from sshbench.builds import toolchain_command
from sshbench.errors import ExitCode

pytestmark = pytest.mark.integration
SIZE = 2 * 2**20  # sizes verified, not rates: libssh's SFTP put moves about 1 MB/s here
ARGS = ["clients", "--size", "2M", "--warmup", "0", "--rounds", "1", "--max-rounds", "1", "--no-race", "--json"]
LIBRARIES = {"paramiko": "paramiko", "asyncssh": "asyncssh", "libssh": "pylibsshext", "libssh2": "ssh2"}
THREE_DOWN = ("--size", "4M", "--warmup", "0", "--rounds", "3", "--max-rounds", "3", "--direction", "down")
BUILT = {"gossh": "Go", "russh": "Rust"}  # drivers sshbench builds where the toolchain is
# (client, server) pairs with nothing in common to transfer with: paramiko has no chacha20-poly1305, TinySSH's only
# cipher
NO_CIPHER = {("paramiko", "tinyssh")}  # listed as n/a, not tried
# TinySSH often leaves asyncssh's session request unanswered (5 of 6 tries here, docs/BENCHMARKS.md), and once left
# an upload stalled after 2 MB: such a sample fails, naming why (asyncssh's driver waits 10 s for the session,
# sshbench's sampler stops a transfer that gets no answer)
UNANSWERED = (
    "asyncssh",
    "tinyssh",
    ("the server did not open the session within 3 s", "the server stopped responding"),
)


def installed() -> set[str]:
    """Return the clients installed here (Go's x/crypto/ssh and russh where their toolchain is: sshbench builds their
    drivers)."""
    found = {name for name, module in LIBRARIES.items() if importlib.util.find_spec(module) is not None}
    found |= {name for name, language in BUILT.items() if toolchain_command(language)}
    return found | {"openssh"} | ({"dropbear"} if shutil.which("dbclient") else set())


def measured(doc: dict[str, object]) -> dict[tuple[str, str, str], int]:
    """Return the samples measured per (client, server, group)."""
    out: dict[tuple[str, str, str], int] = {}
    for group, rows in doc["results"].items():  # type: ignore[attr-defined]
        for r in rows:
            if r["summary"]:
                sc = r["scenario"]
                key = (sc["client"], sc.get("server", ""), group)
                out[key] = out.get(key, 0) + r["summary"]["n"]
    return out


@pytest.mark.skipif(os.geteuid() != 0, reason="TinySSH's embedded server needs root here")
def test_every_installed_client_drives_every_server_both_ways_with_sizes_verified(cli_env: dict[str, str]) -> None:
    servers = "local:openssh,local:dropbear,local:tinyssh"
    done = sshbench(cli_env, *ARGS, "--server", servers, "--max-time", "20m", timeout=1800)
    doc = json.loads(done.stdout)
    unmeasured = [
        (r["scenario"]["client"], r["scenario"]["server"])
        for rows in doc["results"].values()
        for r in rows
        if not r["summary"] and not r["failure"]
    ]
    assert set(unmeasured) <= {UNANSWERED[:2]}, unmeasured
    assert done.returncode == (ExitCode.MEASUREMENT_FAILED if unmeasured else 0), done.stderr
    about = doc["run"]["environment"]["clients"]
    assert {n for n, a in about.items() if "skipped" not in a} == installed()
    got = measured(doc)
    for client in installed():
        for server in ("openssh", "dropbear", "tinyssh"):
            library = client in LIBRARIES or client in BUILT
            groups = ["latency", "download", "upload"] + (["latency in-process"] if library else [])
            for group in groups if (client, server) != UNANSWERED[:2] else ():
                assert (got.get((client, server, group), 0) >= 1) is ((client, server) not in NO_CIPHER), (
                    client,
                    server,
                    group,
                )
            sftp = server != "tinyssh" and client != "dropbear" and (client, server) not in NO_CIPHER
            assert (got.get((client, server, "tool download"), 0) >= 1) is sftp, (client, server)
    for entry in doc["samples"]:
        for s in entry["samples"]:
            sc = entry["scenario"]
            if not s["ok"]:
                assert (sc["client"], sc["server"]) == UNANSWERED[:2], (sc, s)
                assert any(words in s["error"] for words in UNANSWERED[2]), (sc, s)
            if sc["kind"] != "latency" and s["ok"]:
                assert s["nbytes"] == SIZE, (sc, s)
    shown = sshbench(cli_env, "show", "last").stdout
    assert "Clients (default: as their users run them" in shown and "in-process" in shown


@pytest.mark.alone  # every row needs its 3 samples (--max-rounds 3): one failed under another test's load once
def test_the_embedded_default_shows_each_client_and_what_it_lacks(cli_env: dict[str, str]) -> None:
    done = sshbench(cli_env, "clients", "--client", "openssh,paramiko,dropbear", *THREE_DOWN, "--max-time", "10m")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Throughput, download (server -> client)" in out and "openssh" in out
    if "paramiko" in installed():
        assert "n/a paramiko with chacha20-poly1305@openssh.com down: unsupported: paramiko has no" in out
        assert "64 MiB window: Transport(default_window_size=64 MiB" in out
    else:
        assert "paramiko: not measured: not installed" in out
    assert "What bounds each client's rate is not judged" in out
    shown = sshbench(cli_env, "recommend", "1").stdout
    if "paramiko" in installed():
        assert "From a Python program, on this host (the fastest Python library measured, per job):" in shown
        assert "reading a command's output (exec channel, server -> client): paramiko" in shown
        picks = json.loads(sshbench(cli_env, "recommend", "1", "--json").stdout)["picks"]
        assert picks and {p["language"] for p in picks} == {"Python"}


def test_a_target_and_server_together_are_refused(cli_env: dict[str, str]) -> None:
    done = sshbench(cli_env, "clients", "somehost", "--server", "local:openssh")
    assert done.returncode == ExitCode.USAGE
    assert "both a TARGET (somehost) and --server were given" in done.stderr
    done = sshbench(cli_env, "clients", "--client", "putty")
    assert done.returncode == ExitCode.USAGE and "unknown client putty" in done.stderr


def test_a_host_of_yours_is_verified_against_your_known_hosts_never_accepted(
    cli_env: dict[str, str], testhost: Path, tmp_path: Path
) -> None:
    built = [name for name, language in BUILT.items() if toolchain_command(language)]
    clients = ",".join(["openssh", "dropbear", "paramiko", *built])
    once = ("--size", "2M", "--warmup", "0", "--rounds", "1", "--max-rounds", "1", "--direction", "down")
    args = ["clients", "testhost", "--ssh-config", str(testhost), "--client", clients, *once]  # that each runs: a round
    args += ["--no-race", "--max-time", "5m", "--json"]
    done = sshbench(cli_env, *args)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    got = measured(doc)
    assert got[("openssh", "", "download")] >= 1 and got[("dropbear", "", "download")] >= 1
    if "paramiko" in installed():
        assert got[("paramiko", "", "download")] >= 1 and got[("paramiko", "", "latency in-process")] >= 1
    for name in built:
        assert got[(name, "", "download")] >= 1 and got[(name, "", "latency in-process")] >= 1
    known = Path(testhost.read_text().split("UserKnownHostsFile ")[1].split()[0])
    rsa_only = "".join(line + "\n" for line in known.read_text().splitlines() if " ssh-rsa " in line)
    known.write_text(rsa_only)  # ssh, paramiko and Go's driver then ask for the RSA key; dbclient asks about ed25519
    done = sshbench(cli_env, *args[:-1])
    assert done.returncode == 0, done.stderr
    assert not [name for name in ("paramiko", *built) if f"n/a {name}:" in done.stdout], done.stdout  # each ran
    assert known.read_text() == rsa_only, "a client wrote to known_hosts"
    assert (
        "n/a dropbear: unsupported: dbclient verifies the host's ssh-ed25519 key, which no known_hosts line"
        in (done.stdout)
        and "sshbench never accepts a key" in done.stdout
    )


@pytest.mark.skipif(not OPENSSH10_SSHD.exists(), reason="no OpenSSH 10: run scripts/openssh10 (scripts/test does)")
def test_clients_kex_measures_ml_kem_for_every_client_that_has_it_and_says_why_not_for_the_rest(
    cli_env: dict[str, str],
) -> None:
    """Issue 37, item 1: against OpenSSH 10, each client pinned to ML-KEM and to curve25519 in the same rounds."""
    wanted = [c for c in ("openssh", "paramiko", "asyncssh", "libssh2", "gossh", "russh") if c in installed()]
    args = ["clients", f"local:sshd={OPENSSH10_SSHD}", "--ssh", str(OPENSSH10_SSH), "--client", ",".join(wanted)]
    args += ["--kex", f"{MLKEM},{CURVE}", "--warmup", "0", "--rounds", "3", "--max-rounds", "3", "--no-race", "--json"]
    done = sshbench(cli_env, *args)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert set(doc["results"]) <= {"latency", "latency in-process"}  # connection times only
    rows = [r for group in doc["results"].values() for r in group]
    got = {(r["scenario"]["client"], r["scenario"]["kex"]): r for r in rows}
    about = doc["run"]["environment"]["clients"]
    for client in wanted:
        offered = about[client].get("kex_offered", "")
        if client != "libssh2":  # libssh2 1.11 has no ML-KEM (its master branch has)
            assert MLKEM in offered, (client, offered)
        mlkem = got[(client, MLKEM)]
        if MLKEM in offered or client == "openssh":
            assert mlkem["summary"]["n"] == 3, (client, mlkem)
        else:
            assert mlkem["summary"] is None and f"has no {MLKEM}" in mlkem["failure"], mlkem
        curve = [r for (c, k), r in got.items() if c == client and k.startswith(CURVE)]
        assert curve and curve[0]["summary"]["n"] == 3, (client, curve)
        assert about[client]["kex_negotiated"].endswith(MLKEM) or client == "libssh2", about[client]
    costs = {(c["scenario"]["client"], c["scenario"]["kex"]) for c in doc["kex_costs"] if c["extra_time_s"]}
    assert ("paramiko", MLKEM) in costs or "paramiko" not in wanted
