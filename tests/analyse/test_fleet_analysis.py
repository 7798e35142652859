"""The fleet's answers from hand-made hosts: ranking within each host, offered-by-every-host first, ties, outliers
against the rest of the group, and which hosts would need a change or refuse the configuration."""

from __future__ import annotations

from sshbench.analyse.fleet import HostRow, group_rows, outliers, rank, recommend
from sshbench.analyse.policy import builtin
from sshbench.discovery import Discovery, Negotiated, Profile, ServerOffer
from sshbench.model import Direction
from sshbench.records import FleetHost
from sshbench.stats import summarize

KEX = ("curve25519-sha256", "sntrup761x25519-sha512@openssh.com", "diffie-hellman-group14-sha1")
CIPHERS = ("chacha20-poly1305@openssh.com", "aes128-gcm@openssh.com", "aes128-ctr")
MACS = ("hmac-sha2-256-etm@openssh.com", "hmac-sha1")


def _host(
    name: str,
    group: str,
    kex: tuple[str, ...] = KEX,
    ciphers: tuple[str, ...] = CIPHERS,
    macs: tuple[str, ...] = MACS,
    connects: dict[str, list[float]] | None = None,
    rates: dict[str, list[float]] | None = None,
) -> HostRow:
    """Return a reached host offering these algorithms, with connection times (s) per kex and rates (MB/s)."""
    client = {"kex": KEX, "hostkey": ("ssh-ed25519",), "cipher": CIPHERS, "mac": MACS}
    offer = ServerOffer("SSH-2.0-Test", kex, ("ssh-ed25519",), ciphers, macs)
    default = Negotiated(kex[0], "ssh-ed25519", ciphers[0], None, "SSH-2.0-Test")
    disc = Discovery(client, client, offer, None, (Profile("default", default, None),))
    sums = {k: summarize(v) for k, v in (connects or {}).items()}
    thr = {(c, Direction.DOWN): summarize(v) for c, v in (rates or {}).items()}
    return HostRow(FleetHost(name, name, groups=(group,)), disc, None, sums.get(kex[0]), sums, thr)


FAST, SLOW = [0.100, 0.101, 0.102, 0.099, 0.100], [0.200, 0.201, 0.199, 0.202, 0.200]


def test_the_kex_every_host_offers_and_that_is_fastest_everywhere_comes_first() -> None:
    rows = [
        _host("a", "web", connects={"curve25519-sha256": FAST, "sntrup761x25519-sha512@openssh.com": SLOW}),
        _host("b", "web", connects={"curve25519-sha256": FAST, "sntrup761x25519-sha512@openssh.com": SLOW}),
    ]
    policy = builtin("modern")
    ranked = rank("kex", rows, lambda n: policy.check("kex", n).allowed, [r.connects for r in rows], True)
    assert [r.name for r in ranked] == ["curve25519-sha256", "sntrup761x25519-sha512@openssh.com"]  # sha1 excluded
    assert ranked[0].fastest_on == 2 and ranked[0].ratio == 1.0
    assert ranked[1].fastest_on == 0 and ranked[1].ratio is not None and 1.9 < ranked[1].ratio < 2.1


def test_an_algorithm_one_host_lacks_ranks_after_those_all_offer_and_the_host_is_named() -> None:
    chacha = "chacha20-poly1305@openssh.com"
    rows = [
        _host("a", "web", rates={"aes128-gcm@openssh.com": [900, 910, 905], chacha: [500] * 3}),
        _host("tiny", "web", ciphers=(chacha,), rates={chacha: [300] * 3}),
    ]
    choice = recommend(rows, builtin("modern"))
    assert choice is not None
    assert choice.lists()["Ciphers"][0] == chacha  # the one every host offers, though slower where both are
    gcm = next(r for k in choice.kinds for r in k.ordered if r.name == "aes128-gcm@openssh.com")
    assert gcm.lacking == ("tiny",) and gcm.fastest_on == 1
    assert choice.refuses == {} and choice.needs_change == {}


def test_a_host_with_nothing_listed_refuses_and_aead_needs_no_mac() -> None:
    rows = [
        _host("a", "web", connects={"curve25519-sha256": FAST}),
        _host("old", "web", kex=("diffie-hellman-group14-sha1",), connects={"diffie-hellman-group14-sha1": SLOW}),
        _host("aead", "web", macs=("hmac-sha1",), ciphers=("chacha20-poly1305@openssh.com",)),
        _host("ctr", "web", macs=("hmac-sha1",), ciphers=("aes128-ctr",)),
    ]
    choice = recommend(rows, builtin("modern"))
    assert choice is not None
    assert choice.refuses == {"old": ("KexAlgorithms",), "ctr": ("MACs",)}
    assert "old" in choice.needs_change and "aead" not in choice.refuses


def test_outliers_are_far_above_the_rest_of_their_group_even_at_their_ci_low_end() -> None:
    rows = [_host(f"h{i}", "web", connects={"curve25519-sha256": FAST}) for i in range(3)]
    rows.append(_host("slow", "web", connects={"curve25519-sha256": [0.5, 0.52, 0.49, 0.51, 0.5]}))
    rows.append(_host("lone", "db", connects={"curve25519-sha256": [0.9] * 5}))
    found = outliers(rows)
    assert [(o.host, o.group) for o in found] == [("slow", "web")]
    assert 4.5 < found[0].ratio < 5.5
    groups = {g.name: g for g in group_rows(rows)}
    assert groups["web"].measured == 4 and groups["db"].hosts == 1


def test_a_kex_pick_that_leaves_the_hosts_post_quantum_default_says_so() -> None:
    """Issue 34: every pick that leaves a post-quantum default says so (the key-exchange catalog)."""
    pq_first = ("sntrup761x25519-sha512@openssh.com", "curve25519-sha256")
    rows = [
        _host("a", "web", kex=pq_first, connects={"curve25519-sha256": FAST, pq_first[0]: SLOW}),
        _host("b", "web", connects={"curve25519-sha256": FAST, pq_first[0]: SLOW}),  # today's default: curve25519
    ]
    choice = recommend(rows, builtin("modern"))
    assert choice is not None and choice.kinds[0].pick is not None
    assert choice.kinds[0].pick.name == "curve25519-sha256"
    (loss,) = choice.loses
    assert loss.startswith(f"your default key exchange {pq_first[0]} is post-quantum and curve25519-sha256 is not")
    assert loss.endswith("(on a)")
