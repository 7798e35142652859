"""Nothing outlives sshbench: what this process started is written down as it starts it, and reaped if it dies.

A lease is one small JSON file per live sshbench process, in $XDG_STATE_HOME/sshbench/live (default
~/.local/state/sshbench/live): the owner (PID and start time, so a reused PID is never mistaken for it),
the processes it started (PID + start time), the cgroups and private directories it created (each
directory holds a `.sshbench-owner` marker naming the owner), and the run it is writing. It is rewritten
atomically on every change and removed when the owner has cleaned up after itself.

When the owner dies without cleaning up (SIGKILL, OOM, a crash), two things reap its lease:
  - its guardian: a small process started with the first lease entry, in its own session, that waits for
    the owner's end (EOF on a pipe only the owner holds) and then reaps at once;
  - the next sshbench command, which reaps every lease whose owner is gone (`reap_stale`).
Reaping kills only recorded processes whose start time still matches, and what is in recorded cgroups;
removes only recorded directories that carry this owner's marker; never matches anything by name.

This is a ground module (no sshbench imports, no heavy libraries): the store, targets, jobs and the CLI use it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

MARKER = ".sshbench-owner"
KILL_WAIT = 3.0  # seconds to wait for a cgroup to empty after SIGKILL
OWNER_WAIT = 10.0  # the guardian waits this long for its owner's PID to disappear after the pipe closes
Settle = Callable[[str], None]  # given a database path: mark the runs of dead writers interrupted


def start_ticks(pid: int) -> int | None:
    """Return a process's start time (clock ticks since boot), or None when it does not exist."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rpartition(")")[2].split()
    try:
        state, ticks = fields[0], int(fields[19])  # field 3 is the state, field 22 the start time
    except (IndexError, ValueError):
        return None
    return None if state in ("Z", "X") else ticks


@dataclass(frozen=True)
class Owner:
    """One process, named by PID and start time so that a reused PID is never taken for it."""

    pid: int
    start: int

    @property
    def text(self) -> str:
        """Return `PID:START`, as stored with a run."""
        return f"{self.pid}:{self.start}"

    @classmethod
    def parse(cls, text: str | None) -> Owner | None:
        """Return the owner stored as `PID:START`, or None for anything else."""
        pid, _, start = (text or "").partition(":")
        return cls(int(pid), int(start)) if pid.isdigit() and start.isdigit() else None

    def alive(self) -> bool:
        """Return True while this very process runs."""
        return start_ticks(self.pid) == self.start


def me() -> Owner:
    """Return this process as an owner."""
    ticks = start_ticks(os.getpid())
    return Owner(os.getpid(), ticks if ticks is not None else 0)


def alive(text: str | None) -> bool:
    """Return True when a stored `PID:START` names a live process."""
    owner = Owner.parse(text)
    return owner is not None and owner.alive()


