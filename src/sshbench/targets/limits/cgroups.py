"""A CPU-accounting cgroup per embedded server (cgroup v2 or v1), so server CPU is counted exactly.

A server's session processes re-parent away from the listener (and inetd-style servers fork a new
process per connection), so walking the listener's children misses work. Every process forked by a
process in a cgroup stays in that cgroup: its `cpu.stat` (v2) or `cpuacct.usage` (v1) counts them all,
including processes that have already exited.

v2: `cpu.stat` exists in every cgroup, even without the cpu controller enabled. v1: the `cpuacct`
hierarchy. `SSHBENCH_CGROUP=v1|v2|none` forces one (tests use it to cover both on hybrid machines).

`contain` puts sshbench itself in a group for the duration of a job, so that every client it spawns can be
found and killed if sshbench is killed (no per-spawn cost: children are born in their parent's group).
"""

from __future__ import annotations

import contextlib
import functools
import os
import select
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from sshbench import hints, leases
from sshbench.errors import ExitCode, SshbenchError
from sshbench.ssh.hooks import placing

ENV = "SSHBENCH_CGROUP"
RMDIR_TIMEOUT = 3.0


@dataclass(frozen=True)
class CpuGroup:
    """One private cgroup that counts the CPU time of every process placed in it (and their children)."""

    path: Path
    version: str  # "v1" or "v2"

    def add(self, pid: int) -> None:
        """Move a process (and its future children) into the group."""
        (self.path / "cgroup.procs").write_text(f"{pid}\n")

    def pids(self) -> list[int]:
        """Return the processes currently in the group."""
        try:
            fd = os.open(f"{self.path}/cgroup.procs", os.O_RDONLY)
        except OSError:
            return []
        text = b""
        try:
            while chunk := os.read(fd, 1 << 16):  # a thousand sessions' PIDs may take more than one read
                text += chunk
        except OSError:
            return []
        finally:
            os.close(fd)
        return [int(p) for p in text.split()]

    def cpu_seconds(self) -> float:
        """Return user + system CPU seconds used by the group's processes since it was created."""
        fd = os.open(self.path / self.cpu_file, os.O_RDONLY)
        try:
            return self.cpu_from(os.read(fd, 4096))
        finally:
            os.close(fd)

    @property
    def cpu_file(self) -> str:
        """Return the name of the group's CPU counter: cpu.stat (v2) or cpuacct.usage (v1)."""
        return "cpu.stat" if self.version == "v2" else "cpuacct.usage"

    def cpu_from(self, data: bytes) -> float:
        """Return the CPU seconds the counter's text says."""
        if self.version != "v2":
            return int(data) / 1e9
        for line in data.split(b"\n"):
            name, _, value = line.partition(b" ")
            if name == b"usage_usec":
                return int(value) / 1e6
        raise OSError(f"no usage_usec in {self.path / 'cpu.stat'}")

    @contextlib.contextmanager
    def counter(self) -> Iterator[Callable[[], float | None]]:
        """Yield a reader of `cpu_seconds` (None when unreadable) that keeps the counter's file open for the block:
        each reading is one pread, where an open walks the cgroup filesystem (a sample reads it three times)."""
        try:
            fd = os.open(f"{self.path}/{self.cpu_file}", os.O_RDONLY)  # a str: a pathlib join is a dozen calls
        except OSError:
            yield lambda: None  # the group is gone: nothing to count, as cpu_seconds would say
            return

        def read() -> float | None:
            """Return the group's CPU seconds now."""
            try:
                return self.cpu_from(os.pread(fd, 4096, 0))
            except (OSError, ValueError):
                return None

        try:
            yield read
        finally:
            os.close(fd)

    def wait_left(self, keep: frozenset[int], deadline: float) -> bool:
        """Wait until the group holds no process but those in `keep` (one that has exited is gone, though it may be
        listed until reaped), on their pidfds: a wake-up as they exit, no polling. Return True if so by `deadline`
        (time.monotonic)."""
        gone: set[int] = set()
        while left := set(self.pids()) - keep - gone:
            if time.monotonic() >= deadline:
                return False
            gone |= _exits(left, deadline)
        return True

    def remove(self) -> None:
        """Remove the (empty) group; retry briefly while exiting processes leave it."""
        deadline = time.monotonic() + RMDIR_TIMEOUT
        while True:
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    return  # left behind empty-ish; the kernel frees it once its last zombie is reaped
                time.sleep(0.05)


