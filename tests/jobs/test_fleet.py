"""Fleets, end to end with the real CLI: OpenSSH, Dropbear and TinySSH servers on loopback described as remote
hosts by an Ansible INI inventory (groups, ansible_host/port/user and a key per host) and by ssh_config aliases,
one host on a closed port, and slow fake hosts that show --forks bounds the work in flight."""

from __future__ import annotations

import json
import signal
import socket
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import interrupt_after_samples, sshbench
from fleet_hosts import LoopbackFleet, loopback_fleet

pytestmark = pytest.mark.integration
FAST = ["--rounds", "3", "--max-rounds", "3", "--kex", "curve25519-sha256,sntrup761x25519-sha512@openssh.com"]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackFleet]:
    """One OpenSSH, one Dropbear and one TinySSH host, and one closed port."""
    tmp = tmp_path_factory.mktemp("fleet")
    (tmp / "home").mkdir()
    with loopback_fleet(tmp, tmp / "home", ["openssh", "dropbear", "tinyssh"]) as found:
        yield found


def _document(done: subprocess.CompletedProcess[str]) -> dict[str, object]:
    """Return the fleet's JSON document, failing with the CLI's own words if there is none."""
    assert done.stdout.strip(), done.stderr
    doc = json.loads(done.stdout)
    assert isinstance(doc, dict)
    return doc


def test_inventory_fleet_measures_every_reachable_host_and_names_the_closed_one(
    fleet: LoopbackFleet, cli_env: dict[str, str], tmp_path: Path
) -> None:
    done = sshbench(
        cli_env, "fleet", "-i", str(fleet.inventory), "--ssh-config", str(fleet.client_config), *FAST, "--json"
    )
    assert done.returncode == 4, done.stderr  # some hosts were not measured
    assert "1 of 4 hosts were not measured: closed-1" in done.stderr
    assert "Connection refused" in done.stderr
    analysis = _document(done)["analysis"]
    assert isinstance(analysis, dict)
    hosts = {h["name"]: h for h in analysis["hosts"]}
    assert set(hosts) == {"openssh-1", "dropbear-2", "tinyssh-3", "closed-1"}
    for name in ("openssh-1", "dropbear-2", "tinyssh-3"):
        assert hosts[name]["measured"], hosts[name]
        assert hosts[name]["connect_s"]["n"] >= 3
        assert 0 < hosts[name]["connect_s"]["ci_low"] <= hosts[name]["connect_s"]["median"]
    assert not hosts["closed-1"]["measured"] and "Connection refused" in hosts["closed-1"]["failure"]
    assert "prod" in hosts["openssh-1"]["groups"] and "openssh" in hosts["openssh-1"]["groups"]
    groups = {g["name"]: g for g in analysis["groups"]}
    assert groups["prod"]["hosts"] == 3 and groups["prod"]["measured"] == 3
    assert groups["broken"]["measured"] == 0
    rec = analysis["recommendation"]
    assert set(rec["hosts"]) == {"openssh-1", "dropbear-2", "tinyssh-3"}
    _check_recommendation(fleet, rec, tmp_path)


