"""Sweep analysis and recommendations from hand-made samples (pure)."""

from __future__ import annotations

import math

import pytest

from fakes import (
    CHACHA,
    CTR,
    DISCOVERY,
    GCM,
    SNTRUP,
    connection,
    factorised_sweep,
    failed_connection,
    stored_values,
    transfer,
)
from sshbench.analyse import policy, sweep
from sshbench.analyse.recommend import recommend
from sshbench.model import Direction
from sshbench.ratios import Word
from sshbench.records import StoredScenario


def test_dimensions_use_the_reference_slices() -> None:
    dims = sweep.dimensions(factorised_sweep(), full=False)
    ctr = next(r for r in dims if r.kind == "cipher" and r.algorithm == CTR and r.direction == "down")
    assert ctr.basis == "with umac-64-etm@openssh.com" and ctr.estimate.median == pytest.approx(500, rel=0.01)
    sha1 = next(r for r in dims if r.kind == "mac" and r.algorithm == "hmac-sha1" and r.direction == "up")
    assert sha1.basis == f"with {CTR}" and sha1.estimate.median == pytest.approx(450, rel=0.01)
    kex = [r.algorithm for r in dims if r.kind == "kex"]
    assert kex[0] == "ecdh-sha2-nistp256"  # quickest first
    assert {r.algorithm for r in dims if r.kind == "hostkey"} == {"ssh-ed25519", "rsa-sha2-512"}


def test_unmeasured_pairs_are_predicted_from_per_byte_costs() -> None:
    combos = sweep.combinations(factorised_sweep())
    pred = next(c for c in combos if c.cipher == "aes128-cbc" and c.mac == "hmac-sha1")
    assert pred.predicted
    # 1/T = 1 / (1/1200 + 1/450 - 1/500)
    assert pred.rates["down"].median == pytest.approx(1 / (1 / 1200 + 1 / 450 - 1 / 500), rel=0.01)
    assert pred.rates["down"].low < pred.rates["down"].median < pred.rates["down"].high
    assert combos[0].label == "aes128-cbc + umac-64-etm@openssh.com" and not combos[0].predicted


def test_recommendation_overall_within_policy_and_handshake() -> None:
    rec = recommend(factorised_sweep(), DISCOVERY, policy.builtin("modern"), full=False)
    assert rec.overall is not None and rec.within_policy is not None and rec.handshake is not None
    assert (rec.overall.cipher, rec.overall.mac) == ("aes128-cbc", "umac-64-etm@openssh.com")
    assert rec.overall.kex == "ecdh-sha2-nistp256"
    assert (rec.within_policy.cipher, rec.within_policy.mac) == (GCM, None)
    assert rec.within_policy.kex == "curve25519-sha256"  # allowed: not post-quantum is not weak
    gain = rec.within_policy.gain
    assert gain is not None and gain.baseline == CHACHA and gain.verdict is not None
    assert gain.percent == pytest.approx(100 * (1000 / 600 - 1), rel=0.02)
    assert gain.verdict.word is Word.FASTER and gain.verdict.ratio.paired
    assert gain.verdict.ratio.low <= gain.verdict.ratio.value <= gain.verdict.ratio.high
    lat_gain = rec.within_policy.latency_gain
    assert lat_gain is not None and lat_gain.percent == pytest.approx(100 * (0.130 / 0.200 - 1), rel=0.02)  # -35 %
    assert rec.within_policy.hostkey is None and "HostKeyAlgorithms" not in rec.within_policy.lists
    texts = [c.text for c in rec.caveats]
    assert any("keep it" in c for c in texts)  # ed25519 is already the quickest host key, every key measured
    assert any("CBC excluded by policy" in c for c in texts)
    reasons = {(k, a): r for k, a, r in rec.excluded}
    assert "weak cipher mode" in reasons[("cipher", "aes128-cbc")]
    assert "SHA-1" in reasons[("mac", "hmac-sha1")]
    assert ("kex", "curve25519-sha256") not in reasons


def test_item_3_no_gain_of_the_pick_over_itself() -> None:
    """Issue 21, item 3: `recommend` stated "no significant change vs chacha20-poly1305 ... -28 % .. +38 %" for
    chacha20-poly1305 itself."""
    only = [transfer(CHACHA, None, 600.0, d) for d in Direction]
    rec = recommend(only, DISCOVERY, policy.builtin("modern"), full=False)
    assert rec.within_policy is not None and rec.within_policy.cipher == CHACHA
    gain = rec.within_policy.gain
    assert gain is not None and gain.same and gain.verdict is None
    assert gain.text("throughput") == f"throughput: this is what your client uses today ({CHACHA}): no change"


