"""The servers job: real OpenSSH (9.2 and 10), the Go server, Dropbear and TinySSH side by side on 127.0.0.1, their
versions, CPU and memory per process role, cleanup."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from conftest import (
    NEWEST_SSHD,
    OPENSSH10_SSHD,
    eventually,
    interrupt_after_samples,
    orphan_cgroups,
    private_dirs,
    sshbench,
    stored_samples,
)
from sshbench.builds import toolchain_command
from sshbench.errors import ExitCode
from sshbench.ssh.proc import require_binary

pytestmark = pytest.mark.integration
ALL = ("local:openssh", "local:dropbear", "local:tinyssh")
QUICK = ("--rounds", "1", "--max-rounds", "1", "--warmup", "0", "--size", "16M")
CHACHA = "chacha20-poly1305@openssh.com"
CGROUPS = os.geteuid() == 0  # server CPU needs a cgroup, which needs root here


def server_cpu_ok(value: float | None) -> bool:
    """Server CPU is measured (positive) with cgroups, and honestly missing (None) without."""
    return value is not None and value > 0 if CGROUPS else value is None


def server_processes(root: Path | None = None) -> set[int]:
    """Return PIDs of sshd/dropbear/tcpserver/tinysshd processes running from an sshbench private directory (under
    `root`, a test's own temp directory, when given)."""
    mark = f"{root}/sshbench-" if root is not None else "sshbench-"
    found = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if mark in cmd and any(n in cmd for n in ("sshd", "dropbear", "tcpserver", "tinysshd", "gosshd")):
            found.add(int(pid))
    return found


def test_every_server_side_by_side_with_its_version_and_memory_per_role(cli_env: dict[str, str], own_tmp: Path) -> None:
    newer = (f"local:sshd={OPENSSH10_SSHD}",) if OPENSSH10_SSHD.exists() else ()  # scripts/openssh10 fetches it
    newer += (f"local:sshd={NEWEST_SSHD}",) if NEWEST_SSHD.exists() else ()  # scripts/openssh-build builds it
    go = ("local:gossh",) if toolchain_command("Go") else ()
    before = (server_processes(own_tmp), private_dirs(own_tmp), orphan_cgroups())  # its own, beside other tests
    done = sshbench(cli_env, "servers", *ALL, *newer, *go, "--cipher", CHACHA, *QUICK, "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    info = doc["discovery"]["servers"]
    names = {s.removeprefix("local:") for s in (*ALL, *newer, *go)}
    assert set(info) == names
    banners = {name: server["discovery"]["server"]["banner"] for name, server in info.items()}
    expected = {"openssh": "SSH-2.0-OpenSSH_9.", "gossh": "SSH-2.0-Go_x/crypto_v0.", "dropbear": "SSH-2.0-dropbear_"}
    expected |= {"tinyssh": "SSH-2.0-tinyssh_"} | {n.removeprefix("local:"): "SSH-2.0-OpenSSH_10." for n in newer}
    assert all(banners[n].startswith(v) for n, v in expected.items()), banners
    for name, server in info.items():
        profiles = {p["name"]: p for p in server["discovery"]["profiles"]}
        assert profiles["default"]["negotiated"]["cipher"], name
        strict = profiles["strict"]["negotiated"]
        assert (strict["kex"], strict["hostkey"], strict["cipher"], strict["mac"]) == (
            "curve25519-sha256",
            "ssh-ed25519",
            CHACHA,
            None,
        ), name
        assert server["server_settings"], name
    assert "-W 2097152" in " ".join(info["dropbear"]["server_settings"])
    latency = doc["results"]["latency"]
    measured = {(r["scenario"]["server"], r["scenario"]["profile"]) for r in latency if r["summary"]}
    assert measured == {(n, p) for n in info for p in ("default", "strict")}
    for row in latency:
        if row["summary"]:
            assert 0.001 < row["summary"]["median"] < 5
            assert server_cpu_ok(row["costs"]["server_cpu"])
    for group in ("download", "upload"):
        rows = doc["results"][group]
        assert {r["scenario"]["server"] for r in rows} == set(info)
        for row in rows:
            assert row["summary"]["n"] == 1 and row["summary"]["median"] > 1  # MB/s
            costs = row["costs"]
            assert 0 < costs["client_cpu_gib"] < 100 and server_cpu_ok(costs["server_cpu_gib"])
            assert 1 << 20 < costs["client_rss"] < 1 << 30 and 1 << 19 < costs["server_rss"] < 1 << 30
    memory = doc["memory"]
    for name in info:
        mine = [m for m in memory if m["server"] == name]
        assert {m["state"] for m in mine} == {"idle", "session", "transfer"}
        roles = {(m["state"], m["role"]) for m in mine}
        serving = "listener" if name == "gossh" else "session"  # the Go server's sessions are goroutines
        assert {("idle", "listener"), ("session", serving), ("transfer", serving), ("transfer", "client")} <= roles
        if name.startswith("sshd="):  # OpenSSH 10: sshd-session as the privileged monitor and the user's session
            assert {("session", "monitor"), ("session", "session")} <= roles, roles
        assert all(m["rss"] > 100_000 and m["vsz"] >= m["rss"] for m in mine)
        # PSS comes from /proc/PID/smaps_rollup, readable here (root): a share of RSS, never more
        assert all(m["pss"] is not None and 0 < m["pss"] <= m["rss"] for m in mine)
    assert eventually(lambda: server_processes(own_tmp) - before[0] == set())
    assert eventually(lambda: private_dirs(own_tmp) - before[1] == set())
    assert eventually(lambda: orphan_cgroups() - before[2] == set())


def test_tables_show_settings_and_unsupported_host_keys(cli_env: dict[str, str]) -> None:
    done = sshbench(cli_env, "servers", "local:tinyssh", "--hostkey", "rsa-sha2-512", "--no-throughput")
    assert done.returncode == ExitCode.UNSUPPORTED_ALGORITHM, done.stderr
    assert "unsupported" in done.stdout and "tinyssh offers host keys ssh-ed25519" in done.stderr
    assert "Traceback" not in done.stderr
    assert "ed25519 only" in done.stdout  # the settings used are shown


def test_missing_and_bad_servers_are_explained(cli_env: dict[str, str], tmp_path: Path) -> None:
    done = sshbench(cli_env, "servers", f"local:sshd={tmp_path}/no-such-sshd")
    assert done.returncode == ExitCode.MISSING_BINARY
    assert "is not an executable file" in done.stderr and "the absolute path of an executable sshd" in done.stderr
    db = tmp_path / "none.db"
    done = sshbench(cli_env, "latency", "local:sshd=/bin/true", "--db", str(db))  # runs, but is no server
    assert done.returncode == ExitCode.SERVER_START and "did not start" in done.stderr, done.stderr
    assert "/bin/true -V prints an OpenSSH version" in done.stderr and "scripts/openssh10" in done.stderr
    done = sshbench(cli_env, "latency", "--kex", "curve448-sha512-none", "--db", str(db))  # offered by no side
    assert done.returncode == ExitCode.UNSUPPORTED_ALGORITHM and "choose from" in done.stderr, done.stderr
    assert stored_samples(db) == 0  # nothing stored for either: no sample, no run
    if db.exists():
        with sqlite3.connect(db) as con:
            assert con.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
    done = sshbench(cli_env, "servers", "local:telnetd")
    assert done.returncode == ExitCode.USAGE and "local:dropbear" in done.stderr
    done = sshbench(cli_env, "servers", "local:openssh", "bad host")
    assert done.returncode == ExitCode.USAGE and "bad host" in done.stderr  # no destination: refused before any start


def test_custom_sshd_by_path_and_cpu_columns_in_throughput(cli_env: dict[str, str]) -> None:
    sshd = require_binary("sshd", "openssh-server")
    done = sshbench(cli_env, "throughput", f"local:sshd={sshd}", "--cipher", CHACHA, *QUICK, "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["run"]["environment"]["server_name"] == f"sshd={sshd}"
    for group in ("download", "upload"):
        costs = doc["results"][group][0]["costs"]
        assert server_cpu_ok(costs["server_cpu_gib"]) and costs["client_cpu_gib"] > 0 and costs["server_rss"] > 0
    table = sshbench(cli_env, "show", str(doc["run"]["id"]))
    assert "CPU s/GiB client / server" in table.stdout and "server settings:" in table.stdout


def test_interrupted_servers_run_cleans_up_and_resumes(cli_env: dict[str, str], tmp_path: Path, own_tmp: Path) -> None:
    db = tmp_path / "r.db"
    before = (server_processes(own_tmp), private_dirs(own_tmp), orphan_cgroups())  # its own, beside other tests
    args = ["servers", "local:openssh", "local:dropbear", "--cipher", CHACHA, "--db", str(db)]
    args += ["--rounds", "3", "--max-rounds", "3", "--size", "16M", "--no-latency"]
    returncode, err = interrupt_after_samples(cli_env, args, db, 3)
    assert returncode == ExitCode.INTERRUPTED, err
    assert "--resume 1" in err
    assert eventually(lambda: server_processes(own_tmp) - before[0] == set())
    assert eventually(lambda: private_dirs(own_tmp) - before[1] == set())
    assert eventually(lambda: orphan_cgroups() - before[2] == set())
    done = sshbench(cli_env, "servers", "--db", str(db), "--resume", "1", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["run"]["status"] == "complete"
    assert all(r["summary"]["n"] == 3 for g in ("download", "upload") for r in doc["results"][g])
    assert len({m["server"] for m in doc["memory"]}) == 2  # snapshots taken once, not again on resume
    assert len(doc["memory"]) == len({(m["server"], m["state"], m["role"]) for m in doc["memory"]})


def test_a_host_of_yours_side_by_side_with_an_embedded_server(cli_env: dict[str, str], testhost: Path) -> None:
    limits = ("--server-cpu", "50%") if CGROUPS else ()
    done = sshbench(
        cli_env,
        "servers",
        "local:dropbear",
        "testhost",
        "--ssh-config",
        str(testhost),
        "--cipher",
        CHACHA,
        "--hostkey",
        "ssh-ed25519",
        *limits,
        *QUICK,
        "--json",
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    info = doc["discovery"]["servers"]
    assert set(info) == {"dropbear", "testhost"}
    assert "server_settings" not in info["testhost"]  # nothing of it is sshbench's to set
    assert "not measured on a host of yours" in info["testhost"]["memory_problems"][0]
    assert {m["server"] for m in doc["memory"]} == {"dropbear"}
    for group in ("download", "upload"):
        rows = {r["scenario"]["server"]: r for r in doc["results"][group]}
        assert set(rows) == {"dropbear", "testhost"}
        mine = rows["testhost"]["costs"]
        assert mine["server_cpu_gib"] is not None and mine["server_rss"] > 1 << 19  # its session reported itself
    assert {r["scenario"]["server"] for r in doc["results"]["latency"] if r["summary"]} == {"dropbear", "testhost"}
    shown = sshbench(cli_env, "show", str(doc["run"]["id"]), "--wide").stdout
    assert "a host of yours, as it is" in shown
    if CGROUPS:
        assert "--server-cpu: applied to the embedded servers only" in shown
