"""libssh2 through ssh2-python (blocking Session, as parallel-ssh uses it). No tuning knob for a channel's window or
SFTP's requests is exposed: one setting."""

from __future__ import annotations

import os
import socket
from typing import Any, BinaryIO

from sshbench.clients.drivers.common import CHUNK, Args, main


class LibSSH2:
    """The libssh2 driver."""

    def __init__(self) -> None:
        import ssh2.knownhost as knownhost
        import ssh2.session as session
        import ssh2.sftp as sftp
        import ssh2.utils as utils

        self.session, self.knownhost, self.sftp, self.utils = session, knownhost, sftp, utils

    def version(self) -> str:
        """Return libssh2's version and its binding's."""
        import ssh2

        return f"libssh2 {self.utils.version().decode()} (ssh2-python {ssh2.__version__})"

    def algorithms(self) -> tuple[list[str], list[str]]:
        """Return libssh2's ciphers and MACs."""
        s = self.session
        probe = s.Session()
        return [*probe.supported_algs(s.LIBSSH2_METHOD_CRYPT_CS)], [*probe.supported_algs(s.LIBSSH2_METHOD_MAC_CS)]

    def kexes(self) -> tuple[list[str], list[str]]:
        """Return libssh2's key exchanges, in its order of preference (its extension markers left out)."""
        s = self.session
        found = [k for k in s.Session().supported_algs(s.LIBSSH2_METHOD_KEX) if not k.startswith(("ext-", "kex-"))]
        return found, found

    def _markers(self) -> list[str]:
        """Return the extension markers libssh2 offers among its key exchanges (kept when one kex is pinned:
        dropping them changes more than the key exchange)."""
        s = self.session
        return [k for k in s.Session().supported_algs(s.LIBSSH2_METHOD_KEX) if k.startswith(("ext-", "kex-"))]

    def connect(self, a: Args) -> Any:
        """Connect, check the host key against known_hosts (refuse an unknown one), log in with the key."""
        s = self.session
        sock = socket.create_connection((a.host, a.port), timeout=10)
        sock.settimeout(None)
        sess = s.Session()
        for method, name in (
            (s.LIBSSH2_METHOD_CRYPT_CS, a.cipher),
            (s.LIBSSH2_METHOD_CRYPT_SC, a.cipher),
            (s.LIBSSH2_METHOD_MAC_CS, a.mac),
            (s.LIBSSH2_METHOD_MAC_SC, a.mac),
            (s.LIBSSH2_METHOD_KEX, a.kex and ",".join([a.kex, *self._markers()])),
            (s.LIBSSH2_METHOD_HOSTKEY, a.hostkey),
        ):
            if name:
                sess.method_pref(method, name)
        sess.handshake(sock)
        self._verify(sess, a)
        for key in a.keys:
            try:
                sess.userauth_publickey_fromfile(a.user, key)
                break
            except Exception:
                continue
        if not sess.userauth_authenticated():
            raise RuntimeError(f"public key authentication failed for {a.user} with {', '.join(a.keys) or 'no key'}")
        return (sess, sock)

    def _verify(self, sess: Any, a: Args) -> None:
        """Refuse a host key that is not in known_hosts for this host and port."""
        k, s = self.knownhost, self.session
        key, kind = sess.hostkey()
        types = {
            s.LIBSSH2_HOSTKEY_TYPE_ED25519: k.LIBSSH2_KNOWNHOST_KEY_ED25519,
            s.LIBSSH2_HOSTKEY_TYPE_RSA: k.LIBSSH2_KNOWNHOST_KEY_SSHRSA,
            s.LIBSSH2_HOSTKEY_TYPE_ECDSA_256: k.LIBSSH2_KNOWNHOST_KEY_ECDSA_256,
            s.LIBSSH2_HOSTKEY_TYPE_ECDSA_384: k.LIBSSH2_KNOWNHOST_KEY_ECDSA_384,
            s.LIBSSH2_HOSTKEY_TYPE_ECDSA_521: k.LIBSSH2_KNOWNHOST_KEY_ECDSA_521,
        }
        if kind not in types:
            raise RuntimeError(f"cannot verify a host key of libssh2 type {kind}")
        known = sess.knownhost_init()
        for path in a.known_hosts:
            if os.path.exists(path):
                known.readfile(path)
        mask = k.LIBSSH2_KNOWNHOST_TYPE_PLAIN | k.LIBSSH2_KNOWNHOST_KEYENC_RAW | types[kind]
        known.checkp(a.host.encode(), a.port, key, mask)  # raises unless the key matches

    def run(self, conn: Any, command: str, source: BinaryIO | None, sink: BinaryIO | None) -> int:
        """Send stdin, then read the command's output until it ends."""
        sess, _ = conn
        chan = sess.open_session()
        chan.execute(command)
        while source is not None and (data := source.read(CHUNK)):
            chan.write(data)
        chan.send_eof()
        while True:
            size, data = chan.read(CHUNK)
            if size <= 0:
                break
            if sink is not None:
                sink.write(data)
        chan.close()
        chan.wait_closed()
        return int(chan.get_exit_status())

    def get(self, conn: Any, remote: str, local: str, a: Args) -> None:
        """Read a remote file with SFTP, block by block."""
        sftp = conn[0].sftp_init()
        with sftp.open(remote, self.sftp.LIBSSH2_FXF_READ, 0) as handle, open(local, "wb") as out:
            for size, data in handle:
                if size > 0:
                    out.write(data)

    def put(self, conn: Any, local: str, remote: str, a: Args) -> None:
        """Write a remote file with SFTP, block by block."""
        sftp, f = conn[0].sftp_init(), self.sftp
        flags = f.LIBSSH2_FXF_CREAT | f.LIBSSH2_FXF_WRITE | f.LIBSSH2_FXF_TRUNC
        with sftp.open(remote, flags, 0o600) as handle, open(local, "rb") as source:
            while data := source.read(CHUNK):
                handle.write(data)

    def close(self, conn: Any) -> None:
        """Disconnect and close the socket."""
        sess, sock = conn
        sess.disconnect()
        sock.close()


if __name__ == "__main__":
    main(LibSSH2, "ssh2-python")
