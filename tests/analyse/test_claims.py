"""The claim invariants (tests/claims_invariants.py) on runs made up by hypothesis: any rates, spreads, failed rows,
one or both directions, links, CPU limits and crypto ceilings, under every kind of run that makes claims."""

from __future__ import annotations

import dataclasses
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from claims_invariants import check_run
from fakes import CHACHA, CTR, ENVIRONMENT, GCM, stored_run_record
from sshbench.environment import EmbeddedInfo, Environment, LinkInfo
from sshbench.model import Direction, Kind, Scenario
from sshbench.records import StoredRun, StoredScenario
from sshbench.runkinds import RunKind
from sshbench.samples import Sample

CIPHERS = (
    (GCM, None),
    (CHACHA, None),
    (CTR, "umac-64-etm@openssh.com"),
    ("aes256-cbc", "umac-64-etm@openssh.com"),
    (CTR, "hmac-sha2-256-etm@openssh.com"),
    ("3des-cbc", "hmac-sha1"),
)
KEXES = ("curve25519-sha256", "sntrup761x25519-sha512@openssh.com", "ecdh-sha2-nistp256")
HOSTKEYS = ("ssh-ed25519", "rsa-sha2-512", "ecdsa-sha2-nistp256")


@st.composite
def samples(draw: st.DrawFn, sc: Scenario, centre: float) -> StoredScenario:
    """Return a scenario's stored samples: a few rounds around `centre` with some spread, or a failure."""
    if draw(st.integers(0, 9)) == 0:
        failed = (Sample(sc, 0, True, False, None, 0.1, error="Host key verification failed."),)
        return StoredScenario(0, 0, sc, "Host key verification failed.", failed)
    spread = draw(st.sampled_from((0.01, 0.05, 0.2, 0.6)))
    n = draw(st.integers(1, 10))
    noise = draw(st.lists(st.floats(-1, 1), min_size=n, max_size=n))
    values = [centre * math.exp(spread * z) for z in noise]
    nbytes = None if sc.kind is Kind.LATENCY else 2**27
    rows = [Sample(sc, 0, True, True, centre, 1.0, nbytes=nbytes)]
    rows += [
        Sample(sc, i, False, True, v, 1.0, nbytes=nbytes, client_cpu=0.2, server_cpu=0.3)
        for i, v in enumerate(values, 1)
    ]
    return StoredScenario(0, 0, sc, None, tuple(rows))


@st.composite
def environments(draw: st.DrawFn) -> Environment:
    """Return an environment with or without a link, a server CPU limit and crypto ceilings."""
    link = draw(
        st.sampled_from(
            (
                None,
                LinkInfo("wan", 100e6, 0.02, measured_rtt_s=0.0204),
                LinkInfo("long-fat", 1e9, 0.1, measured_rtt_s=0.1003),
            )
        )
    )
    share = draw(st.sampled_from((None, 0.1, 0.5)))
    embedded = EmbeddedInfo("openssh", "OpenSSH", (), None, None, receive_window=2 * 2**20, cpu_share=share)
    sides = st.fixed_dictionaries({"client": st.floats(20, 3000), "server": st.floats(20, 3000)})
    ceilings = draw(st.dictionaries(st.sampled_from([c for c, _ in CIPHERS]), sides, max_size=4))
    return dataclasses.replace(ENVIRONMENT, link=link, embedded=embedded, crypto_ceilings=ceilings)


@st.composite
def runs(draw: st.DrawFn) -> StoredRun:
    """Return a made-up run of a kind that makes claims."""
    kind = draw(st.sampled_from((RunKind.RUN, RunKind.THROUGHPUT, RunKind.SWEEP, RunKind.TOOLS)))
    ways = draw(st.sampled_from(((Direction.DOWN,), (Direction.UP,), (Direction.DOWN, Direction.UP))))
    stored: list[StoredScenario] = []
    if kind in (RunKind.RUN, RunKind.SWEEP):
        pairs = [(kex, HOSTKEYS[0]) for kex in KEXES] + [(KEXES[0], key) for key in HOSTKEYS[1:]]
        for kex, key in pairs:
            stored.append(draw(samples(Scenario(Kind.LATENCY, kex=kex, hostkey=key), draw(st.floats(0.1, 0.3)))))
    for cipher, mac in draw(st.lists(st.sampled_from(CIPHERS), min_size=1, max_size=6, unique=True)):
        for d in ways:
            if kind is RunKind.TOOLS:
                for tool in ("scp", "rsync"):
                    sc = Scenario(Kind.TOOL, tool=tool, cipher=cipher, mac=mac, direction=d)
                    stored.append(draw(samples(sc, draw(st.floats(5, 1500)))))
            else:
                sc = Scenario(Kind.THROUGHPUT, cipher=cipher, mac=mac, direction=d)
                stored.append(draw(samples(sc, draw(st.floats(5, 1500)))))
    if kind is RunKind.TOOLS:
        for d in ways:
            for tool in ("tcp", "rsyncd"):
                stored.append(draw(samples(Scenario(Kind.TOOL, tool=tool, direction=d), draw(st.floats(5, 1500)))))
    stored = [dataclasses.replace(s, id=i, position=i) for i, s in enumerate(stored)]
    record = stored_run_record(kind)
    return StoredRun(dataclasses.replace(record, environment=draw(environments())), tuple(stored))


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(runs())
def test_every_claim_holds_against_its_evidence(run: StoredRun) -> None:
    assert check_run(run) == []