def _exits(pids: set[int], deadline: float) -> set[int]:
    """Wait until each of these processes has exited, or `deadline` (time.monotonic); return those that did."""
    done, fds = set(), {}
    for pid in pids:
        try:
            fds[os.pidfd_open(pid)] = pid
        except OSError:
            done.add(pid)  # reaped already
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    try:
        while fds and (wait := deadline - time.monotonic()) > 0:
            for fd, _ in poller.poll(wait * 1000):
                poller.unregister(fd)
                done.add(fds.pop(fd))
                os.close(fd)
    finally:
        for fd in fds:
            os.close(fd)
    return done


def _mounts() -> list[tuple[str, str, set[str]]]:
    """Return (mount point, fs type, options) of cgroup mounts."""
    found = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mounts").read_text().splitlines():
            parts = line.split()
            if len(parts) >= 4 and parts[2] in ("cgroup", "cgroup2"):
                found.append((parts[1], parts[2], set(parts[3].split(","))))
    return found


@functools.cache
def _own_paths() -> dict[str, str]:
    """Return this process's cgroup path per hierarchy ('' for v2, controller names for v1), as it started
    (cached: `contain` moves sshbench into a group of its own, and new groups must not nest in it)."""
    paths: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for c in controllers.split(",") if controllers else [""]:
                paths[c] = path
    return paths


def _candidates() -> list[tuple[str, Path]]:
    """Return (version, parent directory) where a group may be created, v2 first."""
    own = _own_paths()
    out: list[tuple[str, Path]] = []
    for mount, fstype, options in _mounts():
        if fstype == "cgroup2" and "" in own:
            out.insert(0, ("v2", Path(mount) / own[""].lstrip("/")))
        elif fstype == "cgroup" and "cpuacct" in options and "cpuacct" in own:
            out.append(("v1", Path(mount) / own["cpuacct"].lstrip("/")))
    return out


@contextlib.contextmanager
def contain() -> Iterator[CpuGroup | None]:
    """Move this process into a new group for the block: every process it starts (ssh clients, helpers) is
    born there, so if sshbench dies its guardian kills them all. Yields None where no group can be made."""
    group, _ = create(f"sshbench-client-{os.getpid()}")
    if group is None:
        yield None
        return
    home = CpuGroup(group.path.parent, group.version)
    leases.keeper().cgroup(group.path)  # starts the guardian first: it must stay outside the group it reaps
    try:
        group.add(os.getpid())
    except OSError:
        group.remove()
        leases.keeper().forget(path=group.path)
        yield None
        return
    try:
        yield group
    finally:
        with contextlib.suppress(OSError):
            home.add(os.getpid())
        group.remove()
        if not group.path.exists():
            leases.keeper().forget(path=group.path)


def _first(
    candidates: list[tuple[str, Path]], name: str, setup: Callable[[CpuGroup], None]
) -> tuple[CpuGroup | None, list[str]]:
    """Make group `name` in the first candidate (version, parent) where `setup` succeeds; return (group, []) or
    (None, why each candidate failed). A group whose setup failed is removed again."""
    reasons = []
    for version, parent in candidates:
        group = CpuGroup(parent / name, version)
        try:
            group.path.mkdir()
            setup(group)
            return group, []
        except OSError as exc:
            reasons.append(f"{version} {parent}: {exc.strerror or exc}")
            with contextlib.suppress(OSError):
                group.path.rmdir()
    return None, reasons


def _accounting(group: CpuGroup) -> None:
    """Check that a new group counts CPU and takes processes."""
    group.cpu_seconds()
    if not os.access(group.path / "cgroup.procs", os.W_OK):
        raise PermissionError(13, "cgroup.procs is not writable")


def create(name: str) -> tuple[CpuGroup | None, str]:
    """Create a CPU-accounting group; return (group, '') or (None, why server CPU cannot be measured)."""
    wanted = os.environ.get(ENV, "auto")
    if wanted == "none":
        return None, f"disabled by {ENV}=none"
    group, reasons = _first([c for c in _candidates() if wanted in ("auto", c[0])], name, _accounting)
    if group is not None:
        return group, ""
    if not reasons:
        return None, "no cgroup v2 or v1 cpuacct hierarchy is mounted"
    return None, "cannot create a cgroup: " + "; ".join(reasons)


PERIOD_US = 100_000  # the quota period: 100 ms, the kernel's default


