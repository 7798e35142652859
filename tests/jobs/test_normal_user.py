"""sshbench as a normal user, from its wheel (issue 58): an emulated link in a user namespace of sshbench's own gives
the link's rate and names how it is made; TinySSH and Dropbear run and give their CPU per GiB and memory (the
server's CPU from /proc, no cgroup); a SIGKILLed linked run leaves no process of the user's behind.

The suite runs as root: these tests build the wheel, install it in a world-readable environment with the
system's Python, and run it as an account of the machine's with a login shell (SSHBENCH_TEST_USER, else the
first with uid >= 1000), HOME and caches in a directory of that user's. Skipped, saying why, where either is
missing.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from conftest import stored_samples

ROOT = Path(__file__).resolve().parents[2]
GCM = "aes128-gcm@openssh.com"
LINKED = ["throughput", "--link", "100mbit,20ms", "--cipher", GCM, "--size", "16M"]  # 16 MiB copies: ~1.3 s each
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="switching to a normal user needs root"),
]


@dataclass(frozen=True)
class User:
    """A normal user to run the wheel as, and where its files go."""

    name: str
    uid: int
    gid: int
    sshbench: Path
    home: Path

    def env(self) -> dict[str, str]:
        """Return the environment of the user's runs: its own HOME and caches, a wide terminal."""
        return {
            "PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
            "HOME": str(self.home),
            "USER": self.name,
            "LOGNAME": self.name,
            "COLUMNS": "200",
            "LANG": "C.UTF-8",
        }

    def argv(self, *args: str) -> list[str]:
        """Return a command line that runs sshbench as this user (no capability of root's kept)."""
        drop = ["setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", "--clear-groups", "--inh-caps=-all"]
        return [*drop, "--", str(self.sshbench), *args]

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """Run sshbench as this user and capture its output."""
        return subprocess.run(
            self.argv(*args), env=self.env(), capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )


def _account() -> pwd.struct_passwd | None:
    """Return the account to run as: SSHBENCH_TEST_USER, else the first with uid >= 1000 and a login shell."""
    wanted = os.environ.get("SSHBENCH_TEST_USER")
    if wanted:
        return pwd.getpwnam(wanted)
    shells = set(Path("/etc/shells").read_text().split()) if Path("/etc/shells").exists() else {"/bin/sh"}
    return next((p for p in pwd.getpwall() if 1000 <= p.pw_uid < 65534 and p.pw_shell in shells), None)


def _python() -> str | None:
    """Return a Python >= 3.11 outside root's home (a normal user can run it), or None."""
    for candidate in (sys._base_executable, shutil.which("python3.11"), "/usr/bin/python3"):  # type: ignore[attr-defined]
        if not candidate or not os.path.exists(candidate):
            continue
        real = os.path.realpath(candidate)
        if not real.startswith("/root/") and not real.startswith(str(Path.home()) + "/"):
            done = subprocess.run([real, "-c", "import sys; print(sys.version_info >= (3, 11))"], capture_output=True)
            if done.stdout.strip() == b"True":
                return real
    return None


@pytest.fixture(scope="module")
def user() -> Iterator[User]:
    """Build the wheel, install it for a normal user, and yield that user (its directory removed after)."""
    account, python, uv = _account(), _python(), shutil.which("uv") or str(Path.home() / ".local/bin/uv")
    if account is None:
        pytest.skip("no account with uid >= 1000 and a login shell to run as (set SSHBENCH_TEST_USER)")
    if python is None or not os.path.exists(uv):
        pytest.skip("needs uv and a Python >= 3.11 a normal user can run (the system's python3)")
    base = Path(tempfile.mkdtemp(prefix="sbuser-"))
    try:
        base.chmod(0o755)
        wheels, venv = base / "wheel", base / "venv"
        subprocess.run([uv, "build", "-q", "--wheel", "-o", str(wheels), str(ROOT)], check=True, capture_output=True)
        subprocess.run([uv, "venv", "-q", "--python", python, str(venv)], check=True, capture_output=True)
        install = [uv, "pip", "install", "-q", "--python", str(venv / "bin/python")]
        subprocess.run([*install, "--require-hashes", "-r", str(ROOT / "requirements.lock")], check=True)
        subprocess.run([*install, "--no-deps", *map(str, wheels.glob("*.whl"))], check=True)
        home = base / "home"
        home.mkdir()
        os.chown(home, account.pw_uid, account.pw_gid)
        yield User(account.pw_name, account.pw_uid, account.pw_gid, venv / "bin/sshbench", home)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _theirs(uid: int) -> list[str]:
    """Return the processes of this uid that belong to sshbench's runs (servers, clients, the delay line)."""
    found = []
    for p in psutil.process_iter(["pid", "uids", "cmdline"]):
        cmd = " ".join(p.info["cmdline"] or [])
        if p.info["uids"] and p.info["uids"].real == uid and ("sshbench" in cmd or "sleep infinity" in cmd):
            found.append(f"{p.info['pid']}: {cmd}")
    return found


