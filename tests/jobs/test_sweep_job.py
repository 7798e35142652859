"""A small real sweep against the embedded OpenSSH server, recommendations from it, exports, and emulation."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import database, interrupt_after_samples, own_temp_dir, private_dirs, remote_config, sshbench
from sshbench.errors import ExitCode
from sshbench.ssh.destination import Target
from sshbench.targets.servers.openssh import OpenSSHServer

pytestmark = pytest.mark.integration
GCM, CHACHA, CTR = "aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com", "aes128-ctr"
SMALL_SWEEP = (
    "--cipher",
    f"{GCM},{CHACHA},{CTR}",
    "--mac",
    "umac-64-etm@openssh.com,hmac-sha2-256-etm@openssh.com",
    "--kex",
    "curve25519-sha256,diffie-hellman-group14-sha256",
    "--hostkey",
    "ssh-ed25519,rsa-sha2-512",
    "--rounds",
    "2",
    "--max-rounds",
    "2",
    "--size",
    "8M",
    "--warmup",
    "0",
)


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], dict[str, object]]:
    """Run one small sweep; return the CLI environment and its JSON document."""
    home = tmp_path_factory.mktemp("sweep")
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("SSH_AUTH_SOCK", "SSHBENCH_DB")}
    (home / "home").mkdir()
    env.update(HOME=str(home / "home"), XDG_DATA_HOME=str(home / "data"), COLUMNS="200")
    own = own_temp_dir(env)  # its private directories are counted there
    try:
        done = sshbench(env, "sweep", *SMALL_SWEEP, "--json")
        assert done.returncode == 0, done.stderr
        assert private_dirs(own) == set()
    finally:
        shutil.rmtree(own, ignore_errors=True)
        del env["TMPDIR"]
    return env, json.loads(done.stdout)


def test_sweep_stores_per_dimension_aggregates(swept: tuple[dict[str, str], dict[str, object]]) -> None:
    _, doc = swept
    analysis = doc["analysis"]
    assert isinstance(analysis, dict) and analysis["design"] == "factorised"
    dims = {(d["kind"], d["algorithm"], d["direction"]): d for d in analysis["dimensions"]}
    for cipher in (GCM, CHACHA, CTR):
        for direction in ("down", "up"):
            est = dims[("cipher", cipher, direction)]["estimate"]
            assert est["n"] == 2 and est["low"] <= est["median"] <= est["high"] and est["median"] > 1
    assert ("mac", "hmac-sha2-256-etm@openssh.com", "up") in dims
    assert ("mac", GCM, "up") not in dims  # AEAD ciphers have no MAC dimension
    for kex in ("curve25519-sha256", "diffie-hellman-group14-sha256"):  # every row here was measured
        assert 0.005 < dims[("kex", kex, None)]["estimate"]["median"] < 5
    assert ("hostkey", "rsa-sha2-512", None) in dims
    assert analysis["top"] and analysis["top"][0]["combined"]["median"] > 1
    assert analysis["top"][0]["combined"]["over"] == "both ways" and analysis["directions"] == ["down", "up"]
    rec = analysis["recommendation"]
    assert rec["within_policy"]["cipher"] in (GCM, CHACHA, CTR)
    assert all(reason for _, _, reason in rec["excluded"])
    # throughput transfers pin a quick kex for their untimed handshake
    assert {r["scenario"].get("kex") for r in doc["results"]["download"]} == {"curve25519-sha256"}


def test_sweep_tables_and_recommend(swept: tuple[dict[str, str], dict[str, object]], tmp_path: Path) -> None:
    env, doc = swept
    run_id = str(doc["run"]["id"])  # type: ignore[index]
    shown = sshbench(env, "show", run_id)
    assert shown.returncode == 0, shown.stderr
    for title in ("per key exchange", "per host key", "per cipher", "per MAC", "Top", "Fastest within policy modern"):
        assert title in shown.stdout
    rec = sshbench(env, "recommend", "--policy", "compatible", "--host", "backup-host")
    assert rec.returncode == 0, rec.stderr
    assert "Host backup-host" in rec.stdout and "Fastest within policy compatible" in rec.stdout
    block = rec.stdout.split("Fastest within policy compatible")[1].split("sshd_config:")[0]
    config = tmp_path / "ssh_config"
    config.write_text("\n".join(line for line in block.splitlines() if not line.startswith("  ")) + "\n")
    parsed = subprocess.run(["ssh", "-G", "-F", str(config), "backup-host"], capture_output=True, text=True)
    assert parsed.returncode == 0, parsed.stderr
    assert "ciphers " in parsed.stdout
    policy = tmp_path / "p.toml"
    policy.write_text(f'base = "any"\n[deny.cipher]\n"{GCM}" = "not on our FIPS list"\n')
    rec = sshbench(env, "recommend", run_id, "--policy", str(policy), "--json")
    assert rec.returncode == 0, rec.stderr
    data = json.loads(rec.stdout)["recommendation"]
    assert data["within_policy"]["cipher"] != GCM
    assert ["cipher", GCM, "denied by policy file p.toml: not on our FIPS list"] in data["excluded"]


def test_shell_csv_export(swept: tuple[dict[str, str], dict[str, object]], tmp_path: Path) -> None:
    env, doc = swept
    out = tmp_path / "csv"
    done = sshbench(env, "export", str(doc["run"]["id"]), "--format", "shell-csv", "-o", str(out))  # type: ignore[index]
    assert done.returncode == 0, done.stderr
    names = sorted(p.name for p in out.iterdir())
    assert names == ["cipher-receive.csv", "cipher-send.csv", "kex.csv", "mac-receive.csv", "mac-send.csv"]
    rows = (out / "cipher-send.csv").read_text().splitlines()
    assert rows[0] == "algorithm,time" and len(rows) == 4
    assert all(float(r.split(",")[1]) > 0 for r in rows[1:])


def test_recommend_and_policy_errors(cli_env: dict[str, str], tmp_path: Path) -> None:
    done = sshbench(cli_env, "recommend")
    assert done.returncode == ExitCode.USAGE and "sshbench sweep" in done.stderr
    done = sshbench(cli_env, "sweep", "--policy", "paranoid")
    assert done.returncode == ExitCode.USAGE and "post-quantum" in done.stderr
    assert "Traceback" not in done.stderr


def test_emulation_is_recorded_with_evidence(cli_env: dict[str, str]) -> None:
    args = ("--cipher", GCM, "--rounds", "1", "--max-rounds", "1", "--warmup", "0", "--size", "16M")
    done = sshbench(cli_env, "throughput", *args, "--emulate", "no-aesni", "--json")
    assert done.returncode == 0, done.stderr
    emulation = json.loads(done.stdout)["run"]["environment"]["emulation"]
    assert emulation["variables"] == {"OPENSSL_ia32cap": "~0x200000200000000:~0x0"}
    assert emulation["applies_to"] == ["ssh client", "embedded OpenSSH server"]
    evidence = emulation["evidence"]
    assert evidence["native_MBps"] > 3 * evidence["emulated_MBps"] > 0  # AES-NI masked: GCM much slower
    shown = sshbench(cli_env, "show", "1")
    assert "emulation: no-aesni" in shown.stdout


def test_interrupted_sweep_resumes_and_stores_its_analysis(cli_env: dict[str, str], tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    args = [*SMALL_SWEEP, "--db", str(db)]
    args[args.index("--rounds") + 1] = args[args.index("--max-rounds") + 1] = "4"
    returncode, err = interrupt_after_samples(cli_env, ["sweep", *args], db, 12)
    assert returncode == ExitCode.INTERRUPTED, err
    done = sshbench(cli_env, "sweep", "--resume", "1", "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["run"]["status"] == "complete" and doc["analysis"]["recommendation"]["within_policy"]


def test_items_1_and_2_a_host_with_one_known_key_and_one_direction(
    cli_env: dict[str, str], tmp_path: Path, embedded: tuple[OpenSSHServer, Target]
) -> None:
    """Issue 21, items 1 and 2: against a host whose known_hosts holds only its ed25519 key, the rsa and ecdsa rows
    failed ("Host key verification failed."), the console and the report showed only ssh-ed25519, and the verdict was
    "your current host key ssh-ed25519 is the quickest: keep it"; with --direction down the output said "both ways =
    harmonic mean of down and up" with every upload cell `-`."""
    server, _ = embedded
    assert server.workdir is not None
    config = remote_config(tmp_path, server, server.workdir / "client_ed25519", known_hosts=True)
    known = tmp_path / "known_hosts"
    known.write_text("".join(line + "\n" for line in known.read_text().splitlines() if "ssh-ed25519" in line))
    args = (
        "sweep",
        "testhost",
        "--ssh-config",
        str(config),
        "--direction",
        "down",
        "--cipher",
        f"{GCM},{CHACHA}",
        "--kex",
        "curve25519-sha256",
        "--hostkey",
        "ssh-ed25519,rsa-sha2-512,ecdsa-sha2-nistp256",
        "--rounds",
        "3",
        "--max-rounds",
        "3",
        "--size",
        "8M",
        "--warmup",
        "0",
    )
    done = sshbench(cli_env, *args)
    assert done.returncode == 0, done.stderr  # issue 34, item 8: a key the user lacks is skipped, not failed
    out = done.stdout
    for key, kind in (("rsa-sha2-512", "rsa"), ("ecdsa-sha2-nistp256", "ecdsa")):
        said = f"skipped {key}: your known_hosts holds no {key} key for [127.0.0.1]:{server.port}"
        assert said in out, out  # listed where host keys are summarised
        assert f"ssh-keyscan -t {kind} -p {server.port} 127.0.0.1 | ssh-keygen -lf -" in out
    assert "Host key verification failed" not in out
    assert "is the quickest: keep it" not in out and "keep it (no HostKeyAlgorithms line)" not in out
    assert "not measured: rsa-sha2-512 (skipped: your known_hosts holds no rsa-sha2-512 key" in out
    assert "both ways" not in out and "download only" in out and "only download was measured" in out
    report = tmp_path / "report.html"
    assert sshbench(cli_env, "report", "--db", str(database(cli_env, args)), "-o", str(report)).returncode == 0
    html = report.read_text()
    assert "Host testhost" in html and "your known_hosts holds no rsa-sha2-512 key" in html and "both ways" not in html
