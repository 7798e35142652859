"""What an embedded server's own log says about the connections it dropped, handed to the failed logins it explains.

OpenSSH logs each connection it drops before its banner (`-e` puts its log in the server's directory):
`drop connection #12 from [127.0.0.3]:40181 on [127.0.0.1]:2222 past MaxStartups` (or `penalty: ...`, 9.8 and later).
A failed login that knows its source port (the Go generator says it) claims the drop of that address and port; one
that knows only its source address (one `ssh` per login) claims a drop from that address when its own words say the
connection was closed before the banner. Each drop explains one login at most. Dropbear, TinySSH's tcpserver and
the Go server log no such line: their drops are said from the client's side only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

OPENSSH_DROP = re.compile(
    r"drop connection #(?P<n>\d+) from \[(?P<address>[^\]]+)\]:(?P<port>\d+) on \[[^\]]*\]:\d+ "
    r"(?P<why>past MaxStartups|penalty: .*)$"
)


@dataclass(frozen=True)
class Drop:
    """One connection the server's log says it dropped."""

    address: str
    port: int
    why: str  # `past MaxStartups`, `penalty: ...`
    line: str


def openssh_drops(lines: list[str]) -> list[Drop]:
    """Return the drops in OpenSSH log lines."""
    found = []
    for line in lines:
        m = OPENSSH_DROP.search(line)
        if m:
            found.append(Drop(m["address"], int(m["port"]), m["why"], line[m.start() :].strip()))
    return found


class DropLog:
    """Reads a server's log as it grows (whole lines only) and hands out each drop it names once."""

    def __init__(self, path: Path) -> None:
        self.path, self.offset = path, 0
        self.unclaimed: list[Drop] = []

    def skip(self) -> None:
        """Forget what the log holds so far (what happened before a step or burst)."""
        self._read()
        self.unclaimed.clear()

    def _read(self) -> None:
        """Read the lines written since the last read."""
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                chunk = f.read()
        except OSError:
            return
        whole = chunk[: chunk.rfind(b"\n") + 1]
        self.offset += len(whole)
        self.unclaimed += openssh_drops(whole.decode("utf-8", "replace").splitlines())

    def claim(self, address: str, port: int | None) -> Drop | None:
        """Return (and take) the drop of this source address and port (any port of the address when None)."""
        self._read()
        for i, d in enumerate(self.unclaimed):
            if d.address == address and (port is None or d.port == port):
                return self.unclaimed.pop(i)
        return None
