"""A plain script per SSH library, as its users write one: connect, verify the host key against known_hosts, log
in with a key, run `head -c SIZE /dev/zero` and read it all, timing itself. No sshbench import: this is what
bench_clients_plain.py holds sshbench's numbers against.

Usage: [PLAIN_READ=BYTES] python plain_clients.py LIBRARY HOST PORT USER KEY KNOWN_HOSTS SIZE [CIPHER] > /dev/null
PLAIN_READ: bytes asked for per read from the channel (default 65536, what sshbench's drivers ask for).
Writes what arrives to stdout and prints, on stderr, the steady MB/s: the bytes after the first 20 % (at least 8 MiB,
at most half) over the time from the moment they had arrived to the last byte, by this process's own clock."""

from __future__ import annotations

import os
import socket
import sys
import time

CHUNK = int(os.environ.get("PLAIN_READ", 1 << 16))


class Clock:
    """Count bytes as they arrive; note when the untimed start is past and when the last byte came."""

    def __init__(self, size: int) -> None:
        self.size, self.seen = size, 0
        self.threshold = int(max(0.2 * size, min(8 * 2**20, size / 2)))
        self.start = self.end = 0.0
        self.out = sys.stdout.buffer

    def add(self, data: bytes) -> None:
        """Write a chunk where a program puts it (stdout, /dev/null here, as sshbench's drivers do) and count it."""
        self.out.write(data)
        before, self.seen = self.seen, self.seen + len(data)
        now = time.perf_counter()
        if before < self.threshold <= self.seen:
            self.start = now  # the chunk that crossed the threshold: the steady part starts here
        self.end = now

    def rate(self) -> float:
        """Return MB/s of the steady part."""
        if self.seen != self.size:
            raise SystemExit(f"short read: {self.seen} of {self.size}")
        return (self.size - self.threshold) / (self.end - self.start) / 1e6


def with_paramiko(a: list[str], clock: Clock, command: str) -> None:
    """paramiko's SSHClient."""
    import paramiko

    client = paramiko.SSHClient()
    client.load_host_keys(a[5])
    client.set_missing_host_key_policy(paramiko.RejectPolicy())
    off = {"ciphers": [c for c in paramiko.Transport._preferred_ciphers if c != a[7]]} if len(a) > 7 else {}
    client.connect(
        a[1], int(a[2]), a[3], key_filename=a[4], look_for_keys=False, allow_agent=False, disabled_algorithms=off
    )
    chan = client.get_transport().open_session()
    chan.exec_command(command)
    chan.shutdown_write()
    while data := chan.recv(CHUNK):
        clock.add(data)
    chan.recv_exit_status()
    client.close()


class Counted:
    """stdout for asyncssh's conn.run: an object with async write and close, counting what arrives."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    async def write(self, data: bytes) -> None:
        """Count a chunk."""
        self.clock.add(data)

    async def close(self) -> None:
        """Nothing to close."""


def with_asyncssh(a: list[str], clock: Clock, command: str) -> None:
    """asyncssh.connect and conn.run with stdout redirected (as its documentation shows)."""
    import asyncio

    import asyncssh

    async def main() -> None:
        algs = {"encryption_algs": [a[7]]} if len(a) > 7 else {}
        async with asyncssh.connect(
            a[1], int(a[2]), username=a[3], client_keys=[a[4]], known_hosts=a[5], agent_path=None, config=(), **algs
        ) as conn:
            await conn.run(command, stdin=asyncssh.DEVNULL, stdout=Counted(clock), encoding=None, check=True)

    asyncio.run(main())


def with_libssh2(a: list[str], clock: Clock, command: str) -> None:
    """ssh2-python's blocking Session (host key checked with libssh2's knownhost)."""
    import ssh2.knownhost as kh
    import ssh2.session as s

    sock = socket.create_connection((a[1], int(a[2])))
    sess = s.Session()
    sess.method_pref(s.LIBSSH2_METHOD_HOSTKEY, "ssh-ed25519")  # the key type the check below asks for
    if len(a) > 7:
        sess.method_pref(s.LIBSSH2_METHOD_CRYPT_CS, a[7])
        sess.method_pref(s.LIBSSH2_METHOD_CRYPT_SC, a[7])
    sess.handshake(sock)
    key, _ = sess.hostkey()
    known = sess.knownhost_init()
    known.readfile(a[5])
    known.checkp(
        a[1].encode(),
        int(a[2]),
        key,
        kh.LIBSSH2_KNOWNHOST_TYPE_PLAIN | kh.LIBSSH2_KNOWNHOST_KEYENC_RAW | kh.LIBSSH2_KNOWNHOST_KEY_ED25519,
    )
    sess.userauth_publickey_fromfile(a[3], a[4])
    chan = sess.open_session()
    chan.execute(command)
    chan.send_eof()
    while True:
        size, data = chan.read(CHUNK)
        if size <= 0:
            break
        clock.add(data)
    chan.close()


def with_libssh(a: list[str], clock: Clock, command: str) -> None:
    """ansible-pylibssh's Session (libssh: it chooses its own cipher; host key checked against known_hosts)."""
    from pylibsshext.session import Session

    session = Session()
    with open(a[4], "rb") as key:
        private = key.read()
    where = {"host": a[1], "port": int(a[2]), "user": a[3], "knownhosts": a[5]}
    session.connect(**where, private_key=private, look_for_keys=False, host_key_checking=True, timeout=10)
    chan = session.new_channel()
    chan.request_exec(command)
    chan.send_eof()
    while True:
        chan.poll(timeout=1000)
        data = chan.recv(CHUNK)
        if data:
            clock.add(data)
        elif chan.is_eof:
            break
    chan.close()
    session.close()


LIBRARIES = {"paramiko": with_paramiko, "asyncssh": with_asyncssh, "libssh2": with_libssh2, "libssh": with_libssh}


def main() -> None:
    """Download SIZE bytes with the library named and print the steady rate."""
    given = sys.argv[1:]  # LIBRARY HOST PORT USER KEY KNOWN_HOSTS SIZE [CIPHER]
    clock = Clock(int(given[6]))
    LIBRARIES[given[0]](given, clock, f"head -c {int(given[6])} /dev/zero")
    print(f"{clock.rate():.3f}", file=sys.stderr)


if __name__ == "__main__":
    main()
