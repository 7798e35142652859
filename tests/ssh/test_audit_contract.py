"""Contract tests for the ssh-audit adapter against a real server (its internal API is pinned)."""

import pytest

from sshbench.discovery import Rating
from sshbench.errors import SshbenchError
from sshbench.ssh import audit
from sshbench.ssh.destination import Target
from sshbench.targets.servers import registry
from sshbench.targets.servers.base import free_port
from sshbench.targets.servers.openssh import OpenSSHServer


@pytest.mark.integration
def test_probe_reads_kexinit(embedded: tuple[OpenSSHServer, Target]) -> None:
    _, target = embedded
    offer = audit.probe(target.host, target.port)
    assert offer.banner.startswith("SSH-2.0-OpenSSH")
    assert "curve25519-sha256" in offer.kex
    assert {"ssh-ed25519", "ecdsa-sha2-nistp256", "rsa-sha2-512"} <= set(offer.hostkeys)
    assert "3des-cbc" in offer.ciphers  # embedded server enables every algorithm
    assert "none" in offer.compressions


def test_probe_of_closed_port_is_a_clear_error() -> None:
    with pytest.raises(SshbenchError) as err:
        audit.probe("127.0.0.1", free_port(), timeout=2)
    assert "KEXINIT probe" in err.value.place


def test_ratings_separate_not_post_quantum_from_weak() -> None:
    assert audit.rate("kex", "curve25519-sha256").rating is Rating.NOT_PQ
    assert audit.rate("kex", "ecdh-sha2-nistp256").rating is Rating.FAIL
    assert audit.rate("cipher", "chacha20-poly1305@openssh.com").rating is Rating.OK
    assert audit.rate("mac", "hmac-sha1").rating is Rating.FAIL
    assert audit.rate("cipher", "no-such-cipher").rating is Rating.UNKNOWN


@pytest.mark.integration
@pytest.mark.parametrize(
    ("spec", "banner", "hostkeys", "cipher"),
    [
        ("local:dropbear", "SSH-2.0-dropbear", {"ssh-ed25519", "ecdsa-sha2-nistp256", "rsa-sha2-256"}, "aes128-ctr"),
        ("local:tinyssh", "SSH-2.0-tinyssh", {"ssh-ed25519"}, "chacha20-poly1305@openssh.com"),
    ],
)
def test_probe_reads_other_servers(spec: str, banner: str, hostkeys: set[str], cipher: str) -> None:
    with registry.make_server(spec) as target:
        offer = audit.probe(target.host, target.port)
    assert offer.banner.startswith(banner)
    assert hostkeys <= set(offer.hostkeys)
    assert cipher in offer.ciphers and "curve25519-sha256" in offer.kex
