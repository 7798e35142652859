"""The single-target job end to end against real OpenSSH servers on 127.0.0.1 (no mocks of ssh): run,
interrupt and resume, a remote target through ssh_config, login failures."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import eventually, interrupt_after_samples, private_dirs, remote_config, sshbench, sshbench_processes
from sshbench.errors import ExitCode
from sshbench.ssh.destination import Target
from sshbench.targets.servers.openssh import OpenSSHServer

pytestmark = pytest.mark.integration
SMALL = ["--size", "8M", "--warmup", "0", "--rounds", "3", "--max-rounds", "3"]
LATENCY_SMALL = ["--warmup", "0", "--rounds", "3", "--max-rounds", "3"]
ONE_KEX = ["--kex", "curve25519-sha256", "--hostkey", "ssh-ed25519"]


def test_algos_lists_both_sides_profiles_and_ratings(cli_env: dict[str, str]) -> None:
    done = sshbench(cli_env, "algos", "--json")
    assert done.returncode == 0, done.stderr
    disc = json.loads(done.stdout)["discovery"]
    assert "aes128-ctr" in disc["client"]["cipher"] and "aes128-ctr" in disc["server"]["cipher"]
    assert disc["server"]["banner"].startswith("SSH-2.0-OpenSSH")
    profiles = {p["name"]: p for p in disc["profiles"]}
    assert profiles["strict"]["negotiated"]["cipher"] == "chacha20-poly1305@openssh.com"
    assert profiles["strict"]["negotiated"]["kex"] == "curve25519-sha256"
    assert profiles["default"]["negotiated"]["kex"]
    assert disc["ratings"]["kex"]["curve25519-sha256"]["rating"] == "ok, not post-quantum"
    assert disc["ratings"]["cipher"]["3des-cbc"]["rating"] == "fail"


def _failed_samples(stdout: str) -> str:
    """Return the failed samples of a run's --json document, for an assertion's message."""
    try:
        doc = json.loads(stdout)
    except ValueError:
        return ""
    failed = [
        (st["scenario"], s["round"], s["error"]) for st in doc.get("samples", []) for s in st["samples"] if not s["ok"]
    ]
    return f"\nfailed samples: {failed}"


def test_run_measures_latency_and_both_directions(cli_env: dict[str, str], tmp_path: Path) -> None:
    ciphers = "aes128-ctr,aes128-gcm@openssh.com"
    done = sshbench(cli_env, "run", "--json", *ONE_KEX, "--cipher", ciphers, *SMALL)
    assert done.returncode == 0, done.stderr + _failed_samples(done.stdout)
    doc = json.loads(done.stdout)
    assert doc["run"]["status"] == "complete"
    latency = doc["results"]["latency"][0]
    assert 0.001 < latency["summary"]["median"] < 10
    assert set(latency["phases_median_s"]) == {"startup", "tcp", "version", "kex", "auth", "session"}
    for direction in ("download", "upload"):
        rows = doc["results"][direction]
        assert {r["scenario"]["cipher"] for r in rows} == set(ciphers.split(","))
        assert all(r["summary"]["median"] > 1 for r in rows)  # MB/s
        ctr = next(r for r in rows if r["scenario"]["cipher"] == "aes128-ctr")
        assert ctr["scenario"]["mac"] == "umac-64-etm@openssh.com"  # the client's default MAC
        gcm = next(r for r in rows if r["scenario"]["cipher"] == "aes128-gcm@openssh.com")
        assert "mac" not in gcm["scenario"]  # AEAD: no MAC dimension
    samples = [s for sc in doc["samples"] for s in sc["samples"]]
    assert samples and all(s["ok"] for s in samples)
    assert all(s["nbytes"] == 8 * 2**20 for s in samples if s["nbytes"])
    run_id = doc["run"]["id"]
    # Storage round trip: the same samples come back through show/export.
    csv_text = sshbench(cli_env, "export", str(run_id), "--format", "csv").stdout
    assert len(csv_text.strip().splitlines()) == 1 + len(samples)
    shown = sshbench(cli_env, "show", str(run_id))
    assert shown.returncode == 0 and "Fastest here" in shown.stdout
    assert "aes128-gcm@openssh.com" in shown.stdout
    history = json.loads(sshbench(cli_env, "history", "--json").stdout)
    assert history[0]["id"] == run_id and history[0]["samples"] == len(samples)
    env = doc["run"]["environment"]
    assert env["openssh_client"].startswith("OpenSSH") and "aes" in env["cpu_flags"]


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_cleans_up_and_resume_completes(
    cli_env: dict[str, str], tmp_path: Path, own_tmp: Path, sig: signal.Signals, code: int
) -> None:
    db = tmp_path / "runs.db"  # its servers and directories are counted in its own temp directory
    before_dirs, before_procs = private_dirs(own_tmp), sshbench_processes(own_tmp)
    args = ["run", "--db", str(db), *ONE_KEX, "--cipher", "aes128-ctr", "--size", "32M", "--rounds", "4"]
    args += ["--max-rounds", "4"]  # every row 4 times: the resume is whole at n = 4, not once the noise allows
    returncode, err = interrupt_after_samples(cli_env, args, db, 3, sig)
    assert returncode == code, err
    assert "--resume 1" in err
    assert eventually(lambda: sshbench_processes(own_tmp) - before_procs == set())
    assert eventually(lambda: private_dirs(own_tmp) - before_dirs == set())
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT status FROM runs WHERE id=1").fetchone()[0] == "interrupted"
        kept = con.execute("SELECT id, value FROM samples ORDER BY id").fetchall()
    assert len(kept) >= 3
    done = sshbench(cli_env, "run", "--db", str(db), "--resume", "1", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["run"]["status"] == "complete"
    with sqlite3.connect(db) as con:
        after = con.execute("SELECT id, value FROM samples ORDER BY id").fetchall()
    assert after[: len(kept)] == kept and len(after) > len(kept)
    assert all(r["summary"]["n"] >= 4 for group in doc["results"].values() for r in group)


def test_remote_target_through_ssh_config(cli_env: dict[str, str], testhost: Path) -> None:
    """A host of yours through your ssh config; its warm-up login goes through the counting relay (ssh's
    ProxyCommand, your host key checked as ever) and carries the key exchange's bytes, the timed ones do not."""
    rounds = ["--rounds", "3", "--max-rounds", "3"]
    done = sshbench(cli_env, "latency", "testhost", "--ssh-config", str(testhost), "--json", *ONE_KEX, *rounds)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["results"]["latency"][0]["summary"]["n"] == 3
    assert doc["discovery"]["server"]["banner"].startswith("SSH-2.0-OpenSSH")
    samples = doc["samples"][0]["samples"]
    counted = [s["wire"] for s in samples if s["warmup"]]
    assert [s["wire"] for s in samples if not s["warmup"]] == [None] * 3
    assert len(counted) == 1 and counted[0]["round_trips"] >= 2, counted
    # curve25519: the client's 32-byte share and the server's reply with an ed25519 key and signature, with both
    # KEXINITs and version lines: about 1 KiB and 1.8 KiB here (929/1825 B measured with OpenSSH 10, 2026-11)
    assert 600 < counted[0]["kex_sent"] < 2500 and 1000 < counted[0]["kex_received"] < 4000, counted
    assert doc["kex_costs"][0]["wire"]["sent"] == counted[0]["kex_sent"]


