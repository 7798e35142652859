"""Stored records read back as named fields: round trips through JSON, and tolerance of older runs."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from fakes import DISCOVERY, ENVIRONMENT
from sshbench.discovery import AlgorithmRating, Discovery, Negotiated, Profile, Rating, ServerOffer
from sshbench.environment import EmbeddedInfo, Emulation, Environment, Pinning
from sshbench.records import Fleet, FleetHost, ServerReport, read_discovery, servers_to_dict

NAMES = st.lists(st.from_regex(r"[a-z0-9][a-z0-9@.+-]{0,20}", fullmatch=True), max_size=5, unique=True)


def json_round_trip(data: dict[str, Any]) -> dict[str, Any]:
    """Return data as it comes back from the database."""
    loaded: dict[str, Any] = json.loads(json.dumps(data))
    return loaded


@given(NAMES, NAMES, st.booleans(), st.sampled_from(list(Rating)))
def test_discovery_round_trips(ciphers: list[str], kex: list[str], connected: bool, rating: Rating) -> None:
    negotiated = Negotiated(kex[0] if kex else None, "ssh-ed25519", None, None, "OpenSSH_9.2") if connected else None
    disc = Discovery(
        client={"kex": tuple(kex), "hostkey": (), "cipher": tuple(ciphers), "mac": ()},
        defaults={"kex": tuple(kex)},
        server=ServerOffer("SSH-2.0-x", tuple(kex), (), tuple(ciphers), ()),
        server_error=None,
        profiles=(Profile("default", negotiated, None if connected else "refused"),),
        ratings={"cipher": {c: AlgorithmRating("cipher", c, rating, ("why",)) for c in ciphers}},
        ssh_audit_version="3.9.0",
    )
    back = Discovery.from_dict(json_round_trip(disc.to_dict()))
    assert back == disc
    assert back.shared("cipher") == tuple(ciphers) and back.default() == negotiated


def test_environment_round_trips_with_its_parts() -> None:
    env = Environment(
        cpu_model="cpu",
        cpu_flags={"aes": True, "vaes": False},
        cpus=2,
        target="embedded openssh server 127.0.0.1:1",
        embedded=EmbeddedInfo("dropbear", "Dropbear", ("-W 2097152",), "cgroup v1 (/x)", None),
        emulation=Emulation("no-aesni", {"OPENSSL_ia32cap": "~0x2"}, ("ssh client",), "Dropbear", "speed", 900.0, 90.0),
        pinning=Pinning(client_cpu=0, server_cpu=1),
    )
    assert Environment.from_dict(json_round_trip(env.to_dict())) == env
    assert env.to_dict()["server_settings"] == ["-W 2097152"] and env.flags_on() == ["aes"]
    noted = Environment(pinning=Pinning(note="not applied: the server is remote"))
    assert Environment.from_dict(json_round_trip(noted.to_dict())) == noted


def test_older_environments_read_as_unknown() -> None:
    env = Environment.from_dict({"cpu_model": "old", "cpu_flags": {"aes": True}})
    assert env.cpu_model == "old" and env.kernel is None and env.embedded is None and env.pinning is None


def test_servers_run_discovery_round_trips() -> None:
    reports = (
        ServerReport("openssh", "local:openssh", embedded=ENVIRONMENT.embedded, discovery=DISCOVERY),
        ServerReport("tinyssh", "local:tinyssh", skipped="TinySSH needs root here"),
        ServerReport("dropbear", "local:dropbear", failed="did not start", memory_problems=("no session snapshot",)),
    )
    single, back, fleet = read_discovery(json_round_trip(servers_to_dict(reports)))
    assert single is None and back == reports and fleet is None
    single, none, fleet = read_discovery(json_round_trip(DISCOVERY.to_dict()))
    assert single == DISCOVERY and none == () and fleet is None


def test_fleet_run_discovery_round_trips() -> None:
    fleet = Fleet(
        "Ansible inventory hosts.ini (--limit web)",
        (
            FleetHost("web1", "web1", ("-o", "HostName=127.0.0.1", "-p", "2201"), ("web", "prod"), run=7),
            FleetHost("web2", "web2", groups=("web",), failure="cannot log in: Connection refused"),
        ),
    )
    single, servers, back = read_discovery(json_round_trip(fleet.to_dict()))
    assert single is None and servers == () and back == fleet
