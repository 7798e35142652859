"""The Go server (golang.org/x/crypto/ssh with pkg/sftp) as an embedded target, built from its pinned sources: it
negotiates ML-KEM with OpenSSH 10's client, carries commands both ways with exit statuses, serves SFTP, and is
described as it is (its banner with the library's version, a fixed 2 MiB window, no `openssl speed` ceiling for its
own crypto)."""

from __future__ import annotations

import json

import pytest

from conftest import CURVE, MLKEM, sshbench
from conftest import OPENSSH10_SSH as SSH
from sshbench.builds import toolchain_command

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(toolchain_command("Go") is None, reason="no Go toolchain: sshbench builds the Go server"),
]
ONCE = ["--warmup", "1", "--rounds", "3", "--max-rounds", "3", "--no-race", "--json"]


def test_the_go_server_measures_ml_kem_and_its_cost_against_curve25519(cli_env: dict[str, str]) -> None:
    client = ["--ssh", str(SSH)] if SSH.exists() else []  # OpenSSH 10 (scripts/openssh10): ML-KEM on both sides
    kexes = f"{MLKEM},{CURVE}" if client else f"ecdh-sha2-nistp256,{CURVE}"
    done = sshbench(cli_env, "latency", "local:gossh", *client, "--kex", kexes, "--hostkey", "ssh-ed25519", *ONCE)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["discovery"]["server"]["banner"].startswith("SSH-2.0-Go_x/crypto_v0.")
    assert MLKEM in doc["discovery"]["server"]["kex"]  # x/crypto offers ML-KEM as a server since v0.38
    settings = " ".join(doc["run"]["environment"]["server_settings"])
    assert "channel window fixed at 2 MiB" in settings and "Go's own crypto" in settings
    costs = {c["scenario"]["kex"]: c for c in doc["kex_costs"]}
    assert set(costs) == set(kexes.split(","))
    for kex, cost in costs.items():
        assert cost["server_cpu_s"] > 0 and cost["wire"]["sent"] > 0 and cost["wire"]["received"] > 0, kex
    first = kexes.split(",")[0]
    assert costs[first]["extra_time_s"]["n"] == 3 and costs[first]["extra_bytes"] is not None


def test_the_go_server_moves_bytes_both_ways_and_serves_sftp_without_an_openssl_ceiling(
    cli_env: dict[str, str],
) -> None:
    args = ["tools", "local:gossh", "--tool", "sftp", "--cipher", "aes128-gcm@openssh.com", "--size", "8M", *ONCE]
    done = sshbench(cli_env, *args)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    rows = [r for group in doc["results"].values() for r in group]
    sftp = {r["scenario"]["direction"]: r for r in rows if r["scenario"].get("tool") == "sftp"}
    assert set(sftp) == {"down", "up"} and all(r["summary"]["n"] == 3 for r in sftp.values()), sftp
    assert not doc["run"]["environment"].get("crypto_ceilings_MBps")  # Go's own crypto: openssl speed says nothing
