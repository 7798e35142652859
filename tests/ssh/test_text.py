"""Parsers of ssh output: real examples plus hypothesis properties."""

from hypothesis import given
from hypothesis import strategies as st

from sshbench.ssh.text import (
    is_valid_algorithm,
    parse_config_dump,
    parse_exit_status,
    parse_negotiated,
    parse_query,
    parse_transferred,
    phase_breakdown,
    ssh_failure_reason,
)

NAMES = st.from_regex(r"[a-z0-9][a-z0-9@.+-]{0,30}", fullmatch=True)

V_LINES = [
    "debug1: Connecting to 127.0.0.1 [127.0.0.1] port 40122.",
    "debug1: Connection established.",
    "debug1: Remote protocol version 2.0, remote software version OpenSSH_9.2p1 Debian-2+deb12u10",
    "debug1: kex: algorithm: curve25519-sha256",
    "debug1: kex: host key algorithm: ssh-ed25519",
    "debug1: kex: server->client cipher: aes128-ctr MAC: umac-64-etm@openssh.com compression: none",
    "debug1: kex: client->server cipher: aes128-ctr MAC: umac-64-etm@openssh.com compression: none",
    "debug1: SSH2_MSG_NEWKEYS received",
    'Authenticated to 127.0.0.1 ([127.0.0.1]:40122) using "publickey".',
    "debug1: Sending command: true",
    "Transferred: sent 3472, received 4280 bytes, in 0.0 seconds",
    "debug1: Exit status 0",
]


def test_parse_negotiated_real_lines() -> None:
    n = parse_negotiated(V_LINES)
    assert (n.kex, n.hostkey, n.cipher, n.mac) == (
        "curve25519-sha256",
        "ssh-ed25519",
        "aes128-ctr",
        "umac-64-etm@openssh.com",
    )
    assert n.server_version == "OpenSSH_9.2p1 Debian-2+deb12u10"


def test_aead_mac_is_none() -> None:
    line = "debug1: kex: server->client cipher: chacha20-poly1305@openssh.com MAC: <implicit> compression: none"
    assert parse_negotiated([line]).mac is None


def test_transferred_and_exit_status() -> None:
    assert parse_transferred(V_LINES) == (3472, 4280)
    assert parse_exit_status(V_LINES) == 0
    assert parse_transferred(["nothing"]) is None


def test_phase_breakdown_sums_to_total() -> None:
    timed = [(0.01 * (i + 1), text) for i, text in enumerate(V_LINES)]
    phases = dict(phase_breakdown(timed, 0.0, 0.5))
    assert list(phases) == ["startup", "tcp", "version", "kex", "auth", "session"]
    assert abs(sum(phases.values()) - 0.5) < 1e-9
    assert phase_breakdown(timed[:3], 0.0, 0.5) == ()  # markers missing: no breakdown


def test_failure_reason_skips_debug() -> None:
    lines = ["debug1: Connecting to x", "Unable to negotiate with 127.0.0.1 port 22: no matching cipher found."]
    assert ssh_failure_reason(lines).startswith("Unable to negotiate")
    assert ssh_failure_reason([]) == "ssh exited without saying why"


@given(st.lists(NAMES, max_size=40))
def test_parse_query_roundtrip(names: list[str]) -> None:
    parsed = parse_query("\n".join(names) + "\n")
    assert parsed == tuple(dict.fromkeys(names))
    assert all(is_valid_algorithm(n) for n in parsed)


@given(st.dictionaries(st.from_regex(r"[a-z]{1,20}", fullmatch=True), st.from_regex(r"[\w,.@-]{0,40}", fullmatch=True)))
def test_parse_config_dump_roundtrip(options: dict[str, str]) -> None:
    text = "".join(f"{k} {v}\n" for k, v in options.items())
    assert parse_config_dump(text) == {k: v.strip() for k, v in options.items()}


@given(st.text(max_size=200))
def test_parsers_never_crash_on_garbage(text: str) -> None:
    lines = text.splitlines()
    parse_negotiated(lines)
    parse_transferred(lines)
    parse_exit_status(lines)
    parse_query(text)
    phase_breakdown([(float(i), line) for i, line in enumerate(lines)], 0.0, float(len(lines) + 1))


def test_invalid_algorithm_names() -> None:
    for bad in ["", "-oProxyCommand=x", "a b", "a;rm", "$(x)", "a" * 101]:
        assert not is_valid_algorithm(bad)
