"""Ranks follow the paired verdicts (docs/CLAIMS.md): a row equivalent to the first row of its group shares its
rank; a row "not told apart from the leader" yet is undecided: listed after the ranked rows, unranked, so no rank
says it is above or below a row whose verdict is known."""

from __future__ import annotations

from fakes import stored_values
from sshbench.analyse.results import build_rows
from sshbench.model import Direction, Kind, Scenario
from sshbench.ratios import Standing

LEADER = Scenario(Kind.THROUGHPUT, cipher="aes128-gcm@openssh.com", direction=Direction.UP)
STEADY = Scenario(Kind.THROUGHPUT, cipher="aes256-gcm@openssh.com", direction=Direction.UP)
WIDE = Scenario(Kind.THROUGHPUT, cipher="aes128-ctr", direction=Direction.UP)


def test_a_row_not_told_apart_from_the_leader_is_listed_unranked_after_the_decided_rows() -> None:
    rows = build_rows(
        [
            stored_values(LEADER, [1000, 1010, 990, 1005, 995, 1000]),
            stored_values(STEADY, [900, 905, 895, 902, 898, 900]),  # 10 % slower every round
            stored_values(WIDE, [1200, 600, 1150, 650, 1100, 700]),  # median 875, wide: not told apart from the leader
        ],
        0.05,
    )
    by = {r.scenario.cipher: r for r in rows}
    assert by["aes256-gcm@openssh.com"].standing is Standing.SLOWER
    assert by["aes128-ctr"].standing is Standing.INCONCLUSIVE
    assert (by["aes128-gcm@openssh.com"].rank, by["aes128-ctr"].rank, by["aes256-gcm@openssh.com"].rank) == (1, 0, 2)
    assert not any(r.tied for r in rows)  # 875 (n 6, undecided) is not ranked above or beside 900 (slower)
    assert [r.scenario.cipher for r in rows] == ["aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "aes128-ctr"]


def test_rows_slower_than_the_leader_rank_among_themselves_by_the_same_rule() -> None:
    third = Scenario(Kind.THROUGHPUT, cipher="3des-cbc", direction=Direction.UP)
    rows = build_rows(
        [
            stored_values(LEADER, [1000, 1010, 990, 1005, 995, 1000]),
            stored_values(STEADY, [900, 905, 895, 902, 898, 900]),
            stored_values(third, [100, 101, 99, 100, 100, 101]),
        ],
        0.05,
    )
    assert [(r.scenario.cipher, r.rank, r.tied) for r in rows] == [
        ("aes128-gcm@openssh.com", 1, False),
        ("aes256-gcm@openssh.com", 2, False),
        ("3des-cbc", 3, False),
    ]


def test_a_pick_not_told_apart_from_the_leader_is_never_called_one_the_policy_allows_none_of() -> None:
    from sshbench.analyse.claims.fastest import pick, sentence
    from sshbench.analyse.policy import Policy

    rows = build_rows(
        [
            stored_values(LEADER, [1000, 1010, 990, 1005, 995, 1000]),
            stored_values(WIDE, [1200, 600, 1150, 650, 1100, 700]),  # not told apart from the leader
        ],
        0.05,
    )
    no_gcm = Policy("policy mine", "any", deny={"cipher": {LEADER.cipher or "": "not here"}})
    p = pick(rows, no_gcm, None)
    assert p is not None and p.chosen.scenario.cipher == "aes128-ctr"
    said = sentence(p)
    assert "none of these" not in said
    assert "policy mine does not allow the leader and picks aes128-ctr" in said
    assert said.endswith("not told apart from the leader yet")


def test_a_pick_the_policy_allows_is_one_not_told_apart_from_the_leader_before_one_surely_slower() -> None:
    """A `latency` run's answer picked curve25519-sha256 / rsa-sha2-256, 6 % slower (ranked 2), over the client's
    default mlkem768x25519-sha256 / ssh-ed25519 (not told apart from the leader: listed after the ranked rows), where
    `recommend` kept the default: an undecided row may be as fast as the leader, a slower one is not."""
    from sshbench.analyse.claims.fastest import pick
    from sshbench.analyse.policy import Policy

    rows = build_rows(
        [
            stored_values(LEADER, [1000, 1010, 990, 1005, 995, 1000]),
            stored_values(STEADY, [900, 905, 895, 902, 898, 900]),  # significantly slower: ranked 2
            stored_values(WIDE, [1200, 600, 1150, 650, 1100, 700]),  # not told apart from the leader: listed last
        ],
        0.05,
    )
    assert [r.scenario.cipher for r in rows] == [LEADER.cipher, STEADY.cipher, WIDE.cipher]
    p = pick(rows, Policy("policy mine", "any", deny={"cipher": {LEADER.cipher or "": "not here"}}), None)
    assert p is not None and p.chosen.scenario.cipher == WIDE.cipher


def test_a_pick_behind_rows_not_told_apart_names_them_among_what_the_policy_passed_over() -> None:
    from sshbench.analyse.claims.fastest import pick, sentence
    from sshbench.analyse.policy import Policy

    rows = build_rows(
        [
            stored_values(LEADER, [1000, 1010, 990, 1005, 995, 1000]),
            stored_values(WIDE, [1200, 600, 1150, 650, 1100, 700]),  # not told apart from the leader
            stored_values(STEADY, [900, 905, 895, 902, 898, 900]),  # significantly slower
        ],
        0.05,
    )
    deny = {"cipher": {LEADER.cipher or "": "not here", WIDE.cipher or "": "nor here"}}
    p = pick(rows, Policy("policy mine", "any", deny=deny), None)
    assert p is not None and p.chosen.scenario.cipher == STEADY.cipher
    said = sentence(p)
    assert "policy mine allows neither the leader nor what is not told apart from it and picks aes256-gcm" in said
    assert said.endswith("significantly slower than the leader")


def test_ranks_among_the_slower_rows_follow_their_medians() -> None:
    """Issue 54, item 5: a noisy row at 417 shared rank 6 with 554 while 528, steadier, ranked 11 (here 500)."""
    names = ("aes128-ctr", "aes192-ctr", "aes256-ctr")
    a, c, b = (Scenario(Kind.THROUGHPUT, cipher=n, direction=Direction.UP) for n in names)
    rows = build_rows(
        [
            stored_values(LEADER, [1000, 1010, 990, 1005, 995, 1000]),
            stored_values(a, [554, 556, 552, 555, 553, 554]),
            stored_values(c, [500, 502, 498, 501, 499, 500]),
            stored_values(b, [417, 640, 400, 420, 410, 415]),  # wide: not told apart from 554 or 500
        ],
        0.05,
    )
    assert [(r.scenario.cipher, r.rank, r.tied) for r in rows] == [
        ("aes128-gcm@openssh.com", 1, False),
        ("aes128-ctr", 2, False),
        ("aes192-ctr", 3, False),
        ("aes256-ctr", 4, False),
    ]


def test_rows_decided_slower_on_three_samples_are_one_line_not_a_warning_each() -> None:
    """Issue 54, item 4 (and 57's first step): a row racing stopped at 3 samples because it was already slower was
    warned about one by one ("only 3 samples, the CI covers 75%") under "allow more rounds (--max-rounds,
    --max-time)", which would not change its rank; now one line says so, and a row that more rounds would help (the
    leader's wide interval) still gets the warning and the advice."""
    from sshbench.render.notes import row_notes

    slow = Scenario(Kind.THROUGHPUT, cipher="3des-cbc", direction=Direction.UP)
    rows = build_rows(
        [
            stored_values(LEADER, [1000, 1400, 700, 1005, 995, 1300]),  # wide: its CI is over the 5 % target
            stored_values(slow, [24, 25, 24]),
        ],
        0.05,
    )
    notes = " ".join(row_notes(rows))
    assert "3des-cbc up: only 3 samples" not in notes
    assert "~ stopped early: 1 row(s) already significantly slower than the leader at 3 samples" in notes
    assert "aes128-gcm@openssh.com up: 95 % CI is" in notes and "allow more rounds" in notes
