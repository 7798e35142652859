"""Fault-injection campaign: does sshbench leave nothing behind and lose nothing, whatever happens to it?

    .venv/bin/python benchmarks/faults.py --trials 100 --seed 1

Each trial draws a command (run, throughput, servers, sweep, tune on loopback and across a link, clients, load's
steps and bursts; `--commands` narrows the draw; small
plans against embedded servers; half of them with --emulate no-aesni where the command takes it), a fault and a
moment (0.3-8 s after start; up to 30 s for tune and clients, whose set-up is longer), then checks:
  - leftovers: every process sshbench started (its process tree, sampled every 20 ms) still running 5 s after
    it exited; new /tmp/sshbench-* directories; new sshbench-* cgroups; new network namespaces; a lease file;
  - the database: PRAGMA integrity_check, and samples lost: a sample seen committed during the trial (the
    database is polled every 20 ms by a reader) that is missing afterwards, or after --resume;
  - that `history`, `show last` and (for a run left unfinished) `--resume` work.
Faults: SIGINT, SIGTERM, SIGKILL of sshbench; SIGKILL of the embedded server's listener; SIGKILL of a running
client (ssh, dbclient or a library's driver); a connection cut (`ss -K` on a client's connection to the server).
Everything runs in a private HOME and temporary database; only processes this script started (and their
descendants) are signalled, by PID.

`throughput-link-user` runs a linked throughput as a normal user (`--user NAME --user-sshbench PATH`: an
environment with the wheel that user can run; drawn only when both are given).
Prints a Markdown table (per fault) and one line per trial with --verbose. Root is needed for cgroups and `ss -K`.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import pwd
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

SSHBENCH = [sys.executable, "-m", "sshbench"]
SMALL = ["--rounds", "3", "--max-rounds", "4", "--warmup", "1"]
COMMANDS = {
    "run": [
        "run",
        "--kex",
        "curve25519-sha256",
        "--hostkey",
        "ssh-ed25519",
        "--cipher",
        "aes128-gcm@openssh.com",
        "--size",
        "8M",
        *SMALL,
        "--max-time",
        "40s",
    ],
    "throughput": [
        "throughput",
        "--cipher",
        "aes128-gcm@openssh.com,chacha20-poly1305@openssh.com",
        "--size",
        "8M",
        *SMALL,
        "--max-time",
        "40s",
    ],
    "servers": [
        "servers",
        "local:openssh",
        "local:dropbear",
        "--cipher",
        "chacha20-poly1305@openssh.com",
        "--hostkey",
        "ssh-ed25519",
        "--size",
        "8M",
        *SMALL,
        "--max-time",
        "60s",
    ],
    "sweep": [
        "sweep",
        "--kex",
        "curve25519-sha256",
        "--hostkey",
        "ssh-ed25519",
        "--cipher",
        "aes128-ctr,aes128-gcm@openssh.com",
        "--size",
        "8M",
        *SMALL,
        "--max-time",
        "40s",
    ],
    "throughput-link-user": [  # as a normal user (--user): the link in a user namespace of sshbench's own
        "throughput",
        "--link",
        "100mbit,20ms",
        "--cipher",
        "aes128-gcm@openssh.com",
        "--size",
        "8M",
        *SMALL,
        "--max-time",
        "60s",
    ],
    "tune": ["tune", "--max-time", "40s"],  # the defaults, then a master connection, key exchanges, ciphers
    "tune-link": [  # an upload bound by Dropbear's window: N connections at once and a second, widened server
        "tune",
        "local:dropbear",
        "--link",
        "1gbit,30ms",
        "--direction",
        "up",
        "--max-time",
        "120s",
    ],
    "clients": [  # ssh, dbclient and a library's driver process
        "clients",
        "--client",
        "openssh,dropbear,paramiko",
        "--cipher",
        "aes128-gcm@openssh.com",
        "--direction",
        "down",
        "--max-time",
        "90s",
    ],
    "load": [  # open-loop steps, one ssh per login
        "load",
        "--rate",
        "10,20",
        "--step-time",
        "4s",
        "--generator",
        "openssh",
        "--kex",
        "curve25519-sha256",
        "--max-time",
        "90s",
    ],
    "load-burst": [  # the Go generator's bursts against two servers, one with a MaxStartups that drops
        "load",
        "--burst",
        "30",
        "--server-option",
        "MaxStartups=5:30:30",
        "--max-time",
        "300s",
    ],
}
AS_USER = ("throughput-link-user",)  # run as --user with --user-sshbench (drawn only when both are given)
WEIGHT = {"tune-link": 0.4}  # how often a command is drawn against the others (1): a tune-link trial takes minutes
LATEST = {
    "tune": 30.0,
    "tune-link": 30.0,
    "clients": 30.0,
    "throughput-link-user": 20.0,
}  # latest fault moment (s) where set-up takes longer
NO_EMULATE = (
    "tune-link",
    "clients",
    "load",
    "load-burst",
    "throughput-link-user",
)  # --emulate would change what they exercise (a window
# bound, drivers); load does not take it
CLIENTS = ("ssh", "dbclient")  # client processes by name; the library drivers by their command line
DRIVERS = ("sshbench.clients.drivers", "sshbench-gossh", "sshbench-russh")
FAULTS = ("SIGINT", "SIGTERM", "SIGKILL", "kill-server", "kill-client", "cut-connection")
GRACE = 5.0  # seconds after sshbench exits for what it started to be gone
FAILED_LOGINS = {"load": (12,)}  # a finished load run whose logins failed (drops are results) exits 12


@dataclass
class Trial:
    """One trial's draw and findings."""

    number: int
    command: str
    fault: str
    moment: float
    emulate: bool = False  # with --emulate no-aesni
    injected: bool = False  # the fault found its victim (a server, a client, a connection) and was applied
    exit_code: int | None = None
    leftovers: list[str] = field(default_factory=list)
    clean_after: float | None = None  # seconds from sshbench's exit until nothing it made was left
    lost: int = 0
    seen: int = 0
    integrity: str = ""
    broken: list[str] = field(default_factory=list)  # history / show / --resume that did not work


