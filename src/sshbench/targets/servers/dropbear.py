"""Dropbear as an embedded server, with a receive window as large as OpenSSH's.

Fair settings, shown with every result: `-W 2097152`, a 2 MiB receive window like OpenSSH's session
window. Dropbear's default (24576 bytes) throttles uploads: 123 vs 262 MB/s up, 240 vs 245 down
(chacha20-poly1305, benchmarks/bench_dropbear_window.py, docs/BENCHMARKS.md).
"""

from __future__ import annotations

from pathlib import Path

from sshbench.ssh.proc import require_binary
from sshbench.targets.servers.namespace import HomeServer
from sshbench.targets.servers.tools import Tools, generate_keys, public_key

DROPBEAR_WINDOW = 2 * 2**20


class DropbearServer(HomeServer):
    """Dropbear, with a receive window as large as OpenSSH's."""

    product = "Dropbear"
    package = "dropbear-bin"
    session_process = "dropbear"

    def __init__(
        self,
        spec: str = "local:dropbear",
        name: str = "dropbear",
        tools: Tools | None = None,
        window: int | None = None,
    ) -> None:
        super().__init__(spec, name, tools)
        self.dropbear = require_binary("dropbear", self.package)
        self.convert = require_binary("dropbearconvert", self.package)
        self.window = DROPBEAR_WINDOW
        self.widen(DROPBEAR_WINDOW if window is None else window)

    def widen(self, window: int) -> None:
        """Set the receive window (-W) and the settings that name it."""
        self.window = self.receive_window = window
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
        """Return dropbear in the foreground, logging to stderr."""
        return [
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
            f"{self.address}:{port}",
            *(arg for t in self.host_key_types for arg in ("-r", str(workdir / f"db_{t}"))),
        ]