def period_us(ms: int | None) -> int:
    """Return a quota period given in ms (`--cpu-period`) in microseconds, the kernel's default when not given."""
    return ms * 1000 if ms else PERIOD_US


def _quota_candidates() -> list[tuple[str, Path]]:
    """Return (version, parent directory) where a CPU-quota group may be made: v2 with the cpu controller, else
    the v1 `cpu` hierarchy."""
    own = _own_paths()
    out: list[tuple[str, Path]] = []
    for mount, fstype, options in _mounts():
        if fstype == "cgroup2" and "" in own:
            parent = Path(mount) / own[""].lstrip("/")
            with contextlib.suppress(OSError):
                if "cpu" in (parent / "cgroup.subtree_control").read_text().split():
                    out.insert(0, ("v2", parent))
        elif fstype == "cgroup" and "cpu" in options and "cpu" in own:
            out.append(("v1", Path(mount) / own["cpu"].lstrip("/")))
    return out


def _quota_text(version: str, quota: int, period: int) -> str:
    """Return how a quota is written, per cgroup version."""
    if version == "v2":
        return f"cgroup v2 cpu.max {quota} {period}"
    return f"cgroup v1 cpu.cfs_quota_us {quota} per cpu.cfs_period_us {period}"


def limit(name: str, share: float, period: int = PERIOD_US) -> tuple[CpuGroup | None, str]:
    """Create a group whose processes together get at most `share` CPUs (0.5: half of one CPU) in each `period`
    (microseconds): v2 `cpu.max`, else v1 `cpu.cfs_quota_us`. Return (group, how it is set) or (None, why it cannot
    be made)."""
    quota = max(int(share * period), 1000)  # the kernel refuses quotas under 1 ms

    def set_quota(group: CpuGroup) -> None:
        """Write the quota into a new group."""
        if group.version == "v2":
            (group.path / "cpu.max").write_text(f"{quota} {period}\n")
        else:
            (group.path / "cpu.cfs_period_us").write_text(f"{period}\n")
            (group.path / "cpu.cfs_quota_us").write_text(f"{quota}\n")

    group, reasons = _first(_quota_candidates(), name, set_quota)
    if group is not None:
        leases.keeper().cgroup(group.path)
        return group, _quota_text(group.version, quota, period)
    if not reasons:
        return None, "no cgroup v2 with the cpu controller and no v1 cpu hierarchy is mounted"
    missing = f"; {undelegated()}" if os.geteuid() != 0 else ""
    return None, "cannot create a CPU-quota cgroup (" + "; ".join(reasons) + f"){missing}"


def undelegated() -> str:
    """Return what a normal user lacks for a CPU quota: a cgroup delegated to them, and who could delegate one."""
    manager = Path(os.environ.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}") / "systemd" / "private"
    who = (
        "a systemd user manager runs: start sshbench in a delegated scope, `systemd-run --user --scope -p "
        "Delegate=yes sshbench ...`"
        if manager.exists()
        else f"no systemd user manager runs here to delegate one: no {manager}"
    )
    return f"no cgroup with the cpu controller is delegated to you ({who})"


def release(group: CpuGroup) -> None:
    """Remove a quota group made by `limit` once its processes are gone, and drop it from the lease."""
    group.remove()
    if not group.path.exists():
        leases.keeper().forget(path=group.path)


def _place(group: CpuGroup, pid: int) -> None:
    """Move a just-started client into its quota group (one that already exited needs nothing)."""
    with contextlib.suppress(ProcessLookupError, FileNotFoundError):
        group.add(pid)


@contextlib.contextmanager
def limit_clients(share: float | None, period: int = PERIOD_US) -> Iterator[str | None]:
    """Run every ssh client started in the block under a CPU quota of `share` CPUs; yield how (None: no limit).
    Only the clients are limited, never sshbench itself, whose timing must not wait for the quota."""
    if share is None:
        yield None
        return
    group, how = limit(f"sshbench-clients-{os.getpid()}", share, period)
    if group is None:
        raise SshbenchError(
            f"cannot limit the ssh client's CPU: {how}",
            place="--client-cpu",
            fix=f"run it as root: `{hints.as_root()}`, or drop --client-cpu",
            code=ExitCode.USAGE,
        )
    try:
        with placing(lambda pid: _place(group, pid)):
            yield f"{share:.0%} of one CPU ({how})"
    finally:
        release(group)