class Watch:
    """Sample sshbench's process tree and the database's committed samples while the trial runs."""

    def __init__(self, pid: int, db: Path) -> None:
        self.pid, self.db = pid, db
        self.procs: dict[tuple[int, float], str] = {}
        self.samples: set[int] = set()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        """Every 20 ms: the process tree (pid, start time, name) and the ids of the committed samples."""
        while not self.stop.wait(0.02):
            with contextlib.suppress(psutil.Error):
                root = psutil.Process(self.pid)
                for p in [root, *root.children(recursive=True)]:
                    with contextlib.suppress(psutil.Error):
                        self.procs.setdefault((p.pid, p.create_time()), " ".join(p.cmdline())[:120])
            self.samples |= sample_ids(self.db)

    def finish(self) -> None:
        """Stop watching."""
        self.stop.set()
        self.thread.join(5)


def sample_ids(db: Path) -> set[int]:
    """Return the ids of the samples committed in the database (empty before it exists)."""
    if not db.exists():
        return set()
    try:
        con = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True, timeout=1)
        try:
            return {r[0] for r in con.execute("SELECT id FROM samples")}
        finally:
            con.close()
    except sqlite3.Error:
        return set()


def descendants(pid: int) -> list[psutil.Process]:
    """Return a process's descendants."""
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


def inject(fault: str, proc: subprocess.Popen[str]) -> bool:
    """Apply a fault to the sshbench process (or something it started); return True if it found its victim."""
    if fault in ("SIGINT", "SIGTERM", "SIGKILL"):
        proc.send_signal(getattr(signal, fault))
        return True
    kids = descendants(proc.pid)
    if fault == "kill-server":
        victims = [
            p
            for p in kids
            if _cmd(p).startswith(("sshd:", "/usr/sbin/sshd", "dropbear", "/usr/sbin/dropbear"))
            and p.ppid() == proc.pid
        ]
    elif fault == "kill-client":
        victims = [p for p in kids if _is_client(p) and p.ppid() == proc.pid]
    else:
        return _cut(kids)
    for victim in victims[:1]:
        with contextlib.suppress(psutil.Error):
            victim.kill()
    return bool(victims)


def _is_client(p: psutil.Process) -> bool:
    """Return True for an SSH client sshbench drives: ssh, dbclient, or a library's driver."""
    try:
        return p.name() in CLIENTS or any(d in _cmd(p) for d in DRIVERS)
    except psutil.Error:
        return False


def _cmd(p: psutil.Process) -> str:
    """Return a process's command line ('' when it is gone)."""
    try:
        return " ".join(p.cmdline())
    except psutil.Error:
        return ""


def _cut(kids: list[psutil.Process]) -> bool:
    """Destroy one TCP connection of a client to its embedded server (ss -K); return True if one was cut."""
    for p in kids:
        with contextlib.suppress(psutil.Error):
            if not _is_client(p):
                continue
            for c in p.net_connections(kind="tcp"):
                if c.raddr and c.status == psutil.CONN_ESTABLISHED:
                    argv = [
                        "ss",
                        "-K",
                        "dst",
                        c.raddr.ip,
                        "dport",
                        "=",
                        str(c.raddr.port),
                        "src",
                        c.laddr.ip,
                        "sport",
                        "=",
                        str(c.laddr.port),
                    ]
                    subprocess.run(argv, capture_output=True, check=False, timeout=10)
                    return True
    return False


