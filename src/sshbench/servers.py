"""Dropbear and TinySSH as embedded servers, and the `local:NAME` target specs that choose a server.

Both read only ~USER/.ssh/authorized_keys. They run in a private mount namespace (`unshare`) where the
server's own empty home directory is bind-mounted over the user's home: they find the client key there,
sessions find no shell rc files, and the user's real ~/.ssh is never read or written.

Fair settings, shown with every result:
- Dropbear: `-W 2097152`, a 2 MiB receive window like OpenSSH's session window. Dropbear's default
  (24576 bytes) throttles uploads: 123 vs 262 MB/s up, 240 vs 245 down (chacha20-poly1305,
  benchmarks/bench_dropbear_window.py, docs/BENCHMARKS.md).
- TinySSH: run by `tcpserver -D` (TCP_NODELAY, as OpenSSH and Dropbear set for sessions), `-HRl0` (no DNS
  or ident lookups). TinySSH supports ed25519 host keys only.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

import psutil

from sshbench.embedded import LocalServer, OpenSSHServer, Tools, generate_keys, public_key
from sshbench.errors import ExitCode, SshbenchError
from sshbench.proc import require_binary, run_quick

DROPBEAR_WINDOW = 2 * 2**20
LOCAL_PREFIX = "local:"
_PATH = re.compile(r"^/[A-Za-z0-9_./+@-]{1,400}$")
# name -> (binaries that must exist, Debian package with them)
REQUIREMENTS: dict[str, tuple[tuple[tuple[str, str], ...], str]] = {
    "openssh": ((("sshd", "openssh-server"), ("ssh-keygen", "openssh-client")), "openssh-server"),
    "dropbear": ((("dropbear", "dropbear-bin"), ("dropbearconvert", "dropbear-bin")), "dropbear-bin"),
    "tinyssh": (
        (("tinysshd", "tinysshd"), ("tinysshd-makekey", "tinysshd"), ("tcpserver", "ucspi-tcp")),
        "tinysshd ucspi-tcp",
    ),
}
KNOWN = tuple(REQUIREMENTS)


def private_home(home: Path, argv: Sequence[str], user_home: str) -> list[str]:
    """Wrap argv to run in a private mount namespace with `home` bind-mounted over the user's home."""
    unshare = require_binary("unshare", "util-linux")
    script = 'mount --bind "$1" "$2" && shift 2 && exec "$@"'
    mount = ["/bin/sh", "-c", script, "sh", str(home), user_home]
    if os.geteuid() == 0:
        return [unshare, "--mount", "--propagation", "private", *mount, *argv]
    # Not root: mount as root of a user namespace, then map back to our own uid/gid in a nested one,
    # so the server runs as us (it can only log us in) and sees the private home.
    back = [unshare, "--user", f"--map-user={os.getuid()}", f"--map-group={os.getgid()}"]
    outer = [unshare, "--user", "--map-root-user", "--mount", "--propagation", "private"]
    return [*outer, *mount, *back, *argv]


class _HomeServer(LocalServer):
    """A server that reads ~/.ssh/authorized_keys: give it a private home in a mount namespace."""

    session_process: ClassVar[str] = ""  # name of the per-connection server process
    home_setting = "HOME of sessions: an empty directory mounted over your home (no ~/.ssh, no rc files)"

    def __init__(self, name: str, spec: str, tools: Tools | None) -> None:
        super().__init__(name, spec)
        self.tools = tools or Tools.find()
        self.home = ""

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


class DropbearServer(_HomeServer):
    """Dropbear, with a receive window as large as OpenSSH's."""

    product = "Dropbear"
    package = "dropbear-bin"
    session_process = "dropbear"

    def __init__(
        self,
        tools: Tools | None = None,
        name: str = "dropbear",
        spec: str = "local:dropbear",
        window: int | None = None,
    ) -> None:
        super().__init__(name, spec, tools)
        self.dropbear = require_binary("dropbear", self.package)
        self.convert = require_binary("dropbearconvert", self.package)
        self.window = DROPBEAR_WINDOW if window is None else window
        fair = ": 2 MiB receive window like OpenSSH's (the default 24576 throttles uploads, docs/BENCHMARKS.md)"
        self.settings = (
            f"-W {self.window}" + (fair if self.window == DROPBEAR_WINDOW else ""),
            "-s -j -k: keys only, no forwarding",
            self.home_setting,
        )

    def make_keys(self, workdir: Path) -> None:
        """Generate OpenSSH keys and convert the host keys to Dropbear's format."""
        generate_keys(self.tools.keygen, workdir, self.host_key_types)
        for t in self.host_key_types:
            argv = [self.convert, "openssh", "dropbear", str(workdir / f"host_{t}"), str(workdir / f"db_{t}")]
            self._setup_tool(argv, f"dropbearconvert of the {t} host key")

    def host_public_keys(self, workdir: Path) -> list[str]:
        """Return the OpenSSH form of the converted host keys."""
        return [public_key(workdir / f"host_{t}.pub") for t in self.host_key_types]

    def command(self, workdir: Path, port: int) -> list[str]:
        """Return dropbear in the foreground, logging to stderr, inside the private-home namespace."""
        argv = [
            self.dropbear,
            "-F",
            "-E",
            "-s",
            "-j",
            "-k",
            "-W",
            str(self.window),
            "-P",
            str(workdir / "dropbear.pid"),
            "-p",
            f"127.0.0.1:{port}",
            *(arg for t in self.host_key_types for arg in ("-r", str(workdir / f"db_{t}"))),
        ]
        return private_home(workdir / "home", argv, self.home)


