"""Scenario planning, option parsing and target validation (pure)."""

import pytest

from sshbench.errors import ExitCode, SshbenchError
from sshbench.model import Direction, Kind
from sshbench.options import parse_duration, parse_percent, parse_size
from sshbench.scenarios import check_requested, cipher_mac_pairs, latency_scenarios, throughput_scenarios
from sshbench.target import normalize_destination

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
    assert ("aes128-ctr", "hmac-sha2-256-etm@openssh.com") in each and len(each) == 5
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


def test_parse_size_duration_percent() -> None:
    assert parse_size("auto") is None
    assert parse_size("512M") == 512 * 2**20 and parse_size("1GiB") == 2**30
    assert parse_duration("3m") == 180 and parse_duration("90") == 90
    assert parse_percent("5%") == pytest.approx(0.05)
    for bad in ("abc", "0", "100T", "-5M"):
        with pytest.raises(SshbenchError):
            parse_size(bad)
    with pytest.raises(SshbenchError):
        parse_percent("150%")


def test_destination_normalisation() -> None:
    assert normalize_destination("host:2222") == "ssh://host:2222"
    assert normalize_destination("user@host:22") == "ssh://user@host:22"
    assert normalize_destination("alias") == "alias"
    assert normalize_destination("user@host") == "user@host"
    for bad in ("-oProxyCommand=touch /tmp/x", "host;rm", "a b"):
        with pytest.raises(SshbenchError):
            normalize_destination(bad)
