"""paramiko (SSHClient, as its users write it). Tuned: the transport's window_size and max_packet_size, which every
channel takes, SFTP's included (paramiko's get prefetches and its put is pipelined by default already)."""

from __future__ import annotations

from typing import Any, BinaryIO

from sshbench.clients.drivers.common import CHUNK, Args, main

TUNED_WINDOW = 64 * 2**20  # default 2 MiB
TUNED_PACKET = 2**18  # default 32 KiB


class Paramiko:
    """The paramiko driver."""

    def __init__(self) -> None:
        import paramiko

        self.paramiko = paramiko

    def version(self) -> str:
        """Return paramiko's version."""
        return f"paramiko {self.paramiko.__version__}"

    def algorithms(self) -> tuple[list[str], list[str]]:
        """Return paramiko's ciphers and MACs."""
        t = self.paramiko.Transport
        return list(t._preferred_ciphers), list(t._preferred_macs)

    def kexes(self) -> tuple[list[str], list[str]]:
        """Return paramiko's key exchanges (what it can be pinned to is what it offers, in its order)."""
        offered = list(self.paramiko.Transport._preferred_kex)
        return offered, offered

    def connect(self, a: Args) -> Any:
        """Connect with SSHClient: host keys from known_hosts only (RejectPolicy), the given key, pinned algorithms."""
        p = self.paramiko
        client = p.SSHClient()
        for path in a.known_hosts:
            client.load_host_keys(path)
        client.set_missing_host_key_policy(p.RejectPolicy())
        disabled: dict[str, list[str]] = {}
        if a.cipher:
            disabled["ciphers"] = [c for c in p.Transport._preferred_ciphers if c != a.cipher]
        if a.mac:
            disabled["macs"] = [m for m in p.Transport._preferred_macs if m != a.mac]
        if a.kex:
            disabled["kex"] = [k for k in p.Transport._preferred_kex if k != a.kex]
        if a.hostkey:
            disabled["keys"] = [k for k in p.Transport._preferred_keys if k != a.hostkey]
        tuned = {"transport_factory": self._tuned_transport} if a.tuned else {}
        client.connect(
            a.host,
            a.port,
            a.user or None,
            key_filename=list(a.keys) or None,
            look_for_keys=False,
            allow_agent=not a.keys,
            disabled_algorithms=disabled,
            timeout=10,
            **tuned,
        )
        return client

    def _tuned_transport(self, sock: Any, **kw: Any) -> Any:
        """Return a Transport with the larger window and packet size."""
        return self.paramiko.Transport(
            sock, default_window_size=TUNED_WINDOW, default_max_packet_size=TUNED_PACKET, **kw
        )

    def run(self, conn: Any, command: str, source: BinaryIO | None, sink: BinaryIO | None) -> int:
        """Send stdin, then read the command's output until it ends."""
        chan = conn.get_transport().open_session()
        chan.exec_command(command)
        while source is not None and (data := source.read(CHUNK)):
            chan.sendall(data)
        chan.shutdown_write()
        while data := chan.recv(CHUNK):
            if sink is not None:
                sink.write(data)
        return int(chan.recv_exit_status())

    def get(self, conn: Any, remote: str, local: str, a: Args) -> None:
        """SFTPClient.get (prefetching)."""
        with conn.open_sftp() as sftp:
            sftp.get(remote, local)

    def put(self, conn: Any, local: str, remote: str, a: Args) -> None:
        """SFTPClient.put (pipelined)."""
        with conn.open_sftp() as sftp:
            sftp.put(local, remote)

    def close(self, conn: Any) -> None:
        """Close the client."""
        conn.close()


if __name__ == "__main__":
    main(Paramiko, "paramiko")
