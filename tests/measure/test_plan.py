"""Scenario planning (pure)."""

import pytest

from sshbench.errors import ExitCode, SshbenchError
from sshbench.measure.plan import check_requested, cipher_mac_pairs, latency_scenarios, throughput_scenarios
from sshbench.model import Direction, Kind

CIPHERS = ["chacha20-poly1305@openssh.com", "aes128-ctr", "aes128-gcm@openssh.com", "aes256-ctr"]
MACS = ["umac-64-etm@openssh.com", "hmac-sha2-256-etm@openssh.com"]


def test_aead_ciphers_never_get_a_mac() -> None:
    for mode in ("default", "each", "all"):
        pairs = cipher_mac_pairs(CIPHERS, MACS, MACS[0], mode)
        assert ("chacha20-poly1305@openssh.com", None) in pairs
        assert all(m is None for c, m in pairs if c.endswith(("gcm@openssh.com", "poly1305@openssh.com")))


def test_mac_modes() -> None:
    assert len(cipher_mac_pairs(CIPHERS, MACS, MACS[0], "default")) == 4
    each = cipher_mac_pairs(CIPHERS, MACS, MACS[0], "each")
    assert ("aes128-ctr", "hmac-sha2-256-etm@openssh.com") in each and len(each) == 6  # with 1 check pair
    wider = cipher_mac_pairs([*CIPHERS, "aes192-ctr"], [*MACS, "hmac-sha1"], MACS[0], "each")
    checks = [(c, m) for c, m in wider if m not in (None, MACS[0]) and c != "aes128-ctr"]
    assert len(checks) == 2  # off both reference slices: the model's own error is measured on them
    assert len(cipher_mac_pairs(CIPHERS, MACS, MACS[0], "all")) == 2 + 2 * 2


def test_latency_factorised_and_full() -> None:
    kex, hk = ["k1", "k2", "k3"], ["h1", "h2"]
    assert len(latency_scenarios(kex, hk, "k1", "h1", full=False)) == 3 + 2 - 1
    assert len(latency_scenarios(kex, hk, "k1", "h1", full=True)) == 6


def test_throughput_scenarios_both_directions() -> None:
    scs = throughput_scenarios([("aes128-ctr", "umac-64-etm@openssh.com")], [Direction.DOWN, Direction.UP])
    assert [s.direction for s in scs] == [Direction.DOWN, Direction.UP]
    assert scs[0].kind is Kind.THROUGHPUT
    assert scs[0].ssh_options() == ["-o", "Ciphers=aes128-ctr", "-o", "MACs=umac-64-etm@openssh.com"]


def test_check_requested_errors() -> None:
    with pytest.raises(SshbenchError) as unknown:
        check_requested("cipher", ["rot13-cbc"], CIPHERS, None)
    assert unknown.value.code is ExitCode.UNSUPPORTED_ALGORITHM and "aes128-ctr" in unknown.value.fix
    with pytest.raises(SshbenchError) as not_offered:
        check_requested("cipher", ["aes256-ctr"], CIPHERS, ["aes128-ctr"])
    assert "server does not offer" in not_offered.value.cause
    with pytest.raises(SshbenchError) as bad:
        check_requested("cipher", ["-oProxyCommand=x"], CIPHERS, None)
    assert bad.value.code is ExitCode.USAGE
    with pytest.raises(SshbenchError) as newer:  # OpenSSH 10's sshd with 9.2's client
        check_requested("kex", ["mlkem768x25519-sha256"], ["curve25519-sha256"], ["mlkem768x25519-sha256"])
    assert newer.value.code is ExitCode.UNSUPPORTED_ALGORITHM and "which the server offers" in newer.value.cause
    assert newer.value.fix.startswith("give --ssh an OpenSSH client that supports it")
    assert "which the server offers" not in unknown.value.cause and "--ssh" not in unknown.value.fix
