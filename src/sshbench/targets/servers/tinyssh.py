"""TinySSH as an embedded server, started per connection by tcpserver (inetd-style); ed25519 host keys only.

Fair settings, shown with every result: `tcpserver -D` (TCP_NODELAY, as OpenSSH and Dropbear set for
sessions), `-HRl0` (no DNS or ident lookups).
"""

from __future__ import annotations

from pathlib import Path

from sshbench import products
from sshbench.ssh.proc import require_binary, run_quick
from sshbench.targets.servers.namespace import HomeServer
from sshbench.targets.servers.tools import Tools, generate_keys


class TinySSHServer(HomeServer):
    """TinySSH, started per connection by tcpserver (inetd-style); ed25519 host keys only."""

    product = "TinySSH"
    receive_window = products.TINYSSH.window
    package = "tinysshd"
    host_key_types = ("ed25519",)
    session_process = "tinysshd"
    owned_path = True  # tinysshd refuses an authorized_keys below a directory owned by neither root nor the user

    def __init__(self, spec: str = "local:tinyssh", name: str = "tinyssh", tools: Tools | None = None) -> None:
        super().__init__(spec, name, tools)
        self.tinysshd = require_binary("tinysshd", "tinysshd")
        self.makekey = require_binary("tinysshd-makekey", "tinysshd")
        self.printkey = require_binary("tinysshd-printkey", "tinysshd")
        self.tcpserver = require_binary("tcpserver", "ucspi-tcp")
        self.settings = (
            "tcpserver -HRDl0: TCP_NODELAY, no DNS/ident lookups; one tinysshd per connection",
            "host keys: ed25519 only (TinySSH supports no other)",
            self.home_setting,
        )
        self.at_once: int | None = None  # tcpserver's -c (None: its default, 40)

    def hold(self, connections: int) -> bool:
        """Raise tcpserver's limit of connections at once (-c, 40 by default) to `connections`."""
        self.at_once = connections
        self.settings = (*self.settings, f"tcpserver -c {connections}: up to {connections} connections at once")
        return True

    def make_keys(self, workdir: Path) -> None:
        """Create TinySSH's key directory and a client key."""
        generate_keys(self.tools.keygen, workdir, ())
        self._setup_tool([self.makekey, str(workdir / "tinyssh_keys")], "tinysshd-makekey")

    def host_public_keys(self, workdir: Path) -> list[str]:
        """Return the ed25519 host key from tinysshd-printkey."""
        done = run_quick([self.printkey, str(workdir / "tinyssh_keys")])
        return [line.strip() for line in done.stdout.splitlines() if line.strip()]

    def command(self, workdir: Path, port: int) -> list[str]:
        """Return tcpserver running tinysshd per connection."""
        limit = ["-c", str(self.at_once)] if self.at_once else []
        keys = str(workdir / "tinyssh_keys")
        return [self.tcpserver, "-HRDl0", *limit, self.address, str(port), self.tinysshd, keys]