def live_dir() -> Path:
    """Return the directory of live leases ($XDG_STATE_HOME/sshbench/live)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "sshbench" / "live"


@dataclass
class Lease:
    """What one sshbench process has started and not yet cleaned up."""

    owner: Owner
    processes: list[tuple[int, int]] = field(default_factory=list)  # (pid, start ticks)
    cgroups: list[str] = field(default_factory=list)
    dirs: list[str] = field(default_factory=list)
    runs: list[tuple[str, int]] = field(default_factory=list)  # (database path, run id)
    netns: list[str] = field(default_factory=list)  # network namespaces of emulated links

    @property
    def empty(self) -> bool:
        """Return True when nothing is held."""
        return not (self.processes or self.cgroups or self.dirs or self.runs or self.netns)

    def to_dict(self) -> dict[str, object]:
        """Return the lease as written to its file."""
        return {
            "owner": self.owner.text,
            "processes": [list(p) for p in self.processes],
            "cgroups": self.cgroups,
            "dirs": self.dirs,
            "runs": [list(r) for r in self.runs],
            "netns": self.netns,
        }

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Lease | None:
        """Return the lease read from its file, or None when it is not one."""
        owner = Owner.parse(str(data.get("owner")))
        if owner is None:
            return None
        try:
            return cls(
                owner,
                [(int(p), int(s)) for p, s in data.get("processes", [])],  # type: ignore[attr-defined]
                [str(c) for c in data.get("cgroups", [])],  # type: ignore[attr-defined]
                [str(d) for d in data.get("dirs", [])],  # type: ignore[attr-defined]
                [(str(db), int(r)) for db, r in data.get("runs", [])],  # type: ignore[attr-defined]
                [str(n) for n in data.get("netns", [])],  # type: ignore[attr-defined]
            )
        except (TypeError, ValueError):
            return None


class Keeper:
    """This process's lease: every change is written at once; the guardian starts with the first entry."""

    def __init__(self, owner_wait: float = OWNER_WAIT) -> None:
        self.lease = Lease(me())
        self.owner_wait = owner_wait  # what the guardian waits for this process's PID to go once the pipe closes
        self.path = live_dir() / f"{self.lease.owner.pid}-{self.lease.owner.start}.json"
        self.guardian: subprocess.Popen[bytes] | None = None
        self.pipe: int | None = None  # our end of the guardian's stdin: closed only when we exit
        self.lock = threading.Lock()  # a fleet measures hosts from several threads

    def process(self, pid: int) -> None:
        """Record a process this one started."""
        ticks = start_ticks(pid)
        if ticks is not None:
            self._change(lambda lease: lease.processes.append((pid, ticks)))

    def directory(self, path: Path) -> None:
        """Record a private directory (and mark it as ours)."""
        with contextlib.suppress(OSError):  # unmarked, it is never removed by a reaper: only left behind
            (path / MARKER).write_text(self.lease.owner.text + "\n")
        self._change(lambda lease: lease.dirs.append(str(path)))

    def cgroup(self, path: Path) -> None:
        """Record a cgroup this process created."""
        self._change(lambda lease: lease.cgroups.append(str(path)))

    def namespace(self, name: str) -> None:
        """Record a network namespace this process created."""
        self._change(lambda lease: lease.netns.append(name))

    def run(self, db: Path, run_id: int) -> None:
        """Record the run this process is writing."""
        self._change(lambda lease: lease.runs.append((str(db.resolve()), run_id)))

    def forget(
        self, *, pid: int | None = None, path: Path | None = None, run: int | None = None, netns: str | None = None
    ) -> None:
        """Drop an entry once it has been cleaned up (a process reaped, a directory, cgroup or namespace removed,
        a run ended)."""

        def drop(lease: Lease) -> None:
            lease.netns = [n for n in lease.netns if n != netns]
            lease.processes = [p for p in lease.processes if p[0] != pid]
            lease.cgroups = [c for c in lease.cgroups if c != str(path)]
            lease.dirs = [d for d in lease.dirs if d != str(path)]
            lease.runs = [r for r in lease.runs if r[1] != run]

        self._change(drop)

    def _change(self, change: Callable[[Lease], None]) -> None:
        """Apply a change and write the lease (or remove its file once it is empty)."""
        with self.lock:
            self._apply(change)

    def _apply(self, change: Callable[[Lease], None]) -> None:
        """Apply a change and write the lease (the caller holds the lock)."""
        change(self.lease)
        if self.lease.empty:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            tidy()  # leave no empty folders behind either
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            partial = self.path.with_suffix(".tmp")
            partial.write_text(json.dumps(self.lease.to_dict()))
            os.replace(partial, self.path)
        except OSError:
            return  # an unwritable state directory must not stop a measurement; only a kill would leave things
        self._guard()

    def start_guardian(self) -> None:
        """Start the guardian now, before this process moves into namespaces it must outlive (targets/link/userns)."""
        with self.lock:
            self._guard()

    def _guard(self) -> None:
        """Start the guardian once: it reaps this lease as soon as this process ends without cleaning up."""
        if self.pipe is not None:  # started (or tried: then the next sshbench command reaps instead)
            return
        read_end, self.pipe = os.pipe()  # both non-inheritable: no other child holds the write end
        try:
            self.guardian = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "sshbench.guardian",
                    str(self.path),
                    self.lease.owner.text,
                    f"{self.owner_wait:g}",
                ],
                stdin=read_end,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # Ctrl-C in the terminal and a process-group kill do not reach it
            )
        except OSError:
            self.guardian = None
        finally:
            os.close(read_end)


