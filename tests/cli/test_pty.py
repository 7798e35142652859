"""What a user sees in an 80-column terminal: a quickstart-style run in a real pseudo-terminal."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from conftest import sshbench
from sshbench.model import Scenario

pytestmark = pytest.mark.integration
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


def run_in_pty(env: dict[str, str], args: list[str], columns: int, timeout: float = 300) -> tuple[int, str]:
    """Run the CLI with a terminal of `columns` on stdin/stdout/stderr; return its status and plain output."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in env.items() if k not in ("COLUMNS", "LINES")}
    argv = [sys.executable, "-m", "sshbench", *args]
    proc = subprocess.Popen(argv, stdin=follower, stdout=follower, stderr=follower, env=env, close_fds=True)
    os.close(follower)
    chunks, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            data = os.read(leader, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    code = proc.wait(timeout=30)
    return code, ANSI.sub("", b"".join(chunks).decode(errors="replace")).replace("\r\n", "\n")


@pytest.mark.alone  # reads the plan line a progress bar redraws around: under another test's load it was lost once
def test_an_80_column_terminal_shows_every_median(cli_env: dict[str, str], tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    args = [
        "run",
        "--db",
        str(db),
        "--kex",
        "curve25519-sha256,ecdh-sha2-nistp256",
        "--hostkey",
        "ssh-ed25519",
        "--cipher",
        "aes128-ctr,chacha20-poly1305@openssh.com",
        *["--size", "8M", "--rounds", "3", "--max-rounds", "3"],
    ]
    code, text = run_in_pty(cli_env, args, 80)
    assert code == 0, text
    assert "Plan: " in text, text[:3000]
    assert "The answer (" in text and "Fastest here" not in text, text[-3000:]  # a terminal's brief screen
    text = text[text.index("Run 1 (run") :]  # the report, after the progress bar has gone
    assert "…" not in text
    doc = json.loads(sshbench(cli_env, "show", "last", "--db", str(db), "--json").stdout)
    for rows in doc["results"].values():
        for row in rows:
            metric = Scenario.from_dict(row["scenario"]).metric
            assert metric.format(row["summary"]["median"]) in text
    table = [line for line in text.splitlines() if "─" in line or line[:2].strip().lstrip("=").isdigit()]
    assert table and all(len(line) <= 80 for line in table)