def snapshot() -> dict[str, set[str]]:
    """Return what exists now that sshbench may leave behind: private dirs, cgroups, network namespaces."""
    tmp = Path(tempfile.gettempdir())
    cgroups = set()
    for root in (Path("/sys/fs/cgroup"),):
        with contextlib.suppress(OSError):
            cgroups |= {str(p) for p in root.rglob("sshbench-*") if p.is_dir()}
    netns = set(os.listdir("/run/netns")) if Path("/run/netns").is_dir() else set()
    return {"dirs": {str(p) for p in tmp.glob("sshbench-*")}, "cgroups": cgroups, "netns": netns}


@dataclass(frozen=True)
class AsUser:
    """A normal user to run AS_USER commands as, and a sshbench that user can run (a wheel's environment)."""

    uid: int
    gid: int
    sshbench: str

    def argv(self) -> list[str]:
        """Return the command prefix that runs sshbench as this user, no capability of root's kept."""
        drop = ["setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", "--clear-groups", "--inh-caps=-all"]
        return [*drop, "--", self.sshbench]


def run_trial(trial: Trial, home: Path, timeout: float, user: AsUser | None = None) -> Trial:
    """Run one trial and check what it left."""
    env = {k: v for k, v in os.environ.items() if k not in ("SSH_AUTH_SOCK", "SSHBENCH_DB")}
    env.update(HOME=str(home), XDG_DATA_HOME=str(home / "data"), XDG_STATE_HOME=str(home / "state"))
    db = home / f"trial-{trial.number}.db"
    sshbench = SSHBENCH
    if trial.command in AS_USER:
        assert user is not None, "a command run as a normal user needs --user"
        os.chown(home, user.uid, user.gid)
        env.update(PATH="/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", XDG_CACHE_HOME=str(home / "cache"))
        sshbench = user.argv()
    before = snapshot()
    emulate = ["--emulate", "no-aesni"] if trial.emulate else []
    proc = subprocess.Popen(
        [*sshbench, *COMMANDS[trial.command], *emulate, "--db", str(db)],
        env=env,
        text=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    watch = Watch(proc.pid, db)
    try:
        try:
            proc.wait(timeout=trial.moment)
        except subprocess.TimeoutExpired:
            trial.injected = inject(trial.fault, proc)
        try:
            proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            trial.broken.append(f"sshbench did not end within {timeout:.0f} s")
            proc.kill()
            proc.communicate()
        trial.exit_code = proc.returncode
    finally:
        watch.finish()
    ended = time.monotonic()
    trial.leftovers = _leftovers(watch, before, home)
    trial.clean_after = None if trial.leftovers else round(time.monotonic() - ended, 2)
    trial.seen = len(watch.samples)
    after = sample_ids(db)
    trial.lost = len(watch.samples - after)
    trial.integrity = _integrity(db)
    _check_commands(trial, env, db, watch.samples | after, sshbench)
    return trial


def _leftovers(watch: Watch, before: dict[str, set[str]], home: Path) -> list[str]:
    """Return what the trial left: processes still running after the grace period, dirs, cgroups, netns, leases."""
    deadline = time.monotonic() + GRACE
    alive: list[str] = []
    while time.monotonic() < deadline:
        alive = []
        for (pid, started), cmd in watch.procs.items():
            with contextlib.suppress(psutil.Error):
                p = psutil.Process(pid)
                if p.create_time() == started and p.status() != psutil.STATUS_ZOMBIE:
                    alive.append(f"process {pid} {cmd[:60]}")
        now = snapshot()
        extra = [f"{kind} {item}" for kind in now for item in sorted(now[kind] - before[kind])]
        leases = [str(p) for p in (home / "state").rglob("*.json")]
        found = alive + extra + [f"lease {p}" for p in leases]
        if not found:
            return []
        time.sleep(0.02)
    return found


def _integrity(db: Path) -> str:
    """Return PRAGMA integrity_check's answer ('ok', or 'no database' when none was created)."""
    if not db.exists():
        return "no database"
    con = sqlite3.connect(db)
    try:
        return str(con.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        con.close()


def _check_commands(trial: Trial, env: dict[str, str], db: Path, taken: set[int], sshbench: list[str]) -> None:
    """Check that history, show and --resume work, and that --resume keeps every sample."""
    if not db.exists():
        return
    con = sqlite3.connect(db)
    try:
        row = con.execute("SELECT id, status FROM runs ORDER BY id DESC LIMIT 1").fetchone()
    finally:
        con.close()
    for args in (["history"], ["show", "last"]) if row is not None else (["history"],):
        done = subprocess.run(
            [*sshbench, *args, "--db", str(db)], env=env, capture_output=True, text=True, timeout=60, check=False
        )
        if done.returncode not in (0,) or "Traceback" in done.stderr:
            trial.broken.append(f"{args[0]} exited {done.returncode}: {done.stderr.strip()[-160:]}")
    if row is None or row[1] == "complete":
        return
    if row[1] == "running":
        trial.broken.append("the run is still `running` after sshbench ended")
    command = COMMANDS[trial.command][0]
    done = subprocess.run(
        [*sshbench, command, "--resume", str(row[0]), "--db", str(db), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode not in (0, 9, *FAILED_LOGINS.get(command, ())) or "Traceback" in done.stderr:
        trial.broken.append(f"--resume exited {done.returncode}: {done.stderr.strip()[-160:]}")
    missing = taken - sample_ids(db)
    trial.lost += len(missing)


def table(trials: list[Trial]) -> str:
    """Return the Markdown results table, one row per fault."""
    rows = [
        "| fault | trials | fault applied | exit codes | leftovers | clean after (max) | integrity not ok "
        "| samples seen | samples lost | history/show/--resume failures |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for fault in FAULTS:
        group = [t for t in trials if t.fault == fault]
        if not group:
            continue
        codes = collections.Counter(str(t.exit_code) for t in group)
        rows.append(
            f"| {fault} | {len(group)} | {sum(t.injected for t in group)} "
            f"| {', '.join(f'{c}: {n}' for c, n in sorted(codes.items()))} "
            f"| {sum(bool(t.leftovers) for t in group)} "
            f"| {max((t.clean_after for t in group if t.clean_after is not None), default=0):.2f} s "
            f"| {sum(t.integrity not in ('ok', 'no database') for t in group)} "
            f"| {sum(t.seen for t in group)} | {sum(t.lost for t in group)} "
            f"| {sum(bool(t.broken) for t in group)} |"
        )
    total = [
        f"**Total: {len(trials)} trials; {sum(bool(t.leftovers) for t in trials)} with leftovers; "
        f"{sum(t.lost for t in trials)} of {sum(t.seen for t in trials)} committed samples lost; "
        f"{sum(bool(t.broken) for t in trials)} with a failing history/show/--resume.**"
    ]
    return "\n".join([*rows, "", *total])


def main() -> int:
    """Run the campaign and print its table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds one command may take")
    parser.add_argument("--json", type=Path, help="also write every trial's findings to this file")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--commands", help="draw only these commands (comma-separated names of COMMANDS)")
    parser.add_argument("--user", help="a normal user's account to run the AS_USER commands as")
    parser.add_argument("--user-sshbench", help="a sshbench that user can run (its wheel installed where it reads)")
    args = parser.parse_args()
    user = None
    if args.user and args.user_sshbench:
        account = pwd.getpwnam(args.user)
        user = AsUser(account.pw_uid, account.pw_gid, args.user_sshbench)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # a background job starts with SIGINT ignored, and
    # sshbench would inherit that: SIGINT trials would then test nothing
    rng = random.Random(args.seed)
    drawn = args.commands.split(",") if args.commands else [c for c in COMMANDS if user or c not in AS_USER]
    if unknown := [c for c in drawn if c not in COMMANDS]:
        parser.error(f"unknown commands {unknown}: choose from {', '.join(COMMANDS)}")
    trials: list[Trial] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="faults-") as tmp:
        os.chmod(tmp, 0o755)  # a normal user's trial HOME is inside
        for number in range(1, args.trials + 1):
            command = rng.choices(drawn, [WEIGHT.get(c, 1.0) for c in drawn])[0]
            fault = rng.choice(FAULTS)
            moment = round(rng.uniform(0.3, LATEST.get(command, 8.0)), 2)
            trial = Trial(number, command, fault, moment, rng.random() < 0.5 and command not in NO_EMULATE)
            home = Path(tmp) / f"home-{number}"
            home.mkdir()
            run_trial(trial, home, args.timeout, user)
            trials.append(trial)
            if args.verbose or trial.leftovers or trial.lost or trial.broken:
                print(json.dumps(trial.__dict__), file=sys.stderr, flush=True)
    print(table(trials))
    print(f"\n{len(trials)} trials, seed {args.seed}, {time.monotonic() - started:.0f} s.")
    if args.json:
        args.json.write_text(json.dumps([t.__dict__ for t in trials], indent=1))
    return 1 if any(t.leftovers or t.lost or t.broken for t in trials) else 0


if __name__ == "__main__":
    sys.exit(main())
