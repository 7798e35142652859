"""A private home for servers that read only ~USER/.ssh/authorized_keys (Dropbear, TinySSH).

They run in a private mount namespace (`unshare`) where the server's own empty home directory is
bind-mounted over the user's home: they find the client key there, sessions find no shell rc files, and
the user's real ~/.ssh is never read or written. `HomeServer` adds that wrapper to the server's command.
"""

from __future__ import annotations

import os
import pwd
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import psutil

from sshbench.errors import ExitCode, SshbenchError
from sshbench.ssh.proc import require_binary, run_quick
from sshbench.targets.servers.base import LocalServer
from sshbench.targets.servers.tools import Tools


def private_home(home: Path, argv: Sequence[str], user_home: str, owned_root: Path | None = None) -> list[str]:
    """Wrap argv to run in a private mount namespace with `home` bind-mounted over the user's home; not root and
    with `owned_root`, in a root of the user's own built there (ownedroot.py: every directory above the home the
    user's, for a server that checks who owns them)."""
    unshare = require_binary("unshare", "util-linux")
    script = 'mount --bind "$1" "$2" && shift 2 && exec "$@"'
    mount = ["/bin/sh", "-c", script, "sh", str(home), user_home]
    if os.geteuid() == 0:
        return [unshare, "--mount", "--propagation", "private", *mount, *argv]
    if owned_root is not None:
        owned_root.mkdir(mode=0o700, exist_ok=True)
        mount = [sys.executable, "-m", "sshbench.targets.servers.ownedroot", str(home), user_home, str(owned_root)]
    # Not root: mount as root of a user namespace, then map back to our own uid/gid in a nested one,
    # so the server runs as us (it can only log us in) and sees the private home.
    back = [unshare, "--user", f"--map-user={os.getuid()}", f"--map-group={os.getgid()}"]
    outer = [unshare, "--user", "--map-root-user", "--mount", "--propagation", "private"]
    return [*outer, *mount, *back, *argv]


class HomeServer(LocalServer):
    """A server that reads ~/.ssh/authorized_keys: give it a private home in a mount namespace."""

    session_process: ClassVar[str] = ""  # name of the per-connection server process
    owned_path: ClassVar[bool] = False  # checks who owns the directories above authorized_keys (not root: ownedroot)
    home_setting = "HOME of sessions: an empty directory mounted over your home (no ~/.ssh, no rc files)"

    def __init__(self, spec: str, name: str, tools: Tools | None) -> None:
        super().__init__(spec, name, tools)
        self.home = ""
        self.wrappers.append(self._in_private_home)

    def _in_private_home(self, argv: list[str]) -> list[str]:
        """Wrap the server's command line in the private-home mount namespace."""
        assert self.workdir is not None
        owned = self.workdir / "root" if self.owned_path else None
        return private_home(self.workdir / "home", argv, self.home, owned)

    def prepare(self, workdir: Path) -> None:
        """Check the home, create keys and server files, authorize the client key."""
        self.home = self._user_home(workdir)
        self.make_keys(workdir)
        ssh_dir = workdir / "home" / ".ssh"
        ssh_dir.mkdir(mode=0o700)
        shutil.copyfile(workdir / "client_ed25519.pub", ssh_dir / "authorized_keys")
        os.chmod(ssh_dir / "authorized_keys", 0o600)

    def make_keys(self, workdir: Path) -> None:
        """Create the client key and the server's host keys."""
        raise NotImplementedError

    def _setup_tool(self, argv: list[str], what: str) -> None:
        """Run a key tool of the server's package, or fail naming it."""
        done = run_quick(argv)
        if done.returncode != 0:
            raise SshbenchError(
                f"{what} failed: {done.stderr.strip()}",
                place=str(self.workdir),
                fix=f"check that {Path(argv[0]).name} works (package {self.package})",
                code=ExitCode.SERVER_START,
            )

    def role(self, proc: psutil.Process) -> str:
        """Listener, the per-connection server process (session), or the command it runs."""
        if proc.pid == self.pid:
            return "listener"
        try:
            return "session" if proc.name() == self.session_process else "command"
        except psutil.Error:
            return "command"

    def _user_home(self, workdir: Path) -> str:
        """Return the user's home directory, checking that hiding it does not hide the server's files."""
        home = Path(pwd.getpwuid(os.getuid()).pw_dir).resolve()
        if not home.is_dir():
            raise SshbenchError(
                f"home directory {home} of {self.user} does not exist",
                place=f"embedded {self.product} server",
                fix="the private home is mounted over your home directory: it must exist",
                code=ExitCode.SERVER_START,
            )
        if workdir.resolve().is_relative_to(home):
            raise SshbenchError(
                f"the temporary directory {workdir.parent} is inside your home directory {home}",
                place=f"embedded {self.product} server",
                fix="set TMPDIR to a directory outside your home (e.g. TMPDIR=/tmp)",
                code=ExitCode.SERVER_START,
            )
        return str(home)