class TinySSHServer(_HomeServer):
    """TinySSH, started per connection by tcpserver (inetd-style); ed25519 host keys only."""

    product = "TinySSH"
    package = "tinysshd"
    host_key_types = ("ed25519",)
    session_process = "tinysshd"

    def __init__(self, tools: Tools | None = None, name: str = "tinyssh", spec: str = "local:tinyssh") -> None:
        super().__init__(name, spec, tools)
        self.tinysshd = require_binary("tinysshd", "tinysshd")
        self.makekey = require_binary("tinysshd-makekey", "tinysshd")
        self.printkey = require_binary("tinysshd-printkey", "tinysshd")
        self.tcpserver = require_binary("tcpserver", "ucspi-tcp")
        self.settings = (
            "tcpserver -HRDl0: TCP_NODELAY, no DNS/ident lookups; one tinysshd per connection",
            "host keys: ed25519 only (TinySSH supports no other)",
            self.home_setting,
        )

    def make_keys(self, workdir: Path) -> None:
        """Create TinySSH's key directory and a client key."""
        generate_keys(self.tools.keygen, workdir, ())
        self._setup_tool([self.makekey, str(workdir / "tinyssh_keys")], "tinysshd-makekey")

    def host_public_keys(self, workdir: Path) -> list[str]:
        """Return the ed25519 host key from tinysshd-printkey."""
        done = run_quick([self.printkey, str(workdir / "tinyssh_keys")])
        return [line.strip() for line in done.stdout.splitlines() if line.strip()]

    def command(self, workdir: Path, port: int) -> list[str]:
        """Return tcpserver running tinysshd per connection, inside the private-home namespace."""
        argv = [self.tcpserver, "-HRDl0", "127.0.0.1", str(port), self.tinysshd, str(workdir / "tinyssh_keys")]
        return private_home(workdir / "home", argv, self.home)


def is_local(spec: str) -> bool:
    """Return True for `local` and `local:NAME` target specs (embedded servers)."""
    return spec == "local" or spec.startswith(LOCAL_PREFIX)


def server_name(spec: str) -> str:
    """Return the server name of a local spec: openssh, dropbear, tinyssh or sshd=PATH."""
    return "openssh" if spec == "local" else spec[len(LOCAL_PREFIX) :]


def missing(spec: str) -> str | None:
    """Return a one-line hint when a local server cannot run here (binaries missing, or needs root), else None."""
    name = server_name(spec)
    if name.startswith("sshd="):
        path = name[len("sshd=") :]
        return None if os.access(path, os.X_OK) else f"{path} is not an executable file"
    if name == "tinyssh" and os.geteuid() != 0:
        # tinysshd checks that every directory above authorized_keys belongs to root or the user; in the
        # user namespace sshbench needs without root, root-owned directories appear unowned (nobody).
        return "TinySSH needs root here (its authorized_keys path check fails inside a user namespace)"
    needs, package = REQUIREMENTS[name]
    for binary, _ in needs:
        if shutil.which(binary) is None and shutil.which(binary, path="/usr/sbin:/usr/bin:/sbin:/bin") is None:
            return f"`{binary}` not found: sudo apt-get install {package} (or run scripts/setup)"
    return None


def validate(spec: str) -> str:
    """Check a local spec's form; return it or fail naming the accepted forms."""
    name = server_name(spec)
    if name in REQUIREMENTS:
        return spec
    if name.startswith("sshd="):
        path = name[len("sshd=") :]
        if _PATH.match(path) and ".." not in path.split("/"):
            return spec
    raise SshbenchError(
        f"{spec!r} is not an embedded server",
        place="TARGET / SERVER argument",
        fix="use local, local:openssh, local:dropbear, local:tinyssh or local:sshd=/absolute/path/to/sshd",
        code=ExitCode.USAGE,
    )


def make_server(spec: str) -> LocalServer:
    """Return the (not yet started) embedded server for a local spec."""
    validate(spec)
    hint = missing(spec)
    if hint:
        raise SshbenchError(
            f"the {server_name(spec)} server is not available: {hint}",
            place=spec,
            fix="install it, or choose another server",
            code=ExitCode.MISSING_BINARY,
        )
    name = server_name(spec)
    factories: dict[str, Callable[[], LocalServer]] = {
        "openssh": lambda: OpenSSHServer(name="openssh", spec=spec),
        "dropbear": lambda: DropbearServer(spec=spec),
        "tinyssh": lambda: TinySSHServer(spec=spec),
    }
    if name in factories:
        return factories[name]()
    path = os.path.abspath(name[len("sshd=") :])
    return OpenSSHServer(Tools.find(sshd=path), name=name, spec=spec)


def installed() -> list[str]:
    """Return the specs of every embedded server whose binaries are installed."""
    return [f"{LOCAL_PREFIX}{name}" for name in KNOWN if missing(f"{LOCAL_PREFIX}{name}") is None]


def every() -> list[str]:
    """Return the specs of every known embedded server (unavailable ones are reported as skipped)."""
    return [f"{LOCAL_PREFIX}{name}" for name in KNOWN]
