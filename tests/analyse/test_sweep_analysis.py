"""Sweep analysis and recommendations from hand-made samples (pure)."""

from __future__ import annotations

import pytest

from fakes import CHACHA, CTR, DISCOVERY, GCM, factorised_sweep
from sshbench.analyse import policy, sweep


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
    rec = sweep.recommend(factorised_sweep(), DISCOVERY, policy.builtin("modern"), full=False)
    assert rec.overall is not None and rec.within_policy is not None and rec.handshake is not None
    assert (rec.overall.cipher, rec.overall.mac) == ("aes128-cbc", "umac-64-etm@openssh.com")
    assert rec.overall.kex == "ecdh-sha2-nistp256"
    assert (rec.within_policy.cipher, rec.within_policy.mac) == (GCM, None)
    assert rec.within_policy.kex == "curve25519-sha256"  # allowed: not post-quantum is not weak
    gain = rec.within_policy.gain
    assert (
        gain is not None and gain.baseline == CHACHA and gain.percent == pytest.approx(100 * (1000 / 600 - 1), rel=0.02)
    )
    assert gain.low < gain.percent < gain.high
    lat_gain = rec.within_policy.latency_gain
    assert lat_gain is not None and lat_gain.percent == pytest.approx(100 * (0.130 / 0.200 - 1), rel=0.02)  # -35 %
    assert rec.within_policy.hostkey is None and "HostKeyAlgorithms" not in rec.within_policy.lists
    assert any("keep it" in c for c in rec.caveats)  # ed25519 is already the quickest host key
    assert any("CBC excluded by policy" in c for c in rec.caveats)
    reasons = {(k, a): r for k, a, r in rec.excluded}
    assert "weak cipher mode" in reasons[("cipher", "aes128-cbc")]
    assert "SHA-1" in reasons[("mac", "hmac-sha1")]
    assert ("kex", "curve25519-sha256") not in reasons
