"""asyncssh (asyncssh.connect and conn.run with stdin and stdout redirected, as its documentation shows). Tuned: the
connection's window and max_pktsize, and SFTP's max_requests.

SFTP copies pass sparse=False: sshbench's test files are sparse (zeros in tmpfs), and asyncssh's default sparse copy
skips holes, so a put of an all-hole 8 MiB file left an empty file on the server here (asyncssh 2.24.1). A file
with data is copied whole either way."""

from __future__ import annotations

import asyncio
import os
import stat
from typing import Any, BinaryIO

from sshbench.clients.drivers.common import Args, main

TUNED_WINDOW = 64 * 2**20  # default 2 MiB
TUNED_PACKET = 2**18  # default 32 KiB
OPEN_TIMEOUT = 3  # seconds for the server to open a session (TinySSH at times never answers: products.TINYSSH)
TUNED_REQUESTS = 128  # SFTP requests in flight (default: 4 MiB over the block size, at least 16); the block size
# stays what the server's limits allow (asyncssh's default: a larger one, 256 KiB, made OpenSSH's sftp-server close)


def _regular(f: BinaryIO) -> bool:
    """Return True for a regular file (which asyncssh reads itself; a pipe or /dev/null it would poll)."""
    return stat.S_ISREG(os.fstat(f.fileno()).st_mode)


class _Sink:
    """stdout as asyncssh's async file protocol (asyncssh polls a pipe or device, and /dev/null cannot be polled)."""

    def __init__(self, sink: BinaryIO) -> None:
        self.sink = sink

    async def write(self, data: bytes) -> None:
        """Write a chunk of the command's output."""
        self.sink.write(data)

    async def close(self) -> None:
        """Flush at the end of the output."""
        self.sink.flush()


class AsyncSSH:
    """The asyncssh driver: each call runs its own event loop, as a script's asyncio.run would."""

    def __init__(self) -> None:
        import asyncssh

        self.asyncssh = asyncssh

    def version(self) -> str:
        """Return asyncssh's version."""
        return f"asyncssh {self.asyncssh.__version__}"

    def algorithms(self) -> tuple[list[str], list[str]]:
        """Return asyncssh's ciphers and MACs."""
        from asyncssh.encryption import get_encryption_algs
        from asyncssh.mac import get_mac_algs

        return [c.decode() for c in get_encryption_algs()], [m.decode() for m in get_mac_algs()]

    def kexes(self) -> tuple[list[str], list[str]]:
        """Return asyncssh's key exchanges (GSS-API ones left out: they need Kerberos) and its default offer."""
        from asyncssh.kex import get_default_kex_algs, get_kex_algs

        every = [k.decode() for k in get_kex_algs() if not k.startswith(b"gss-")]
        return every, [k.decode() for k in get_default_kex_algs() if not k.startswith(b"gss-")]

    def connect(self, a: Args) -> Any:
        """Connect: host keys from known_hosts only, the given key, pinned algorithms."""
        opts: dict[str, Any] = {"known_hosts": list(a.known_hosts) or (), "username": a.user or None}
        if a.keys:
            opts |= {"client_keys": list(a.keys), "agent_path": None}
        if a.cipher:
            opts["encryption_algs"] = [a.cipher]
        if a.mac:
            opts["mac_algs"] = [a.mac]
        if a.kex:
            opts["kex_algs"] = [a.kex]
        if a.hostkey:
            opts["server_host_key_algs"] = [a.hostkey]
        if a.tuned:
            opts |= {"window": TUNED_WINDOW, "max_pktsize": TUNED_PACKET}
        loop = asyncio.new_event_loop()
        conn = loop.run_until_complete(self.asyncssh.connect(a.host, a.port, config=(), connect_timeout=10, **opts))
        return (loop, conn)

    def run(self, conn: Any, command: str, source: BinaryIO | None, sink: BinaryIO | None) -> int:
        """conn.run with stdin from `source` and stdout into `sink` (asyncssh copies them itself)."""
        loop, c = conn
        stdin = source if source is not None and _regular(source) else self.asyncssh.DEVNULL
        stdout = _Sink(sink) if sink is not None else self.asyncssh.DEVNULL  # /dev/null cannot be polled
        done = loop.run_until_complete(self._run(c, command, stdin, stdout))
        return int(done.exit_status if done.exit_status is not None else 255)

    async def _run(self, c: Any, command: str, stdin: Any, stdout: Any) -> Any:
        """conn.run in its two steps, so that a session the server never opens fails in OPEN_TIMEOUT seconds."""
        try:
            process = await asyncio.wait_for(
                c.create_process(command, stdin=stdin, stdout=stdout, encoding=None), OPEN_TIMEOUT
            )
        except TimeoutError:
            raise TimeoutError(f"the server did not open the session within {OPEN_TIMEOUT} s") from None
        return await process.wait(check=False)

    def _sftp(self, conn: Any, how: str, src: str, dst: str, a: Args) -> None:
        """Copy one file with SFTP get or put."""
        loop, c = conn
        tuned: dict[str, Any] = {"max_requests": TUNED_REQUESTS} if a.tuned else {}

        async def copy() -> None:
            async with c.start_sftp_client() as sftp:
                await getattr(sftp, how)(src, dst, sparse=False, **tuned)

        loop.run_until_complete(copy())

    def get(self, conn: Any, remote: str, local: str, a: Args) -> None:
        """SFTPClient.get."""
        self._sftp(conn, "get", remote, local, a)

    def put(self, conn: Any, local: str, remote: str, a: Args) -> None:
        """SFTPClient.put."""
        self._sftp(conn, "put", local, remote, a)

    def close(self, conn: Any) -> None:
        """Close the connection and its loop."""
        loop, c = conn
        c.close()
        loop.run_until_complete(c.wait_closed())
        loop.close()


if __name__ == "__main__":
    main(AsyncSSH, "asyncssh")
