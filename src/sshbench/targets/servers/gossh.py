"""The Go server as an embedded target: golang.org/x/crypto/ssh with github.com/pkg/sftp (the SSH server behind Gitea,
gitlab-sshd, Teleport and soft-serve), built once from the pinned sources beside this file (gosshd/: go.mod and
go.sum pin every module) like the Go client driver, and run on 127.0.0.1 with keys of its own.

Fair settings, shown with every result: every algorithm the library supports is offered (its own defaults leave
some out); commands run as sshd runs them, `SHELL -c COMMAND` with SSH_CLIENT and SSH_CONNECTION set (so bash reads
what it reads under sshd) and HOME an empty directory; the channel window is the library's, fixed at 2 MiB; the
crypto is Go's own (no OpenSSL: no `openssl speed` ceiling and no AES-NI masking apply to it). Connections are
goroutines of the one server process, so its memory per session is the listener's growth.
"""

from __future__ import annotations

import os
import pwd
import sys
from pathlib import Path

import psutil

from sshbench import builds, products
from sshbench.errors import ExitCode, SshbenchError
from sshbench.targets.servers.base import LocalServer
from sshbench.targets.servers.openssh import shell_startup_files
from sshbench.targets.servers.tools import Tools, generate_keys, public_key

SOURCES = Path(__file__).parent / "gosshd"
BUILD = "gosshd"


def _note(text: str) -> None:
    """Say on stderr that the server is being built (once; a first build fetches the pinned modules)."""
    print(f"sshbench: {text}", file=sys.stderr, flush=True)


class GoSSHServer(LocalServer):
    """golang.org/x/crypto/ssh with pkg/sftp, one process serving every connection as goroutines."""

    product = products.GOSSH.name
    package = "a Go toolchain (Go 1.26 or later)"
    receive_window = products.GOSSH.window
    serves_in_listener = True

    def __init__(self, spec: str = "local:gossh", name: str = "gossh", tools: Tools | None = None) -> None:
        super().__init__(spec, name, tools)
        self.shell = pwd.getpwuid(os.getuid()).pw_shell or "/bin/sh"
        self.binary = ""
        self.settings = (
            "every algorithm golang.org/x/crypto/ssh supports offered; Go's own crypto (no OpenSSL)",
            "channel window fixed at 2 MiB by the library (no option)",
            f"commands run as `{self.shell} -c COMMAND` with SSH_CLIENT set, as sshd runs them; "
            "HOME of sessions: an empty directory (no shell rc files)",
            *shell_startup_files(),
        )

    def prepare(self, workdir: Path) -> None:
        """Build the server (once), create its keys and the sessions' empty home."""
        built = builds.build(BUILD, "Go", SOURCES, _note, "server")
        if built.path is None:
            raise SshbenchError(
                f"the Go SSH server cannot run here: {built.why}",
                place="local:gossh",
                fix="install Go 1.26 or later (the build fetches the pinned modules once), or leave local:gossh out",
                code=ExitCode.SERVER_START,
            )
        self.binary = built.path
        generate_keys(self.tools.keygen, workdir, self.host_key_types)
        (workdir / "home").mkdir(mode=0o700, exist_ok=True)  # the shared start may have made it

    def command(self, workdir: Path, port: int) -> list[str]:
        """Return the server's command line: its address, keys, the one authorized key, shell and home."""
        keys = [arg for t in self.host_key_types for arg in ("-hostkey", str(workdir / f"host_{t}"))]
        return [
            self.binary,
            "-listen",
            f"{self.address}:{port}",
            *keys,
            "-authorized-key",
            str(workdir / "client_ed25519.pub"),
            "-shell",
            self.shell,
            "-home",
            str(workdir / "home"),
            "-user",
            self.user,
        ]

    def host_public_keys(self, workdir: Path) -> list[str]:
        """Return the host keys it serves."""
        return [public_key(workdir / f"host_{t}.pub") for t in self.host_key_types]

    def role(self, proc: psutil.Process) -> str:
        """The one server process (listener: every connection is a goroutine of it), or a command it runs."""
        return "listener" if proc.pid == self.pid else "command"
