"""Ports of the embedded servers: a free one to start on, and whether a server's process listens on it yet."""

from __future__ import annotations

import os
import socket
from pathlib import Path


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago (chosen by the kernel)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def listens(pid: int, port: int) -> bool:
    """Return True when process `pid` holds a TCP socket listening on `port` (read in that process's own network
    namespace, /proc/PID/net/tcp: an emulated link's servers are not in sshbench's)."""
    try:
        inodes = {
            link[8:-1]
            for fd in os.listdir(f"/proc/{pid}/fd")
            if (link := _readlink(f"/proc/{pid}/fd/{fd}")).startswith("socket:[")
        }
        lines = Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]
    except OSError:
        return False
    for line in lines:
        fields = line.split()
        if fields[3] == "0A" and int(fields[1].rpartition(":")[2], 16) == port and fields[9] in inodes:
            return True
    return False


def _readlink(path: str) -> str:
    """Return a symlink's target, or '' when it is gone."""
    try:
        return os.readlink(path)
    except OSError:
        return ""
