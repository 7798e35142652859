"""What every library driver shares: its command line, the lines it prints for sshbench, and the byte pumps.

Lines on stderr, each `sshbench-driver: ...`: `ready` (interpreter and library loaded), `authenticated`,
`command sent` (the exec request is next: sshbench reads the CPU spent so far here), `received N` (bytes of the
command's output put on stdout, where the kernel counts them too; said once the command has ended, before the
connection closes: sshbench's end of a download), `copied` (an SFTP copy returned: its end), `connection K took S`,
`version V`, `ciphers A,B`, `macs A,B`, `kex A,B` (every key exchange it can be pinned to), `kex-default A,B` (what
it offers unpinned, in its order of preference) (version mode), `error: TEXT`; in soak mode, one line per line
read on stdin (a key exchange to pin, or `-` for the driver's own choice, then optionally a host key algorithm to
pin, or `-`): `login ok S` (connected, logged in, ran
`true`, closed, in S seconds) or `login failed TEXT` (the library's own words). The exit status is the remote
command's, 255 on a failure of the driver, 3 when the library is not installed."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO, NoReturn, Protocol

PREFIX = "sshbench-driver:"
CHUNK = 1 << 16  # bytes per read from stdin or the channel
NOT_INSTALLED = 3
FAILED = 255


@dataclass(frozen=True)
class Args:
    """One driver invocation: where, how to verify and log in, the algorithms, the settings, and what to do."""

    host: str
    port: int
    user: str
    keys: tuple[str, ...]
    known_hosts: tuple[str, ...]
    cipher: str | None
    mac: str | None
    kex: str | None
    hostkey: str | None  # the host key algorithm to pin (None: the library's own preference)
    tuned: bool
    mode: str  # exec | connect | get | put | version | soak
    operands: tuple[str, ...]


class Driver(Protocol):
    """A library's way to connect, run a command and copy a file."""

    def version(self) -> str:
        """Return the library's version (and its C library's)."""

    def algorithms(self) -> tuple[list[str], list[str]]:
        """Return the ciphers and MACs the driver can pin (empty: the library cannot choose)."""

    def kexes(self) -> tuple[list[str], list[str]]:
        """Return the key exchanges the driver can pin (empty: the library cannot choose) and those the library
        offers unpinned, in its order of preference (empty: not known)."""

    def connect(self, a: Args) -> object:
        """Connect, verify the host key against known_hosts, and log in."""

    def run(self, conn: object, command: str, source: BinaryIO | None, sink: BinaryIO | None) -> int:
        """Run a command with `source` as its stdin and its stdout into `sink`; return its exit status."""

    def get(self, conn: object, remote: str, local: str, a: Args) -> None:
        """Copy a remote file here with SFTP."""

    def put(self, conn: object, local: str, remote: str, a: Args) -> None:
        """Copy a local file to the server with SFTP."""

    def close(self, conn: object) -> None:
        """Close the connection."""


def parse(argv: list[str]) -> Args:
    """Parse the driver's command line."""
    p = argparse.ArgumentParser(prog="sshbench-driver")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=22)
    p.add_argument("--user", default="")
    p.add_argument("--key", action="append", default=[])
    p.add_argument("--known-hosts", action="append", default=[])
    p.add_argument("--cipher")
    p.add_argument("--mac")
    p.add_argument("--kex")
    p.add_argument("--hostkey")
    p.add_argument("--tuned", action="store_true")
    p.add_argument("mode", choices=("exec", "connect", "get", "put", "version", "soak"))
    p.add_argument("operands", nargs="*")
    n = p.parse_args(argv)
    return Args(
        n.host,
        n.port,
        n.user,
        tuple(n.key),
        tuple(n.known_hosts),
        n.cipher,
        n.mac,
        n.kex,
        n.hostkey,
        n.tuned,
        n.mode,
        tuple(n.operands),
    )


def say(text: str) -> None:
    """Print one line for sshbench on stderr, at once."""
    sys.stderr.write(f"{PREFIX} {text}\n")
    sys.stderr.flush()


class Counting:
    """stdout, counting what the command sent (sshbench checks it against the payload and the kernel's count)."""

    def __init__(self, sink: BinaryIO) -> None:
        self.sink, self.count = sink, 0

    def write(self, data: bytes) -> int:
        """Write a chunk and count it."""
        self.count += len(data)
        return self.sink.write(data)

    def flush(self) -> None:
        """Flush the sink."""
        self.sink.flush()


def _connections(d: Driver, a: Args) -> int:
    """Connect, log in, run `true` and close, `operands[0]` times in this process, timing each."""
    for i in range(int(a.operands[0]) if a.operands else 1):
        start = time.perf_counter()
        conn = d.connect(a)
        status = d.run(conn, "true", None, None)
        d.close(conn)
        del conn  # freed before the next connection starts (libssh2 hangs on a second session otherwise)
        say(f"connection {i + 1} took {time.perf_counter() - start:.6f}")
        if status != 0:
            return status
    return 0


def _soak(d: Driver, a: Args) -> int:
    """Log in once per line on stdin (`KEX [HOSTKEY]`, each `-` for the library's own choice), answering each: an
    interop soak's logins from one warm process."""
    for line in sys.stdin:
        kex, hostkey = [*(None if w == "-" else w for w in line.split()), None, None][:2]
        one = dataclasses.replace(a, kex=kex, hostkey=hostkey or a.hostkey)
        start = time.perf_counter()
        try:
            conn = d.connect(one)
            status = d.run(conn, "true", None, None)
            d.close(conn)
            del conn
        except Exception as exc:  # the library's own words are the soak's data
            say(f"login failed {type(exc).__name__}: {exc}".replace("\n", " "))
            continue
        took = time.perf_counter() - start
        say(f"login ok {took:.6f}" if status == 0 else f"login failed `true` exited with status {status}")
    return 0


def _work(d: Driver, a: Args) -> int:
    """Do what the mode asks; return the exit status."""
    if a.mode == "version":
        ciphers, macs = d.algorithms()
        kexes, default = d.kexes()
        say(f"version {d.version()}")
        say(f"ciphers {','.join(ciphers)}")
        say(f"macs {','.join(macs)}")
        say(f"kex {','.join(kexes)}")
        say(f"kex-default {','.join(default)}")
        return 0
    if a.mode == "connect":
        return _connections(d, a)
    if a.mode == "soak":
        return _soak(d, a)
    conn = d.connect(a)
    say("authenticated")
    try:
        if a.mode == "exec":
            out = Counting(sys.stdout.buffer)
            say("command sent")
            status = d.run(conn, a.operands[0], sys.stdin.buffer, out)  # type: ignore[arg-type]
            out.flush()
            say(f"received {out.count}")
            return status
        say("command sent")
        (d.get if a.mode == "get" else d.put)(conn, a.operands[0], a.operands[1], a)
        say("copied")
        return 0
    finally:
        d.close(conn)


def main(make: Callable[[], Driver], package: str) -> NoReturn:
    """Run a driver: load its library (or say it is not installed), then do what the command line asks."""
    a = parse(sys.argv[1:])
    try:
        d = make()
    except ImportError as exc:
        say(f"error: not installed ({exc}): pip install {package}")
        sys.exit(NOT_INSTALLED)
    say("ready")
    try:
        status = _work(d, a)
    except Exception as exc:  # the library's own words, for sshbench to store with the failed sample
        say(f"error: {type(exc).__name__}: {exc}".replace("\n", " "))
        sys.exit(FAILED)
    sys.exit(status if 0 <= status < 256 else FAILED)