_KEEPER: Keeper | None = None


def keeper() -> Keeper:
    """Return this process's lease keeper."""
    global _KEEPER
    if _KEEPER is None or _KEEPER.lease.owner.pid != os.getpid():
        _KEEPER = Keeper()
    return _KEEPER


@contextlib.contextmanager
def private_dir(prefix: str, parent: str | None = None) -> Iterator[Path]:
    """Yield a new 0700 temporary directory (in `parent`, else the temp dir), recorded in the lease until removed."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    try:
        keeper().directory(path)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        keeper().forget(path=path)


# --- reaping --------------------------------------------------------------------------------------------


def _kill(pid: int) -> None:
    """Send SIGKILL to a process, ignoring one that is already gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)


def _empty_cgroup(path: Path) -> None:
    """Kill every process in a cgroup, wait for it to empty, and remove it."""
    deadline = time.monotonic() + KILL_WAIT
    while time.monotonic() < deadline:
        try:
            pids = [int(p) for p in (path / "cgroup.procs").read_text().split()]
        except OSError:
            break
        for pid in pids:
            _kill(pid)
        with contextlib.suppress(OSError):
            path.rmdir()
            return
        time.sleep(0.02)
    with contextlib.suppress(OSError):
        path.rmdir()


def remove_netns(name: str) -> None:
    """Kill every process left in a network namespace of ours and delete it (its devices go with it); one known by
    its identity (`net:[INODE]`, a normal user's, unnamed) goes with the last of them."""
    if name.startswith("net:["):
        for entry in Path("/proc").iterdir():
            with contextlib.suppress(OSError, ValueError):
                if (
                    entry.name.isdigit()
                    and os.readlink(entry / "ns" / "net") == name
                    and int(entry.name) != os.getpid()
                ):
                    _kill(int(entry.name))
        return
    ip = shutil.which("ip") or "/usr/sbin/ip"
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        found = subprocess.run([ip, "netns", "pids", name], capture_output=True, text=True, timeout=10)
        for pid in found.stdout.split():
            _kill(int(pid))
        subprocess.run([ip, "netns", "delete", name], capture_output=True, timeout=10, check=False)


def reap(lease: Lease, settle: Settle | None) -> None:
    """Undo what a dead owner left: its processes, cgroups, marked directories; mark its runs interrupted."""
    for pid, ticks in lease.processes:
        if start_ticks(pid) == ticks:
            _kill(pid)
    for cgroup in lease.cgroups:
        _empty_cgroup(Path(cgroup))
    for name in lease.netns:
        remove_netns(name)
    for directory in map(Path, lease.dirs):
        with contextlib.suppress(OSError):
            if (directory / MARKER).read_text().strip() == lease.owner.text:
                shutil.rmtree(directory, ignore_errors=True)
    for db in sorted({db for db, _ in lease.runs}):
        if settle is not None:
            with contextlib.suppress(Exception):  # a locked or vanished database: readers still see it as dead
                settle(db)


def reap_file(path: Path, settle: Settle | None) -> Lease | None:
    """Reap one lease file if its owner is dead; return the lease reaped, or None."""
    claim = path.with_name(f"{path.name}.reaping-{os.getpid()}")
    try:
        lease = Lease.from_dict(json.loads(path.read_text()))
    except (OSError, ValueError):
        return None
    if lease is not None and lease.owner.alive():
        return None
    try:
        os.rename(path, claim)  # atomic: of two reapers, one wins
    except OSError:
        return None
    if lease is not None:
        reap(lease, settle)
    with contextlib.suppress(OSError):
        claim.unlink()
    return lease


def reap_stale(settle: Settle | None) -> list[Lease]:
    """Reap every lease whose owner is gone (left by a killed sshbench); return the leases reaped."""
    folder = live_dir()
    if not folder.is_dir():
        return []
    reaped = [lease for path in sorted(folder.glob("*.json")) if (lease := reap_file(path, settle)) is not None]
    tidy()
    return reaped


def tidy() -> None:
    """Remove the lease folders once no lease is left in them."""
    with contextlib.suppress(OSError):
        live_dir().rmdir()
        live_dir().parent.rmdir()