def test_a_host_key_your_known_hosts_lacks_is_a_row_skipped_with_how_to_check_it(
    cli_env: dict[str, str], testhost: Path
) -> None:
    """Issue 34, item 8: the ecdsa and rsa rows read "failed ... Host key verification failed." although the server
    is fine: the user's known_hosts holds only its ed25519 key, and sshbench never accepts a key."""
    known = testhost.parent / "known_hosts"
    known.write_text("".join(line + "\n" for line in known.read_text().splitlines() if "ssh-ed25519" in line))
    hostkeys = ["--hostkey", "ssh-ed25519,ecdsa-sha2-nistp256"]
    done = sshbench(
        cli_env,
        "latency",
        "testhost",
        "--ssh-config",
        str(testhost),
        "--kex",
        "curve25519-sha256",
        *hostkeys,
        *LATENCY_SMALL,
    )
    assert done.returncode == 0, done.stderr
    port = next(line.split()[1] for line in testhost.read_text().splitlines() if line.strip().startswith("Port"))
    assert "skipped curve25519-sha256 / ecdsa-sha2-nistp256: your known_hosts holds no ecdsa-sha2-nistp256 key" in (
        done.stdout.replace("\n", " ")
    )
    assert f"ssh-keyscan -t ecdsa -p {port} 127.0.0.1 | ssh-keygen -lf -" in done.stdout
    assert "failed" not in done.stdout and "Host key verification failed" not in done.stdout
    assert ", complete)" in sshbench(cli_env, "show", "last").stdout.splitlines()[0]


def test_a_remote_transfer_carries_the_kernels_evidence_of_its_socket(cli_env: dict[str, str], testhost: Path) -> None:
    done = sshbench(
        cli_env,
        "throughput",
        "testhost",
        "--ssh-config",
        str(testhost),
        "--json",
        "--cipher",
        "aes128-gcm@openssh.com",
        *SMALL,
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    for group in ("download", "upload"):
        row = doc["results"][group][0]
        tcp = row["tcp"]  # its sockets are not ours to read: its session reports its CPU (and, by ss, its socket)
        assert {"client", "remote_session"} <= set(tcp) <= {"client", "remote_session", "server"}, tcp
        assert tcp["remote_session"]["cpu"] is not None and tcp["client"]["rtt_ms"] > 0 and tcp["client"]["cc"]
        assert "server" not in tcp or tcp["server"]["read_by"] == "ss over the login"  # 2 polls in a sample at least
        evidence = row["bound"]["evidence"]  # the kernel's call, as the bound or kept beside another one
        side = evidence["kernel"]["evidence"]["side"] if "kernel" in evidence else evidence["side"]
        sender = group == "upload"  # a download's sender socket (ss's polls) is recorded, not judged
        assert side.startswith("sender" if sender else "receiver"), evidence


def test_auth_failure_and_unknown_host_key(
    cli_env: dict[str, str], tmp_path: Path, embedded: tuple[OpenSSHServer, Target]
) -> None:
    server, _ = embedded
    stranger = tmp_path / "stranger"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)], check=True)
    config = remote_config(tmp_path, server, stranger, known_hosts=True)
    done = sshbench(cli_env, "latency", "testhost", "--ssh-config", str(config), *LATENCY_SMALL)
    assert done.returncode == ExitCode.AUTH_FAILED, done.stderr
    assert "Permission denied" in done.stderr and "ssh-copy-id" in done.stderr
    config = remote_config(tmp_path, server, stranger, known_hosts=False)
    done = sshbench(cli_env, "latency", "testhost", "--ssh-config", str(config), *LATENCY_SMALL)
    assert done.returncode == ExitCode.CONNECTION_FAILED
    assert "Host key verification failed" in done.stderr and "never skips" in done.stderr