def test_item_1_failed_host_keys_are_listed_and_keep_it_is_not_claimed_over_them() -> None:
    """Issue 21, item 1: rsa/ecdsa host keys failed (host key verification), the tables showed only ed25519 and the
    verdict was "your current host key ssh-ed25519 is the quickest: keep it"."""
    failed = [
        failed_connection(SNTRUP, key, "Host key verification failed.")
        for key in ("rsa-sha2-512", "rsa-sha2-256", "ecdsa-sha2-nistp256")
    ]
    stored = [connection(SNTRUP, "ssh-ed25519", 0.2), *failed, *(transfer(GCM, None, 900.0, d) for d in Direction)]
    dims = sweep.dimensions(stored, full=False)
    keys = {r.algorithm: r for r in dims if r.kind == "hostkey"}
    assert set(keys) == {"ssh-ed25519", "rsa-sha2-512", "rsa-sha2-256", "ecdsa-sha2-nistp256"}
    assert keys["rsa-sha2-512"].estimate is None and keys["rsa-sha2-512"].failure == "Host key verification failed."
    rec = recommend(stored, DISCOVERY, policy.builtin("modern"), full=False)
    notes = [c.text for c in rec.caveats if c.subject == "host key"]
    assert notes and not any("keep it" in n for n in notes)
    assert all("rsa-sha2-512 (Host key verification failed.)" in n for n in notes)


def test_item_2_one_direction_is_never_called_both_ways() -> None:
    """Issue 21, item 2: with --direction down, "both ways = harmonic mean of down and up" was printed."""
    stored = [transfer(GCM, None, 900.0, Direction.DOWN), transfer(CHACHA, None, 600.0, Direction.DOWN)]
    assert sweep.measured_directions(stored) == ("down",)
    combos = sweep.combinations(stored)
    assert all(c.directions == ("down",) for c in combos)
    rec = recommend(stored, DISCOVERY, policy.builtin("modern"), full=False)
    assert rec.within_policy is not None and rec.within_policy.ways == "download"
    assert any("only download was measured" in c.text for c in rec.caveats)


def test_item_7_a_prediction_the_data_cannot_support_is_not_predicted() -> None:
    """Issue 21, item 7: predicted combinations showed intervals like "270-19196 MB/s"."""
    stored = factorised_sweep()
    noisy = [transfer(CTR, "hmac-sha1", 450.0, d) for d in Direction]
    wide = [stored_values(st.scenario, [45.0, 900.0, 450.0, 2000.0, 60.0, 450.0]) for st in noisy]
    stored = [st for st in stored if not (st.scenario.cipher == CTR and st.scenario.mac == "hmac-sha1")] + wide
    predicted, missing = sweep.predictions(stored)
    assert "aes128-cbc + hmac-sha1" in missing
    assert all(c.label != "aes128-cbc + hmac-sha1" for c in predicted)
    for c in predicted:
        for est in c.rates.values():
            assert 0.5 * est.median <= est.low and est.high <= 1.5 * est.median


UMAC, SHA256 = "umac-64-etm@openssh.com", "hmac-sha2-256-etm@openssh.com"


def _model(cipher: float, mac: float) -> float:
    """Return the factorised model's rate for a cipher measured at `cipher` MB/s with umac-64-etm and a MAC measured
    at `mac` MB/s with aes128-ctr (500 MB/s with umac-64-etm)."""
    return 1 / (1 / cipher + 1 / mac - 1 / 500)


def _with_checks(off: float) -> list[StoredScenario]:
    """Return the factorised sweep plus aes256-ctr (with umac-64-etm) and two check pairs, measured at `off` times
    and 1 / `off` times what the model predicts for them."""
    extra = [
        ("aes256-ctr", UMAC, 600.0),
        ("aes128-cbc", SHA256, _model(1200, 400) * off),
        ("aes256-ctr", "hmac-sha1", _model(600, 450) / off),
    ]
    return factorised_sweep() + [transfer(c, m, r, d) for c, m, r in extra for d in Direction]


def test_predictions_take_their_interval_from_the_model_error_on_check_pairs() -> None:
    before = next(c for c in sweep.predictions(factorised_sweep())[0] if c.label == "aes128-cbc + hmac-sha1")
    after = next(c for c in sweep.predictions(_with_checks(1.02))[0] if c.label == "aes128-cbc + hmac-sha1")
    assert after.rates["down"].median == pytest.approx(before.rates["down"].median)  # the same point
    assert after.rates["down"].low < after.rates["down"].median < after.rates["down"].high
    errors = sweep.model_errors(sweep._measured(_with_checks(1.02)), CTR, UMAC)
    assert errors["down"].checks == 2 and errors["down"].rms == pytest.approx(math.log(1.02), rel=0.01)


def test_a_model_its_check_pairs_contradict_predicts_nothing() -> None:
    predicted, missing = sweep.predictions(_with_checks(0.7))  # off by 30 % both ways: t(0.975, 2) = 4.3
    assert not predicted and "aes128-cbc + hmac-sha1" in missing


def test_item_5_a_mac_measured_with_one_cipher_alone_has_no_row() -> None:
    """Issue 21, item 5: with each cipher and its default MAC only, the MAC 'dimension' held 3des-cbc's time."""
    stored = [
        transfer(c, "umac-64-etm@openssh.com", r, Direction.DOWN)
        for c, r in (("3des-cbc", 26.0), ("aes256-ctr", 500.0))
    ]
    assert [r for r in sweep.dimensions(stored, full=False) if r.kind == "mac"] == []
    with_ref = [*stored, transfer(CTR, "umac-64-etm@openssh.com", 520.0, Direction.DOWN)]
    macs = [r for r in sweep.dimensions(with_ref, full=False) if r.kind == "mac"]
    assert len(macs) == 1 and macs[0].basis == f"with {CTR}" and macs[0].estimate is not None
    assert macs[0].estimate.median == pytest.approx(520.0, rel=0.02)