def _settled(uid: int, timeout: float = 8.0) -> list[str]:
    """Return what of the user's runs is still running once `timeout` seconds have passed."""
    deadline = time.monotonic() + timeout
    while (left := _theirs(uid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


@pytest.mark.paired  # reads rates its link bounds (12.5 MB/s) and counts the user's processes (no other test's)
@pytest.mark.slow
def test_a_normal_users_link_gives_the_links_rate_and_names_how_it_is_made(user: User) -> None:
    """A 100 Mbit/s, 20 ms link without root: 12.5 MB/s -20/+10 % both ways, said to be in a user namespace. Here
    within 10 %; on a CI machine whose vCPUs were stolen from, one SSH stream's download got 10.5 where the link check's
    two streams passed (no shaping would give over 100 MB/s; -20 % is what the tools test allows plain TCP)."""
    db = user.home / "link.db"
    args = [*LINKED, "--rounds", "3", "--max-rounds", "3"]
    done = user.run(*args, "--max-time", "3m", "--json", "--db", str(db))
    if done.returncode == 2 and "the emulated link is not what was asked" in done.stderr:
        done = user.run(*args, "--max-time", "3m", "--json", "--db", str(db))  # a busy machine's refusal: once more
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    link = doc["run"]["environment"]["link"]
    assert "user namespace" in link["method"] and "packet sockets" in link["method"], link
    for group, rows in doc["results"].items():
        median = rows[0]["summary"]["median"]
        assert 10.0 <= median <= 13.75, f"{group}: {median} MB/s across a 100 Mbit/s link"
    assert not _settled(user.uid), "left running"


@pytest.mark.alone  # once in the shared phase a row got too few samples in 180 s (the plan said 1.4 s a round):
# alone until the errors it now prints say why
def test_tinyssh_and_dropbear_run_for_a_normal_user_with_their_cpu_and_memory(user: User) -> None:
    """`servers local:dropbear local:tinyssh` as a normal user: each gives its CPU per GiB and its memory."""
    db = user.home / "servers.db"
    one = ["--hostkey", "ssh-ed25519", "--cipher", "chacha20-poly1305@openssh.com", "--no-latency"]
    args = ["servers", "local:dropbear", "local:tinyssh", *one, "--size", "16M", "--rounds", "3", "--max-rounds", "3"]
    done = user.run(*args, "--json", "--db", str(db))
    assert done.returncode == 0, done.stderr + "\n".join(_errors(db))
    doc = json.loads(done.stdout)
    measured: dict[str, tuple[int, int]] = {}
    for entry in doc["samples"]:
        if entry["scenario"]["kind"] == "throughput":
            kept = [x for x in entry["samples"] if x["ok"] and not x["warmup"]]
            cpu, rss = measured.get(entry["scenario"]["server"], (0, 0))
            cpu += sum(x["server_cpu"] is not None and x["server_cpu"] > 0 for x in kept)
            rss += sum(x["server_rss"] is not None and x["server_rss"] > 0 for x in kept)
            measured[entry["scenario"]["server"]] = (cpu, rss)
    assert set(measured) == {"dropbear", "tinyssh"}, measured
    assert all(cpu and rss for cpu, rss in measured.values()), measured


@pytest.mark.alone  # counts the user's processes machine-wide
@pytest.mark.slow
def test_a_sigkilled_normal_users_linked_run_leaves_nothing(user: User) -> None:
    """SIGKILL of a normal user's linked run once it measures: its servers, delay line and namespaces' holder go."""
    db = user.home / "killed.db"
    args = [*LINKED, "--rounds", "6", "--max-time", "2m"]
    proc = subprocess.Popen(
        user.argv(*args, "--db", str(db)),
        env=user.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while stored_samples(db) < 3:  # both directions' warm-ups and a measured sample
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "no sample stored in time"
            time.sleep(0.2)
        assert any("delayline" in p for p in _theirs(user.uid)), "the run had no delay line to leave"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert not _settled(user.uid), "left running after SIGKILL"


def _errors(db: Path) -> list[str]:
    """Return the stored errors of a run's failed samples, and its scenarios' failures (what a red run says)."""
    if not db.exists():
        return ["no database"]
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        rows = con.execute(
            "SELECT sc.key, s.round, s.warmup, s.wall, s.error FROM samples s JOIN scenarios sc ON sc.id = "
            "s.scenario_id WHERE NOT s.ok OR s.error IS NOT NULL"
        ).fetchall()
        failures = con.execute("SELECT key, failure FROM scenarios WHERE failure IS NOT NULL").fetchall()
        counts = con.execute(
            "SELECT sc.key, COUNT(s.id), SUM(s.ok), SUM(s.wall) FROM scenarios sc LEFT JOIN samples s "
            "ON s.scenario_id = sc.id GROUP BY sc.key"
        ).fetchall()
    return [f"failed sample {r}" for r in rows] + [f"failure {f}" for f in failures] + [f"count {c}" for c in counts]
