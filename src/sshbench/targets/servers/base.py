"""Embedded servers: private SSH servers on 127.0.0.1 with fresh keys, torn down on every exit path.

`LocalServer` holds what every embedded server shares: one 0700 directory created for the run (keys,
configs, an empty HOME, the server's log), a client ssh_config and known_hosts of its own, a CPU cgroup
that counts every server process, process roles for memory figures, and teardown. The user's ~/.ssh
is never read or written: the client runs with `-F <private ssh_config>` and its own known_hosts.

Each server type (openssh.py, dropbear.py, tinyssh.py) provides keys, its command line and process
roles. `wrap(argv)` applies the server's wrappers to that command line, in order: first
`dies_with_parent` (SIGKILL when sshbench dies), then the private home of namespace.py; a network
namespace, link shaping or a CPU limit can be added the same way. Every directory, cgroup and process
is recorded in this process's lease (sshbench.leases) as it is made, so a killed sshbench leaves nothing.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import ClassVar

import psutil

from sshbench import hints, leases
from sshbench.environment import EmbeddedInfo
from sshbench.errors import ExitCode, SshbenchError
from sshbench.ssh.destination import Target
from sshbench.ssh.proc import require_binary
from sshbench.targets.limits import cgroups
from sshbench.targets.servers import reaped
from sshbench.targets.servers.ports import free_port, listens
from sshbench.targets.servers.tools import Tools

HOST_KEY_TYPES = ("ed25519", "ecdsa", "rsa")
ALIAS = "sshbench-local"
START_TIMEOUT = 10.0
IDLE_TIMEOUT = 3.0


Wrapper = Callable[[list[str]], list[str]]  # turns a server command line into the one that runs it


def dies_with_parent(argv: list[str]) -> list[str]:
    """Wrap argv so that the server gets SIGKILL when sshbench dies (PR_SET_PDEATHSIG, set just before exec).

    The innermost wrapper: private homes and namespaces exec (never fork) into it, so the server stays
    sshbench's own child, the process whose death the kernel watches.
    """
    return [require_binary("setpriv", "util-linux"), "--pdeathsig", "KILL", "--", *argv]


class LocalServer:
    """A throw-away SSH server on 127.0.0.1 for the duration of a `with` block."""

    product: ClassVar[str] = "SSH server"
    package: ClassVar[str] = ""
    host_key_types: ClassVar[tuple[str, ...]] = HOST_KEY_TYPES
    receive_window: int | None = None  # its SSH channel receive window in bytes, where known (bounds uploads)
    serves_in_listener: ClassVar[bool] = False  # connections are served inside the listener (threads, goroutines)

    def __init__(self, spec: str, name: str = "", tools: Tools | None = None) -> None:
        self.spec, self.name = spec, name or spec
        self.tools = tools or Tools.find()  # ssh-keygen makes every server's keys
        self.user = pwd.getpwuid(os.getuid()).pw_name
        self.workdir: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.group: cgroups.CpuGroup | None = None
        self.counting = contextlib.ExitStack()  # the group's CPU counter, held open from the first sample to stop()
        self.reader: Callable[[], float | None] | None = None
        self.cpu_note = ""  # why server CPU is not measured, when it is not
        self.settings: tuple[str, ...] = ()  # the settings used, shown with the results
        self.wrappers: list[Wrapper] = [dies_with_parent]  # applied to the command line by `wrap`, in order
        self.environment: dict[str, str] | None = None  # the server's environment (None: sshbench's own)
        self.cpu_share: float | None = None  # at most this many CPUs for every server process (0.5: half of one)
        self.cpu_period = cgroups.PERIOD_US  # in which the share is counted, microseconds
        self.quota: cgroups.CpuGroup | None = None
        self.limit_setting = ""  # how the CPU limit is set, shown with the settings
        self.address = "127.0.0.1"  # where it listens: an emulated link's namespace has its own (targets/link/netns.py)
        self.helpers: set[int] = set()  # listeners counted with the server (`tools` baselines) but serving no SSH

    def __enter__(self) -> Target:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # --- what each server type provides -------------------------------------------------------------
    def prepare(self, workdir: Path) -> None:
        """Create the server's keys and files in its private directory."""
        raise NotImplementedError

    def command(self, workdir: Path, port: int) -> list[str]:
        """Return the argv that runs the server in the foreground on 127.0.0.1:port."""
        raise NotImplementedError

    def host_public_keys(self, workdir: Path) -> list[str]:
        """Return the server's public host keys as `type base64`."""
        raise NotImplementedError

    def role(self, proc: psutil.Process) -> str:
        """Return the role of one of the server's processes (listener, session, command...)."""
        raise NotImplementedError

    def widen(self, window: int) -> None:
        """Set the server's receive window (bytes) before it starts; only a type whose product has an option for it
        (products.Product.window_option) overrides this."""
        raise NotImplementedError(f"{self.product} has no receive-window option")

    def configure(self, options: Sequence[str]) -> None:
        """Set server options (`KEY=VALUE`) before it starts; only a type whose product takes them
        (products.Product.options) overrides this."""
        raise NotImplementedError(f"{self.product} takes no sshd_config options")

    def hold(self, connections: int) -> bool:
        """Let the server keep `connections` connections at once (set before it starts); return False when it does
        already (only a type with a limit of its own, TinySSH's tcpserver, overrides this)."""
        return False

    def retry_plainer(self) -> bool:
        """Drop optional settings after a failed start; return False when there is nothing left to drop."""
        return False

    def wrap(self, argv: list[str]) -> list[str]:
        """Return the command line as it runs: each wrapper (private home, namespace, limit) applied in order."""
        for wrapper in self.wrappers:
            argv = wrapper(argv)
        return argv

    def info(self) -> EmbeddedInfo:
        """Return what the results must say about this server: its settings and CPU accounting."""
        accounting = f"cgroup {self.group.version} ({self.group.path})" if self.group else None
        if accounting is None and self.cpu_note:
            accounting = reaped.accounting(self.cpu_note)
        settings = (*self.settings, self.limit_setting) if self.limit_setting else self.settings
        return EmbeddedInfo(
            self.name, self.product, settings, accounting, self.cpu_note or None, self.receive_window, self.cpu_share
        )

    # --- shared life cycle --------------------------------------------------------------------------
    def start(self) -> Target:
        """Create keys and configs, start the server, and wait until it listens."""
        self.workdir = Path(tempfile.mkdtemp(prefix="sshbench-"))
        os.chmod(self.workdir, 0o700)
        leases.keeper().directory(self.workdir)  # removed by the guardian or the next sshbench if this one dies
        (self.workdir / "home").mkdir(mode=0o700)
        self.prepare(self.workdir)
        self.group, self.cpu_note = cgroups.create(self.workdir.name)
        if self.group is not None:
            leases.keeper().cgroup(self.group.path)
        if self.cpu_share is not None:
            self._limit_cpu(self.cpu_share)
        last_error = ""
        for _attempt in range(4):  # a free port can be taken between choosing and binding it
            self.port = free_port()
            self._write_client_config(self.workdir)
            last_error = self._launch(self.wrap(self.command(self.workdir, self.port)))
            if not last_error:
                return self._target()
            if "Address already in use" not in last_error and not self.retry_plainer():
                break
        raise SshbenchError(
            f"the embedded {self.product} server did not start: {last_error}",
            place=f"{self.name} in {self.workdir}",
            fix=self._start_fix(),
            code=ExitCode.SERVER_START,
        )

    def _start_fix(self) -> str:
        """Return the fix for a server that did not start: a path given by the user is named as such."""
        if "=" in self.name:
            path = self.name.split("=", 1)[1]
            return (
                f"give the path of a {self.product} server binary ({path} -V prints an OpenSSH version; "
                "scripts/openssh10 fetches OpenSSH 10 into ~/.cache/sshbench/openssh-10/usr/sbin/sshd)"
            )
        return f"check that {self.product} runs on this machine ({self.package}), or use a remote TARGET"

    def _limit_cpu(self, share: float) -> None:
        """Make the CPU-quota group every server process will run in, or fail saying why it cannot be made."""
        assert self.workdir is not None
        self.quota, how = cgroups.limit(f"{self.workdir.name}-limit", share, self.cpu_period)
        if self.quota is None:
            raise SshbenchError(
                f"cannot limit the {self.product} server's CPU: {how}",
                place="--server-cpu",
                fix=f"run it as root: `{hints.as_root()}`, or drop --server-cpu",
                code=ExitCode.USAGE,
            )
        self.limit_setting = f"CPU limit {share:.0%} of one CPU ({how})"

    def _write_client_config(self, d: Path) -> None:
        """Write the client's ssh_config and known_hosts for the chosen port."""
        client = [
            f"Host {ALIAS}",
            f"  HostName {self.address}",
            f"  Port {self.port}",
            f"  User {self.user}",
            f"  IdentityFile {d}/client_ed25519",
            "  IdentitiesOnly yes",
            "  IdentityAgent none",
            f"  UserKnownHostsFile {d}/known_hosts",
            "  GlobalKnownHostsFile /dev/null",
            "  StrictHostKeyChecking yes",
            "  UpdateHostKeys no",
            "  CheckHostIP no",
            "  ConnectTimeout 10",
            "  LogLevel INFO",
        ]
        (d / "ssh_config").write_text("\n".join(client) + "\n")
        known = [f"[{self.address}]:{self.port} {key}" for key in self.host_public_keys(d)]
        (d / "known_hosts").write_text("\n".join(known) + "\n")

    @property
    def log(self) -> Path:
        """Return the file the server's own log (its stdout and stderr) goes to."""
        assert self.workdir is not None, "the server has not started"
        return self.workdir / "server.log"

    def _launch(self, argv: list[str]) -> str:
        """Start the server and wait for it to listen; return '' on success or the reason it failed."""
        log = self.log
        with open(log, "wb") as sink:
            self.process = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=sink, stderr=sink, env=self.environment
            )
        leases.keeper().process(self.process.pid)
        if self.quota is not None:
            self.quota.add(self.process.pid)  # before it accepts a connection: its children are limited too
        if self.group is not None:
            try:
                self.group.add(self.process.pid)  # before any connection: every later fork is counted
            except OSError as exc:
                self.cpu_note = f"cannot place the server in cgroup {self.group.path}: {exc.strerror}"
                self.group = None
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self._listening():
                return ""
            if self.process.poll() is not None:
                text = log.read_text(errors="replace").strip()
                return " / ".join(text.splitlines()[-3:]) or f"exit status {self.process.returncode}"
            time.sleep(0.02)
        self._stop_processes()
        return f"not listening on {self.address}:{self.port} after {START_TIMEOUT:.0f} s"

    def _listening(self) -> bool:
        """Return True once one of the server's processes listens on the chosen port (in its own namespace)."""
        return any(listens(p.pid, self.port) for p in self.processes())

    def _target(self) -> Target:
        """Return the Target that reaches this server."""
        assert self.workdir is not None
        return Target(
            spec=self.spec,
            destination=ALIAS,
            options=("-F", str(self.workdir / "ssh_config")),
            host=self.address,
            port=self.port,
            embedded=True,
            user=self.user,
            server=self.name,
        )

    @property
    def pid(self) -> int | None:
        """Return the listener's PID while it runs."""
        return self.process.pid if self.process is not None and self.process.poll() is None else None

    def processes(self) -> list[psutil.Process]:
        """Return the server's live processes: its cgroup's, else the listener and its descendants."""
        pids: set[int] = set(self.group.pids()) if self.group is not None else set()
        if self.group is None and self.pid is not None:  # scanning /proc is costlier and misses orphans
            with contextlib.suppress(psutil.Error):
                listener = psutil.Process(self.pid)
                pids |= {listener.pid, *(c.pid for c in listener.children(recursive=True))}
        procs = []
        for pid in sorted(pids):
            with contextlib.suppress(psutil.Error):
                p = psutil.Process(pid)
                if p.status() != psutil.STATUS_ZOMBIE:
                    procs.append(p)
        return procs

    def connection_processes(self) -> list[psutil.Process]:
        """Return the processes serving connections (everything but the listener and helper listeners)."""
        return [p for p in self.processes() if p.pid != self.pid and p.pid not in self.helpers]

    def connection_pids(self) -> frozenset[int]:
        """Return the PIDs of `connection_processes`: from the cgroup's list alone where there is one (no /proc
        read for each: a sample asks before it starts)."""
        if self.group is None:
            return frozenset(p.pid for p in self.connection_processes())
        return frozenset(self.group.pids()) - self.helpers - {self.pid}

    def serving_pids(self) -> frozenset[int]:
        """Return the PIDs of the processes whose memory serves connections: the connection processes, and the
        listener of a server that serves connections inside it (from the cgroup's list alone where there is one)."""
        if not self.serves_in_listener:
            return self.connection_pids()
        if self.group is None:
            return frozenset(p.pid for p in self.processes() if p.pid not in self.helpers)
        return frozenset(self.group.pids()) - self.helpers

    def cpu_seconds(self) -> float | None:
        """Return CPU seconds used by every server process so far (None without a cgroup)."""
        if self.group is None:
            return None
        try:
            return self.group.cpu_seconds()
        except OSError:
            return None

    def reaped_cpu_seconds(self) -> float | None:
        """Return the CPU seconds of the listener and of every descendant it (or they) reaped so far, from /proc: the
        server's CPU without a cgroup, short of the connections still open (None once the listener is gone)."""
        t = reaped.times(self.pid)
        return None if t is None else float(t.user + t.system + t.children_user + t.children_system)

    def listener_cpu_seconds(self) -> float | None:
        """Return the listener's own CPU seconds so far, every thread's, without its children's (None: gone)."""
        t = reaped.times(self.pid)
        return None if t is None else float(t.user + t.system)

    def wait_idle(self, timeout: float = IDLE_TIMEOUT, standing: frozenset[int] = frozenset()) -> bool:
        """Wait until no connection is being served but those of the processes in `standing` (a master connection
        that outlives every sample: only the listener is left otherwise); return True if so. With a cgroup, on
        the processes' pidfds (a wake-up as they exit); without one, from /proc every 10 ms."""
        deadline = time.monotonic() + timeout
        if self.group is not None:
            listener = {self.process.pid} if self.process is not None else set()  # its number: no poll of it
            keep = frozenset(standing | self.helpers | listener)
            return self.group.wait_left(keep, deadline)
        while time.monotonic() < deadline:
            if not [p for p in self.connection_processes() if p.pid not in standing] and not self._unreaped(standing):
                return True
            time.sleep(0.01)
        return False

    def _unreaped(self, standing: frozenset[int]) -> list[int]:
        """Return the listener's children that exited and are not reaped yet (their CPU is not its children's yet)."""
        return reaped.unreaped(self.pid, standing)

    def cpu_counter(self) -> contextlib.AbstractContextManager[Callable[[], float | None]]:
        """Return a block in which a reader of `cpu_seconds` is one pread: the group's counter, opened at the first
        block and kept open until the server stops (an open walks the cgroup filesystem, in every sample)."""
        if self.group is None:  # no cgroup: the listener's and what it reaped (wait_idle waits for the reaping)
            return contextlib.nullcontext(self.reaped_cpu_seconds)
        if self.reader is None:
            self.reader = self.counting.enter_context(self.group.counter())
        return contextlib.nullcontext(self.reader)

    def _stop_processes(self) -> None:
        """Terminate the listener and every process it spawned, by PID, then reap the listener."""
        if self.process is None:
            return
        procs = self.processes()
        for p in procs:
            with contextlib.suppress(psutil.Error):
                p.terminate()
        _, alive = psutil.wait_procs(procs, timeout=3)
        for p in alive:
            with contextlib.suppress(psutil.Error):
                p.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=3)
        leases.keeper().forget(pid=self.process.pid)
        self.process = None

    def stop(self) -> None:
        """Stop the server, remove its cgroup and its private directory."""
        self._stop_processes()
        self.counting.close()
        self.reader = None
        if self.group is not None:
            self.group.remove()
            if not self.group.path.exists():  # else the guardian or the next sshbench empties it
                leases.keeper().forget(path=self.group.path)
        if self.quota is not None:
            cgroups.release(self.quota)
            self.quota = None
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            leases.keeper().forget(path=self.workdir)
            self.workdir = None
