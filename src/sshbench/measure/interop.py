"""An interop soak's logins: one full login (connect, verify the host key, authenticate, run `true`, close) of one
client on one server with one key exchange, as a sample that failed or not, with the client's own words.

A library logs in from one warm process (its driver in soak mode reads one key exchange per line and answers each
with `login ok S` or `login failed TEXT`, clients/drivers/common.py), so a login is a connection, not an
interpreter's start; OpenSSH's ssh and Dropbear's dbclient run as one process per login, as scripts run them. No
login waits longer than LOGIN_LIMIT: a stuck process is stopped (by its PID: sshbench started it) and said so, and
a warm driver that died or was stopped is started again for the next login."""

from __future__ import annotations

import os
import selectors
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass

from sshbench.model import Scenario
from sshbench.samples import Sample
from sshbench.ssh.text import ssh_failure_reason

LOGIN_LIMIT = 20.0  # seconds for one whole login: past this the pair is stuck, not slow
START_ALLOWANCE = 10.0  # more seconds for a freshly started driver's first answer: it loads its library first
PREFIX = "sshbench-driver:"  # the drivers' lines (clients/drivers/common.py; measure/ reads them, never imports them)
ANSWER = f"{PREFIX} login "


@dataclass(frozen=True)
class Login:
    """What one login gave: its time (None when it failed) and the client's words when it failed."""

    seconds: float | None
    wall: float
    error: str | None = None

    def sample(self, sc: Scenario, rnd: int) -> Sample:
        """Return the login as the row's sample of round `rnd`."""
        ok = self.error is None
        return Sample(sc, rnd, False, ok=ok, value=self.seconds if ok else None, wall=self.wall, error=self.error)


def stuck(limit: float) -> str:
    """Return the words for a login stopped at the limit."""
    return f"no answer within {limit:g} s: stopped by sshbench (the server or the client hung)"


def process_login(argv: Sequence[str], env: dict[str, str] | None = None, limit: float = LOGIN_LIMIT) -> Login:
    """Run one login as a process (ssh, dbclient) from spawn to exit."""
    start = time.perf_counter()
    try:
        done = subprocess.run(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            timeout=limit,
            check=False,
        )
    except subprocess.TimeoutExpired:  # subprocess.run has killed the process it started
        return Login(None, time.perf_counter() - start, stuck(limit))
    wall = time.perf_counter() - start
    if done.returncode == 0:
        return Login(wall, wall)
    words = ssh_failure_reason(done.stderr.decode("utf-8", "replace").splitlines())
    return Login(None, wall, f"{words} (exit status {done.returncode})")


class WarmDriver:
    """A library's driver in soak mode: one process, one login per line; started again after it dies or hangs."""

    def __init__(self, argv: Sequence[str], env: dict[str, str] | None = None) -> None:
        self.argv, self.env = list(argv), env
        self.proc: subprocess.Popen[bytes] | None = None
        self.pending = b""
        self.said: list[str] = []  # lines of its own (not answers) since the last answer: a dying driver's words

    def _start(self) -> subprocess.Popen[bytes]:
        """Start the driver (it loads its library once)."""
        self.pending, self.said = b"", []
        self.proc = subprocess.Popen(
            self.argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=self.env
        )
        return self.proc

    def login(self, kex: str | None, hostkey: str | None = None, limit: float = LOGIN_LIMIT) -> Login:
        """Ask the driver for one login pinned to `kex` and `hostkey` (None: its own choice) and wait for its
        answer."""
        fresh = self.proc is None or self.proc.poll() is not None
        proc = self._start() if fresh else self.proc
        assert proc is not None
        start = time.perf_counter()
        try:
            assert proc.stdin is not None
            proc.stdin.write(f"{kex or '-'} {hostkey or '-'}\n".encode())
            proc.stdin.flush()
        except OSError:
            return self._died(start)
        line = self._answer(proc, start + limit + (START_ALLOWANCE if fresh else 0.0))
        wall = time.perf_counter() - start
        if line is None:
            if proc.poll() is None:
                self.stop()
                return Login(None, wall, stuck(limit))
            return self._died(start)
        word, _, rest = line.removeprefix(ANSWER).partition(" ")
        if word == "ok":
            return Login(float(rest), wall)
        return Login(None, wall, rest.strip() or "the driver gave no reason")

    def _answer(self, proc: subprocess.Popen[bytes], deadline: float) -> str | None:
        """Return the driver's next answer line, or None when it exits or the deadline passes first."""
        assert proc.stderr is not None
        fd = proc.stderr.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while True:
                *lines, self.pending = self.pending.split(b"\n")
                for i, raw in enumerate(lines):
                    text = raw.decode("utf-8", "replace").rstrip("\r")
                    if text.startswith(ANSWER):
                        self.pending = b"\n".join([*lines[i + 1 :], self.pending])
                        return text
                    if text.strip() and not text.startswith(f"{PREFIX} ready"):
                        self.said = [*self.said[-4:], text.removeprefix(f"{PREFIX} ")]
                left = deadline - time.perf_counter()
                if left <= 0 or not sel.select(left):
                    return None
                chunk = os.read(fd, 65536)
                if not chunk:
                    return None
                self.pending += chunk

    def _died(self, start: float) -> Login:
        """Return the failed login of a driver that exited, with its last words; the next login starts a new one."""
        status = self.proc.wait() if self.proc is not None else None
        words = "; ".join(self.said) or "no words"
        self.stop()  # its pipes closed
        return Login(None, time.perf_counter() - start, f"the driver exited (status {status}): {words}")

    def stop(self) -> None:
        """Stop the driver: close its input and wait a moment, then kill the process this object started."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            if proc.stdin is not None:
                proc.stdin.close()
            proc.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
