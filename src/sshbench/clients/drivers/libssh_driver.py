"""libssh through ansible-pylibssh (the binding Ansible's libssh connection uses). The binding can set no cipher or
MAC (libssh negotiates its own preference) and exposes no window or SFTP tuning: one setting, libssh's choice."""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO

from sshbench.clients.drivers.common import CHUNK, Args, main


class LibSSH:
    """The libssh driver."""

    def __init__(self) -> None:
        from pylibsshext import __version__ as binding
        from pylibsshext._libssh_version import LIBSSH_VERSION
        from pylibsshext.session import Session

        self.Session, self.versions = Session, (LIBSSH_VERSION, binding)

    def version(self) -> str:
        """Return libssh's version and its binding's."""
        return f"libssh {self.versions[0]} (ansible-pylibssh {self.versions[1]})"

    def algorithms(self) -> tuple[list[str], list[str]]:
        """Return nothing: the binding cannot choose a cipher or MAC."""
        return [], []

    def kexes(self) -> tuple[list[str], list[str]]:
        """Return the key exchanges libssh accepts (it keeps its own list when told a name it lacks: each catalog
        name is set on a fresh session and read back) and its default offer."""
        from sshbench.kex import CATALOG

        default = str(self.Session().get_ssh_options("key_exchange_algorithms")).split(",")
        return [n for k in CATALOG for n in k.names if self._accepts(n)], default

    def _accepts(self, name: str) -> bool:
        """Return True when libssh keeps `name` as its one key exchange."""
        session = self.Session()
        session.set_ssh_options("key_exchange_algorithms", name)
        return bool(session.get_ssh_options("key_exchange_algorithms") == name)

    def connect(self, a: Args) -> Any:
        """Connect, verify the host key against known_hosts, log in with the key."""
        if a.cipher or a.mac:
            raise RuntimeError("ansible-pylibssh cannot choose a cipher or MAC")
        session = self.Session()
        if a.kex:
            if not self._accepts(a.kex):
                raise RuntimeError(f"libssh has no key exchange {a.kex}")
            session.set_ssh_options("key_exchange_algorithms", a.kex)
        if a.hostkey:
            session.set_ssh_options("hostkeys", a.hostkey)
        key = Path(a.keys[0]).read_bytes() if a.keys else None
        session.connect(
            host=a.host,
            port=a.port,
            user=a.user or None,
            private_key=key,
            look_for_keys=not key,
            host_key_checking=True,
            knownhosts=a.known_hosts[0] if a.known_hosts else None,
            timeout=10,
        )
        return session

    def run(self, conn: Any, command: str, source: BinaryIO | None, sink: BinaryIO | None) -> int:
        """Send stdin, then read the command's output until it ends (the binding reads at most 1 KiB a call)."""
        chan = conn.new_channel()
        chan.request_exec(command)
        while source is not None and (data := source.read(CHUNK)):
            view = memoryview(data)
            while view:
                view = view[chan.write(bytes(view)) :]
        chan.send_eof()
        while True:
            chan.poll(timeout=1000)
            data = chan.recv(CHUNK)
            if data:
                if sink is not None:
                    sink.write(data)
            elif chan.is_eof:
                break
        status = int(chan.get_channel_exit_status())
        chan.close()
        return status

    def get(self, conn: Any, remote: str, local: str, a: Args) -> None:
        """SFTP get."""
        sftp = conn.sftp()
        sftp.get(remote, local)
        sftp.close()

    def put(self, conn: Any, local: str, remote: str, a: Args) -> None:
        """SFTP put."""
        sftp = conn.sftp()
        sftp.put(local, remote)
        sftp.close()

    def close(self, conn: Any) -> None:
        """Close the session."""
        conn.close()


if __name__ == "__main__":
    main(LibSSH, "ansible-pylibssh")
