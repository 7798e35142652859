"""A private scratch directory on a remote host (`tools`' copies, a random payload staged for downloads), kept
alive by one ssh session that removes it.

One guardian session creates the directory (in /dev/shm when the host has it, else its temp dir), prints its
path, then waits for the end of its stdin and removes the directory. sshbench closes that stdin when the job
ends; if sshbench dies instead (even by SIGKILL), its pipe closes or the connection drops, and the host removes
the directory all the same. Every remote command is a fixed string; the only values in them are the path the
host returned (checked against a strict pattern, then quoted) and integers.
"""

from __future__ import annotations

import contextlib
import re
import select
import shlex
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from sshbench.errors import ExitCode, SshbenchError
from sshbench.ssh.destination import LOGIN_TIMEOUT, Target
from sshbench.ssh.proc import run_timed
from sshbench.ssh.text import ssh_failure_reason

NAMES = ("tools", "payload")  # what a scratch directory holds: its name, sshbench-NAME.XXXXXX


def guardian(name: str) -> str:
    """Return the guardian session's fixed command for a scratch directory named sshbench-NAME.XXXXXX."""
    assert name in NAMES
    made = (
        f'mktemp -d /dev/shm/sshbench-{name}.XXXXXX 2>/dev/null || mktemp -d "${{TMPDIR:-/tmp}}/sshbench-{name}.XXXXXX"'
    )
    return f'd=$({made}) && mkdir -m 700 "$d/inbox" && echo "$d" && cat >/dev/null; rm -rf -- "$d"'


def path_pattern(name: str) -> re.Pattern[str]:
    """Return the pattern a scratch directory's path must match before it goes into a command."""
    return re.compile(rf"^/[A-Za-z0-9_./-]{{1,200}}/sshbench-{name}\.[A-Za-z0-9]{{6,}}$")


STOP_TIMEOUT = 30.0


@dataclass(frozen=True)
class RemoteScratch:
    """A directory on the remote host: `inbox/` receives uploads; sparse source files are made on demand."""

    ssh: str
    target: Target
    path: str  # matches path_pattern(its name)

    @property
    def inbox(self) -> str:
        """Return where an upload lands: inbox/file."""
        return f"{self.path}/inbox/file"

    def run(self, command: str) -> str | None:
        """Run a fixed command on the host; return its stdout, or None when it failed."""
        return remote_stdout(self.ssh, self.target, command)

    def source(self, size: int) -> str:
        """Return the path of a file of `size` zero bytes on the host (sparse where `truncate` exists)."""
        path = f"{self.path}/source-{int(size)}"
        quoted, n = shlex.quote(path), int(size)
        made = self.run(f"truncate -s {n} {quoted} 2>/dev/null || head -c {n} /dev/zero > {quoted}")
        if made is None:
            raise SshbenchError(
                f"could not make a {size}-byte file in {self.path} on the host",
                place=self.target.describe(),
                fix="free memory in the host's /dev/shm (or its temp dir), or give a smaller --size",
                code=ExitCode.MEASUREMENT_FAILED,
            )
        return path

    def put(self, local: Path, name: str, fix: str) -> str:
        """Copy a local file into the directory as `name` (a plain word) and return its path there; fail with ssh's
        reason and `fix`."""
        assert name.isidentifier()
        path = f"{self.path}/{name}"
        with open(local, "rb") as f:
            done = run_timed(self.target.argv(self.ssh, [], f"cat > {shlex.quote(path)}"), stdin=f, timeout=300)
        if done.returncode != 0 or done.timed_out:
            raise SshbenchError(
                f"could not copy the {name} into {self.path} on the host: {ssh_failure_reason(done.texts)}",
                place=self.target.describe(),
                fix=fix,
                code=ExitCode.MEASUREMENT_FAILED,
            )
        return path

    def take_upload(self) -> int | None:
        """Return the size of what arrived in inbox/file (None when nothing did), and empty the inbox."""
        inbox = shlex.quote(f"{self.path}/inbox")
        out = self.run(f"wc -c < {inbox}/file; rm -rf -- {inbox}; mkdir -m 700 {inbox}")
        words = (out or "").split()
        return int(words[0]) if words and words[0].isdigit() else None


def remote_stdout(ssh: str, target: Target, command: str, timeout: float = 120.0) -> str | None:
    """Run a fixed command on a remote host; return its stdout (a few lines), or None when it failed."""
    done = run_timed(target.argv(ssh, [], command), capture_stdout=True, timeout=timeout)
    return done.stdout.decode(errors="replace") if done.returncode == 0 and not done.timed_out else None


@contextlib.contextmanager
def remote_scratch(ssh: str, target: Target, name: str = "tools") -> Iterator[RemoteScratch]:
    """Create the scratch directory on the host for the block; it is removed when the block ends or sshbench dies."""
    with tempfile.TemporaryFile() as log:  # ssh -v's lines: a file, so an unread pipe can never block ssh
        session = subprocess.Popen(
            target.argv(ssh, [], guardian(name)), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log
        )
        with _guarding(session):
            path = _first_line(session, LOGIN_TIMEOUT + 30)
            if not path_pattern(name).match(path):
                raise SshbenchError(
                    "could not make a scratch directory on the host"
                    + (f": it printed {path!r}" if path else f": {_reason(session, log)}"),
                    place=target.describe(),
                    fix="the host needs a POSIX shell with mktemp and a writable /dev/shm or temp dir",
                    code=ExitCode.MEASUREMENT_FAILED,
                )
            yield RemoteScratch(ssh, target, path)


@contextlib.contextmanager
def _guarding(guardian: subprocess.Popen[bytes]) -> Iterator[None]:
    """Stop the guardian when the block ends, however it ends."""
    try:
        yield
    finally:
        _stop(guardian)


def _first_line(proc: subprocess.Popen[bytes], timeout: float) -> str:
    """Return the first stdout line of the guardian ('' when it printed none in time)."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    return proc.stdout.readline().decode(errors="replace").strip() if ready else ""


def _reason(proc: subprocess.Popen[bytes], log: IO[bytes]) -> str:
    """Return why the guardian failed, in ssh's words (after it has ended)."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
    if proc.poll() is None:
        return "it did not answer"
    log.seek(0)
    return ssh_failure_reason(log.read().decode(errors="replace").splitlines())


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Close the guardian's stdin so the host removes the directory; wait for that (bounded), then make sure."""
    with contextlib.suppress(OSError):
        if proc.stdin is not None:
            proc.stdin.close()
    try:
        proc.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()