def _check_recommendation(fleet: LoopbackFleet, rec: dict[str, object], tmp_path: Path) -> None:
    """The Host block is valid for `ssh -G`, and every host it claims accepts it logs in with it."""
    lists = rec["lists"]
    assert isinstance(lists, dict) and lists["KexAlgorithms"] and lists["Ciphers"]
    block = [f"Host {' '.join(rec['hosts'])}"] + [f"    {k} {','.join(v)}" for k, v in lists.items()]  # type: ignore[arg-type]
    aliases = [
        f"Host {h.name}\n  HostName 127.0.0.1\n  Port {h.port}\n  User {h.user}\n  IdentityFile {h.key}\n"
        for h in fleet.hosts
        if h.key
    ]
    config = tmp_path / "recommended_config"
    config.write_text("\n".join(block) + "\n\n" + "\n".join(aliases) + "\n" + fleet.client_config.read_text())
    refuses = rec["refuses"]
    assert isinstance(refuses, dict)
    for host in rec["hosts"]:  # type: ignore[attr-defined]
        shown = subprocess.run(["ssh", "-F", str(config), "-G", host], capture_output=True, text=True, check=False)
        assert shown.returncode == 0, shown.stderr
        assert f"kexalgorithms {','.join(lists['KexAlgorithms'])}" in shown.stdout
        if host in refuses:
            continue
        login = subprocess.run(
            ["ssh", "-F", str(config), "-o", "BatchMode=yes", host, "true"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert login.returncode == 0, f"{host} refused the recommended configuration: {login.stderr}"


def test_ssh_config_pattern_source_tables_report_and_policy(
    fleet: LoopbackFleet, cli_env: dict[str, str], tmp_path: Path
) -> None:
    patterns = "fleet-openssh-*,fleet-closed-*"
    done = sshbench(cli_env, "fleet", "--ssh-config", str(fleet.ssh_config), "--hosts", patterns, *FAST)
    assert done.returncode == 4, done.stderr
    out = done.stdout
    assert "fleet-openssh-1" in out and "fleet-dropbear-2" not in out
    assert "Not measured" in out and "fleet-closed-1: cannot log in" in out
    assert "One configuration for all 1 reached hosts" in out
    assert "# ~/.ssh/config\nHost fleet-openssh-1\n    KexAlgorithms " in out
    report = tmp_path / "fleet.html"
    assert sshbench(cli_env, "report", "last", "-o", str(report)).returncode == 0
    page = report.read_text()
    assert "<h3>Hosts</h3>" in page and "One configuration for all 1 reached hosts" in page
    assert "fleet-closed-1: not measured" in page
    recommended = sshbench(cli_env, "recommend", "last", "--policy", "compatible")
    assert recommended.returncode == 0 and "(policy compatible)" in recommended.stdout
    history = sshbench(cli_env, "history")
    assert "fleet" in history.stdout and "(fleet " not in history.stdout  # host runs are listed under --hosts
    assert "(fleet " in sshbench(cli_env, "history", "--hosts").stdout


def test_fleet_runs_compare_per_host_and_resume_only_the_missing_host(
    fleet: LoopbackFleet, cli_env: dict[str, str]
) -> None:
    args = ["fleet", "-i", str(fleet.inventory), "--limit", "openssh,broken", "--ssh-config", str(fleet.client_config)]
    first = sshbench(cli_env, *args, *FAST, "--json")
    second = sshbench(cli_env, *args, *FAST, "--json")
    assert first.returncode == second.returncode == 4
    a, b = (_document(d)["run"]["id"] for d in (first, second))  # type: ignore[index]
    compared = sshbench(cli_env, "compare", str(a), str(b), "--fail-if", "slower:90%")
    assert compared.returncode == 0, compared.stderr
    assert "openssh-1: curve25519-sha256" in compared.stdout
    runs_before = {h["name"]: h["run"] for h in _document(first)["analysis"]["hosts"]}  # type: ignore[index]
    resumed = sshbench(cli_env, "fleet", "--resume", str(a), "--json")
    assert resumed.returncode == 4, resumed.stderr  # the closed host is still closed
    after = {h["name"]: h["run"] for h in _document(resumed)["analysis"]["hosts"]}  # type: ignore[index]
    assert after == runs_before  # the measured host kept its run; the closed one was tried again
    host_run = runs_before["openssh-1"]
    refused = sshbench(cli_env, "run", "--resume", str(host_run))
    assert refused.returncode == 2 and f"one host of fleet run {a}" in refused.stderr


def test_bad_inventory_exits_2_with_ansibles_message(cli_env: dict[str, str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.ini"
    bad.write_text("[web\n")
    done = sshbench(cli_env, "fleet", "-i", str(bad))
    assert done.returncode == 2
    assert "cannot read the inventory" in done.stderr and "failed to parse" in done.stderr.lower()
    assert "ansible-inventory -i" in done.stderr  # the fix names the command to check it
    none = sshbench(cli_env, "fleet", "--hosts-file", str(bad), "-i", str(bad))
    assert none.returncode == 2 and "only one source" in none.stderr


class SlowHosts:
    """Loopback listeners that accept, say nothing for `hold` seconds and hang up, counting connections open at
    once across all of them (a host in work holds at most one connection at a time)."""

    def __init__(self, count: int, hold: float) -> None:
        self.hold, self.lock, self.open, self.peak = hold, threading.Lock(), 0, 0
        self.socks = [socket.create_server(("127.0.0.1", 0)) for _ in range(count)]
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._serve, args=(s,), daemon=True) for s in self.socks]
        for s, t in zip(self.socks, self.threads, strict=True):
            s.settimeout(0.2)
            t.start()

    @property
    def ports(self) -> list[int]:
        """Return the listeners' ports."""
        return [int(s.getsockname()[1]) for s in self.socks]

    def _serve(self, sock: socket.socket) -> None:
        """Accept until stopped; each connection is held in a thread of its own."""
        while not self.stop.is_set():
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                continue
            threading.Thread(target=self._hold, args=(conn,), daemon=True).start()

    def _hold(self, conn: socket.socket) -> None:
        """Keep one connection open in silence, then close it."""
        with self.lock:
            self.open += 1
            self.peak = max(self.peak, self.open)
        time.sleep(self.hold)
        conn.close()
        with self.lock:
            self.open -= 1

    def close(self) -> None:
        """Stop accepting and close the listeners."""
        self.stop.set()
        for t in self.threads:
            t.join(timeout=5)
        for s in self.socks:
            s.close()


@pytest.mark.parametrize("forks", [2, 4])
def test_forks_bounds_how_many_hosts_are_worked_on_at_once(forks: int, cli_env: dict[str, str], tmp_path: Path) -> None:
    slow = SlowHosts(4, hold=1.5)
    try:
        hosts = tmp_path / "hosts.txt"
        hosts.write_text("".join(f"127.0.0.1:{p}\n" for p in slow.ports))
        started = time.monotonic()
        done = sshbench(cli_env, "fleet", "--hosts-file", str(hosts), "--forks", str(forks), timeout=120)
        took = time.monotonic() - started
    finally:
        slow.close()
    assert done.returncode == 4 and "4 of 4 hosts were not measured" in done.stderr, done.stderr
    assert slow.peak == forks, f"{slow.peak} connections were open at once with --forks {forks}"
    assert took < 60


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "sigkill"])
def test_an_interrupted_fleet_keeps_every_sample_and_resume_finishes_it(
    sig: int, fleet: LoopbackFleet, cli_env: dict[str, str]
) -> None:
    db = Path(cli_env["XDG_DATA_HOME"]) / "sshbench" / "sshbench.db"
    args = [
        "fleet",
        "-i",
        str(fleet.inventory),
        "--limit",
        "prod",
        "--ssh-config",
        str(fleet.client_config),
        "--kex",
        "curve25519-sha256",
        "--rounds",
        "8",
        "--max-rounds",
        "8",
    ]
    code, err = interrupt_after_samples(cli_env, args, db, minimum=8, sig=sig)
    if sig == signal.SIGINT:
        assert code == 130 and "sshbench fleet --resume 1" in err, err
    else:  # killed outright: its guardian marks the fleet and every host's run interrupted
        assert code == -signal.SIGKILL
        deadline = time.monotonic() + 10
        while _raw_statuses(db) & {"running"} and time.monotonic() < deadline:
            time.sleep(0.1)
    with sqlite3.connect(db) as con:
        taken = con.execute("SELECT COUNT(*) FROM samples").fetchone()[0]
    assert taken >= 8 and _raw_statuses(db) == {"interrupted"}
    done = sshbench(cli_env, "fleet", "--resume", "1", "--json")
    assert done.returncode == 0, done.stderr
    hosts = _document(done)["analysis"]["hosts"]  # type: ignore[index]
    assert all(h["measured"] and h["connect_s"]["n"] >= 8 for h in hosts), hosts
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM samples").fetchone()[0] >= taken  # nothing stored was lost
        assert {s for (s,) in con.execute("SELECT status FROM runs")} == {"complete"}


def _raw_statuses(db: Path) -> set[str]:
    """Return the run statuses as written in the database (not as sshbench reads them)."""
    with sqlite3.connect(db) as con:
        return {s for (s,) in con.execute("SELECT status FROM runs")}
