"""The key-exchange catalog: post-quantum as ssh-audit's rating implied it for this machine's OpenSSH, aliases measured
once under the client's own name, the cheap ones `tune` races."""

from __future__ import annotations

import shutil

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sshbench import kex
from sshbench.discovery import Rating
from sshbench.ssh import audit
from sshbench.ssh.discover import client_algorithms

NAMES = [n for k in kex.CATALOG for n in k.names]


@pytest.mark.skipif(shutil.which("ssh") is None, reason="no OpenSSH client here")
def test_post_quantum_from_the_catalog_equals_the_old_inference_for_every_kex_this_openssh_offers() -> None:
    offered = client_algorithms(str(shutil.which("ssh")))["kex"]
    assert offered
    for name in offered:
        assert kex.is_post_quantum(name) == (audit.rate("kex", name).rating is Rating.OK), name
        assert kex.lookup(name) is not None, f"{name} is offered here and missing from the catalog"


def test_the_inference_was_wrong_where_the_catalog_is_right() -> None:
    # ssh-audit fails the NIST-curve ML-KEM hybrid for its curve: rated FAIL, it was "not post-quantum"
    assert audit.rate("kex", "mlkem768nistp256-sha256").rating is Rating.FAIL
    assert kex.is_post_quantum("mlkem768nistp256-sha256") and kex.is_post_quantum("mlkem768x25519-sha256")
    assert not kex.is_post_quantum("curve25519-sha256@libssh.org") and not kex.is_post_quantum("no-such-kex")


def test_key_shares_are_the_published_sizes() -> None:
    mlkem, sntrup, curve = (
        kex.lookup(n) for n in ("mlkem768x25519-sha256", "sntrup761x25519-sha512", "curve25519-sha256")
    )
    assert mlkem and sntrup and curve
    assert (mlkem.client_share, mlkem.server_share) == (1216, 1120)
    assert (sntrup.client_share, sntrup.server_share) == (1190, 1071)
    assert (curve.client_share, curve.server_share) == (32, 32)


def test_aliases_are_one_algorithm_kept_under_the_name_the_client_proposes_first() -> None:
    names = [
        "curve25519-sha256",
        "curve25519-sha256@libssh.org",
        "sntrup761x25519-sha512@openssh.com",
        "ecdh-sha2-nistp256",
    ]
    assert kex.merged(names) == ("curve25519-sha256", "sntrup761x25519-sha512@openssh.com", "ecdh-sha2-nistp256")
    preferred = ("sntrup761x25519-sha512", "curve25519-sha256@libssh.org", "curve25519-sha256")
    both = [*names, "sntrup761x25519-sha512"]
    assert kex.merged(both, preferred) == (
        "curve25519-sha256@libssh.org",
        "sntrup761x25519-sha512",
        "ecdh-sha2-nistp256",
    )
    assert kex.same("curve25519-sha256", "curve25519-sha256@libssh.org") and not kex.same("curve25519-sha256", None)
    assert kex.aliases_of(["curve25519-sha256", "ecdh-sha2-nistp256"]) == [
        ("curve25519-sha256", ("curve25519-sha256@libssh.org",))
    ]
    assert kex.aliases_of(["curve25519-sha256", "curve25519-sha256@libssh.org"]) == []  # both measured: no note


def test_tune_races_the_cheap_ones_each_once_in_catalog_order() -> None:
    shared = [
        "diffie-hellman-group14-sha256",
        "sntrup761x25519-sha512@openssh.com",
        "curve25519-sha256@libssh.org",
        "curve25519-sha256",
        "ecdh-sha2-nistp256",
    ]
    assert kex.cheap(shared) == ["curve25519-sha256", "ecdh-sha2-nistp256", "sntrup761x25519-sha512@openssh.com"]


@given(st.lists(st.sampled_from([*NAMES, "x-unknown", "y-unknown"]), max_size=12))
def test_merging_keeps_one_name_per_algorithm_and_loses_none(names: list[str]) -> None:
    out = kex.merged(names)
    assert len({kex.canonical(n) for n in out}) == len(out)
    assert {kex.canonical(n) for n in out} == {kex.canonical(n) for n in names}
    assert set(out) <= set(names)
