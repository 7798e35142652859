"""The counting relay's walk of SSH's plaintext (measure/wire.py): bytes up to each side's NEWKEYS however the stream
is cut into reads, round trips as the client's flights after the server spoke, and a stream that is not SSH named."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sshbench.measure.samplers import latency_sample
from sshbench.measure.wire import NEWKEYS, StreamWalk, Tally, proxy_options, read_count
from sshbench.model import Kind, Scenario
from sshbench.ssh.destination import Target
from sshbench.targets.servers.openssh import OpenSSHServer


def packet(kind: int, body: bytes = b"") -> bytes:
    """Return one unencrypted binary packet (RFC 4253 6) of message `kind`, padded to 8 bytes."""
    payload = bytes([kind]) + body
    pad = 8 - (5 + len(payload)) % 8
    pad += 8 if pad < 4 else 0
    return (1 + len(payload) + pad).to_bytes(4, "big") + bytes([pad]) + payload + b"\0" * pad


def stream(bodies: list[bytes]) -> tuple[bytes, int]:
    """Return a direction's bytes (a comment line, the version line, KEXINIT-like packets, NEWKEYS, then what looks
    like ciphertext) and how many of them lead up to NEWKEYS inclusive."""
    head = b"a line before the version\r\nSSH-2.0-Test_1.0\r\n"
    head += b"".join(packet((20, 30, 31, 5, 6, 50)[i % 6], body) for i, body in enumerate(bodies)) + packet(NEWKEYS)
    return head + os.urandom(300), len(head)


@given(st.lists(st.binary(max_size=2000), max_size=6), st.lists(st.integers(1, 700), min_size=1, max_size=40))
def test_bytes_to_newkeys_are_exact_however_the_reads_cut_the_stream(bodies: list[bytes], cuts: list[int]) -> None:
    data, expected = stream(bodies)
    walk, at, i = StreamWalk(), 0, 0
    while at < len(data):
        walk.feed(data[at : at + cuts[i % len(cuts)]])
        at += cuts[i % len(cuts)]
        i += 1
    assert walk.done and walk.broken is None
    assert walk.counted == expected


def test_round_trips_are_the_client_flights_sent_after_the_server_spoke() -> None:
    tally = Tally()
    tally.server_data(b"SSH-2.0-Server\r\n")  # the server speaks first
    tally.client_data(b"SSH-2.0-Client\r\n")  # 1: sent after the server's version line
    tally.client_data(packet(20, b"offer"))  # the same flight
    tally.server_data(packet(20, b"offer"))
    tally.client_data(packet(30, b"share"))  # 2
    tally.server_data(packet(31, b"reply") + packet(NEWKEYS))
    assert not tally.complete
    tally.client_data(packet(NEWKEYS))  # 3
    assert tally.complete and tally.count().round_trips == 3
    assert tally.count().kex_sent == 16 + len(packet(20, b"offer")) + len(packet(30, b"share")) + 16


def test_a_stream_that_is_not_ssh_is_named_not_counted() -> None:
    tally = Tally()
    tally.server_data(b"SSH-2.0-Server\r\n" + b"\xff\xff\xff\xff" + b"\0" * 8)
    assert tally.problem() == "not counted: a packet length of 4294967295"
    line = Tally()
    line.server_data(b"x" * 300)
    assert line.problem() == "not counted: an identification line longer than 255 bytes"


def test_the_proxy_command_is_quoted_for_the_shell_ssh_runs_it_with(tmp_path: Path) -> None:
    out = tmp_path / "it's here" / "wire.json"
    option = proxy_options(Path(out))
    assert option[0] == "-o" and option[1].startswith("ProxyCommand=")
    assert "'\"'\"'" in option[1] and "%h %p" in option[1]  # shlex quoting of the apostrophe
    assert read_count(Path(out)) is None  # nothing written: nothing counted


@pytest.mark.integration
def test_a_relay_that_fails_costs_the_bytes_not_the_warm_up(embedded: tuple[OpenSSHServer, Target]) -> None:
    """The relay cannot write its count (a directory that does not exist): the warm-up is taken again without it
    and says why nothing was counted; a working relay counts the same login's key exchange."""
    _, target = embedded
    sc = Scenario(Kind.LATENCY, kex="curve25519-sha256", hostkey="ssh-ed25519")
    broken = latency_sample("ssh", target, sc, 0, True, Path("/nonexistent-sshbench/wire.json"))
    assert broken.ok and broken.wire is not None, broken.error
    assert str(broken.wire["problem"]).startswith("not counted: the login through the counting relay failed")
    with tempfile.TemporaryDirectory() as tmp:
        counted = latency_sample("ssh", target, sc, 0, True, Path(tmp) / "wire.json")
        timed = latency_sample("ssh", target, sc, 1, False, Path(tmp) / "wire.json")
    assert counted.ok and counted.wire and int(counted.wire["kex_sent"]) > 500, counted.wire
    assert timed.ok and timed.wire is None  # a timed login never goes through the relay
