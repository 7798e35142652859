"""A key exchange's cost against curve25519-sha256 (analyse/kexcost.py): paired by round, so a drift that moves both
rows cancels; bytes beyond the baseline's counted login set against the catalog's key shares; compared only within
one server and host key."""

from __future__ import annotations

import io

from rich.console import Console

from sshbench.analyse.kexcost import BASELINE, kex_costs, paired_difference, share_difference
from sshbench.model import Kind, Scenario
from sshbench.records import StoredScenario
from sshbench.render.kexcost import print_kex_costs
from sshbench.samples import Sample

MLKEM = "mlkem768x25519-sha256"
DRIFT = [0.100, 0.140, 0.105, 0.150, 0.102, 0.145]  # the machine's own noise: 50 % between rounds


def login(kex: str, extra: float, wire: dict[str, int] | None, server: str | None = None) -> StoredScenario:
    """Return a latency row whose every round is the baseline's plus `extra` s (CPU: a tenth of that each side)."""
    sc = Scenario(Kind.LATENCY, kex=kex, hostkey="ssh-ed25519", server=server)
    samples = [Sample(sc, 0, True, True, 0.2, 0.2, wire=wire)]
    samples += [
        Sample(sc, r, False, True, t + extra, t + extra, client_cpu=0.01 + extra / 10, server_cpu=0.02 + extra / 10)
        for r, t in enumerate(DRIFT, 1)
    ]
    return StoredScenario(0, 0, sc, None, tuple(samples))


def test_a_paired_difference_cancels_what_moves_both_rows() -> None:
    a = dict(enumerate(DRIFT, 1))
    b = {r: v + 0.003 for r, v in a.items()}
    d = paired_difference(a, b)
    assert d is not None and d.n == 6
    assert abs(d.median - 0.003) < 1e-12 and abs(d.ci_low - 0.003) < 1e-12 and abs(d.ci_high - 0.003) < 1e-12
    assert paired_difference(a, {1: 0.1, 2: 0.2}) is None  # fewer than 3 rounds in common


def test_ml_kem_costs_its_key_shares_in_bytes_and_its_paired_time() -> None:
    base = login(BASELINE, 0.0, {"kex_sent": 929, "kex_received": 1825, "round_trips": 3})
    mlkem = login(MLKEM, 0.0012, {"kex_sent": 2121, "kex_received": 2913, "round_trips": 3})
    costs = {c.scenario.kex: c for c in kex_costs([mlkem, base])}
    cost = costs[MLKEM]
    assert cost.post_quantum and not costs[BASELINE].post_quantum and costs[BASELINE].baseline
    assert cost.extra_bytes == (1192, 1088) and cost.share_bytes == share_difference(MLKEM) == (1184, 1088)
    assert cost.extra_time is not None and abs(cost.extra_time.median - 0.0012) < 1e-9
    assert cost.extra_client_cpu is not None and abs(cost.extra_client_cpu.median - 0.00012) < 1e-9
    console = Console(file=io.StringIO(), width=240, color_system=None)
    print_kex_costs(console, list(costs.values()))
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "+1192/+1088 (+1184/+1088)" in text and "2121/2913" in text
    assert f"{MLKEM} against {BASELINE} (same rounds): +1.2 ms (+1.2..+1.2) per connection" in text
    assert "+2280 bytes to the new keys" in text and "counting relay" in text


def test_kexes_are_compared_within_their_server_only_and_a_missing_baseline_is_said() -> None:
    rows = [login(BASELINE, 0.0, None, "openssh"), login(MLKEM, 0.001, None, "gossh"), login(MLKEM, 0.002, None)]
    costs = kex_costs(rows)
    assert all(c.extra_time is None for c in costs if c.scenario.kex == MLKEM)  # no curve25519 beside them
    console = Console(file=io.StringIO(), width=240, color_system=None)
    print_kex_costs(console, [c for c in costs if c.scenario.server != "openssh"])
    assert f"add {BASELINE} to --kex" in console.file.getvalue()  # type: ignore[attr-defined]
    assert kex_costs([login(BASELINE, 0.0, None)]) == []  # one kex, nothing counted: no table


def test_recommend_under_post_quantum_states_what_its_pick_costs_or_how_to_measure_it() -> None:
    from sshbench.analyse import policy
    from sshbench.analyse.recommend import recommend

    base = login(BASELINE, 0.0, {"kex_sent": 929, "kex_received": 1825, "round_trips": 3})
    mlkem = login(MLKEM, 0.0012, {"kex_sent": 2121, "kex_received": 2913, "round_trips": 3})
    rec = recommend([mlkem, base], None, policy.builtin("post-quantum"), full=False)
    assert rec.handshake is not None and rec.handshake.kex == MLKEM
    costs = [c.text for c in rec.caveats if c.text.startswith("cost of the post-quantum pick")]
    assert costs == [
        f"cost of the post-quantum pick: {MLKEM} against {BASELINE} (same rounds): +1.2 ms (+1.2..+1.2) per "
        "connection, +0.1 ms (+0.1..+0.1) of client CPU, +0.1 ms (+0.1..+0.1) of server CPU, +2280 bytes to the "
        "new keys"
    ]
    alone = recommend([mlkem], None, policy.builtin("post-quantum"), full=False)
    assert any(f"--kex {MLKEM},{BASELINE}" in c.text for c in alone.caveats)


def test_a_difference_from_three_rounds_says_its_75_percent_coverage_and_each_sentence_names_its_host_key() -> None:
    from sshbench.analyse.kexcost import Difference, KexCost, cost_sentence, said
    from sshbench.render.kexcost import difference_cell

    three = Difference(3, 0.0051, 0.0042, 0.0060, 0.75)
    assert said(three) == "+5.1 ms (+4.2..+6.0, a 75 % interval)"
    assert difference_cell(three, False) == "+5.1 (+4.2..+6.0, 75 %)"
    six = Difference(6, 0.0051, 0.0042, 0.0060, 0.96875)
    assert said(six) == "+5.1 ms (+4.2..+6.0)" and difference_cell(six, False) == "+5.1 (+4.2..+6.0)"
    sc = Scenario(Kind.LATENCY, kex="sntrup761x25519-sha512", hostkey="rsa-sha2-512")
    cost = KexCost(sc, True, 0.1, None, None, None, extra_time=three)
    assert str(cost_sentence(cost, keyed=True)).startswith("sntrup761x25519-sha512 with rsa-sha2-512 against curve")
    assert str(cost_sentence(cost)).startswith("sntrup761x25519-sha512 against")  # one host key: not named
