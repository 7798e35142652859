"""The embedded target: a private OpenSSH sshd on 127.0.0.1 with fresh keys, torn down on every exit path.

Everything lives in one 0700 directory created for the run: host keys, a client key, known_hosts,
sshd_config, ssh_config, and an empty HOME. The user's ~/.ssh is never read or written: the client
runs with `-F <private ssh_config>` (which also stops ssh creating ~/.ssh) and its own known_hosts.

Shell start-up files are kept out of the numbers with `SetEnv HOME=<empty dir>` in sshd_config:
sshd still runs commands through the login shell (as it must), but that shell finds no ~/.bashrc,
~/.zshenv or other rc file to source.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import psutil

from sshbench.discover import client_algorithms
from sshbench.errors import ExitCode, SshbenchError
from sshbench.proc import require_binary
from sshbench.target import Target

HOST_KEY_TYPES = ("ed25519", "ecdsa", "rsa")
ALIAS = "sshbench-local"
START_TIMEOUT = 10.0
ALGORITHM_OPTIONS = {"Ciphers": "cipher", "MACs": "mac", "KexAlgorithms": "kex", "HostKeyAlgorithms": "hostkey"}


@dataclass(frozen=True)
class Tools:
    """Absolute paths of the OpenSSH binaries used for the embedded server."""

    ssh: str
    sshd: str
    keygen: str

    @classmethod
    def find(cls) -> Tools:
        """Locate ssh, sshd and ssh-keygen or fail naming the package."""
        return cls(
            ssh=require_binary("ssh", "openssh-client"),
            sshd=require_binary("sshd", "openssh-server"),
            keygen=require_binary("ssh-keygen", "openssh-client"),
        )


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago (chosen by the kernel)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _generate_keys(keygen: str, workdir: Path) -> None:
    """Generate host keys and one client key in parallel."""
    jobs = [(f"host_{t}", t) for t in HOST_KEY_TYPES] + [("client_ed25519", "ed25519")]
    procs = [
        subprocess.Popen(
            [keygen, "-q", "-t", kind, "-N", "", "-C", "sshbench", "-f", str(workdir / name)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for name, kind in jobs
    ]
    for proc, (name, _) in zip(procs, jobs, strict=True):
        _, err = proc.communicate(timeout=60)
        if proc.returncode != 0:
            raise SshbenchError(
                f"ssh-keygen failed for {name}: {err.decode(errors='replace').strip()}",
                place=str(workdir),
                fix="check that ssh-keygen works and the temporary directory is writable",
                code=ExitCode.SERVER_START,
            )


def _algorithm_lines(ssh: str) -> list[str]:
    """Return sshd_config lines enabling every algorithm this OpenSSH supports (CBC, 3DES, SHA-1 too)."""
    supported = client_algorithms(ssh)
    return [f"{option} {','.join(supported[kind])}" for option, kind in ALGORITHM_OPTIONS.items() if supported[kind]]


class EmbeddedServer:
    """Start a throw-away sshd on 127.0.0.1 for the duration of a `with` block."""

    def __init__(self, tools: Tools | None = None) -> None:
        self.tools = tools or Tools.find()
        self.user = pwd.getpwuid(os.getuid()).pw_name
        self.workdir: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.port = 0

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

    def start(self) -> Target:
        """Create keys and configs, start sshd, and wait until it listens."""
        self.workdir = Path(tempfile.mkdtemp(prefix="sshbench-"))
        os.chmod(self.workdir, 0o700)
        (self.workdir / "home").mkdir(mode=0o700)
        _generate_keys(self.tools.keygen, self.workdir)
        shutil.copyfile(self.workdir / "client_ed25519.pub", self.workdir / "authorized_keys")
        if os.geteuid() == 0:
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # privilege separation directory
        algorithms = _algorithm_lines(self.tools.ssh)
        last_error = ""
        for _attempt in range(3):  # a free port can be taken between choosing and binding it
            self.port = free_port()
            self._write_configs(algorithms)
            last_error = self._launch()
            if not last_error:
                return self._target()
        raise SshbenchError(
            f"the embedded sshd did not start: {last_error}",
            place=f"{self.tools.sshd} -f {self.workdir}/sshd_config",
            fix="run `sshd -t -f` on that file to see why, or use a remote TARGET",
            code=ExitCode.SERVER_START,
        )

    def _write_configs(self, algorithms: list[str]) -> None:
        """Write sshd_config, ssh_config and known_hosts for the chosen port."""
        d = self.workdir
        assert d is not None
        server = [
            f"Port {self.port}",
            "ListenAddress 127.0.0.1",
            *(f"HostKey {d}/host_{t}" for t in HOST_KEY_TYPES),
            f"AuthorizedKeysFile {d}/authorized_keys",
            f"PidFile {d}/sshd.pid",
            f"AllowUsers {self.user}",
            "PermitRootLogin prohibit-password",
            # Keys live in a private 0700 dir under the temp dir, whose sticky world-writable
            # parent StrictModes would reject.
            "StrictModes no",
            "UsePAM no",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "PubkeyAuthentication yes",
            "UseDNS no",
            "PrintMotd no",
            "PrintLastLog no",
            "Banner none",
            "X11Forwarding no",
            "AllowTcpForwarding no",
            "AllowAgentForwarding no",
            "PermitTTY no",
            "MaxStartups 100:30:200",
            "LoginGraceTime 30",
            "LogLevel VERBOSE",
            f"SetEnv HOME={d}/home",
            *algorithms,
        ]
        (d / "sshd_config").write_text("\n".join(server) + "\n")
        client = [
            f"Host {ALIAS}",
            "  HostName 127.0.0.1",
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
        known = [
            f"[127.0.0.1]:{self.port} {(d / f'host_{t}.pub').read_text().split(' sshbench')[0].strip()}"
            for t in HOST_KEY_TYPES
        ]
        (d / "known_hosts").write_text("\n".join(known) + "\n")

    def _launch(self) -> str:
        """Start sshd and wait for it to listen; return '' on success or the reason it failed."""
        d = self.workdir
        assert d is not None
        log = d / "sshd.log"
        log.write_text("")
        self.process = subprocess.Popen(
            [self.tools.sshd, "-D", "-e", "-f", str(d / "sshd_config"), "-E", str(log)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            text = log.read_text(errors="replace")
            if "Server listening on" in text:
                return ""
            if self.process.poll() is not None:
                return " / ".join(text.strip().splitlines()[-3:]) or f"exit status {self.process.returncode}"
            time.sleep(0.02)
        self._stop_process()
        return f"not listening after {START_TIMEOUT:.0f} s"

    def _target(self) -> Target:
        """Return the Target that reaches this server."""
        assert self.workdir is not None
        return Target(
            spec="local",
            destination=ALIAS,
            options=("-F", str(self.workdir / "ssh_config")),
            host="127.0.0.1",
            port=self.port,
            embedded=True,
            user=self.user,
        )

    @property
    def pid(self) -> int | None:
        """Return the listener's PID while it runs."""
        return self.process.pid if self.process is not None and self.process.poll() is None else None

    def _stop_process(self) -> None:
        """Terminate the listener and every process it spawned, by PID, then reap the listener."""
        if self.process is None:
            return
        procs: list[psutil.Process] = []
        with contextlib.suppress(psutil.Error):
            listener = psutil.Process(self.process.pid)
            procs = [*listener.children(recursive=True), listener]
        for p in procs:
            with contextlib.suppress(psutil.Error):
                p.terminate()
        _, alive = psutil.wait_procs(procs, timeout=3)
        for p in alive:
            with contextlib.suppress(psutil.Error):
                p.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=3)
        self.process = None

    def stop(self) -> None:
        """Stop the server and remove its private directory."""
        self._stop_process()
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None
