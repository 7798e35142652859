"""What each key exchange costs a server in logins a second (issue 56: `load --kex A,B,...`)."""

from __future__ import annotations

import pytest
from rich.console import Console

from sshbench.analyse.capacity import capacities, mean
from sshbench.analyse.load import Step
from sshbench.render.capacity import print_capacity

CURVE, SNTRUP, MLKEM = "curve25519-sha256", "sntrup761x25519-sha512", "mlkem768x25519-sha256"


def _step(kex: str, rate: float, cpu: float, p99: float = 0.2) -> Step:
    """Return a step at `rate` whose server spent `cpu` seconds a login, its p99 `p99` seconds."""
    return Step(
        rate,
        int(rate * 5),
        0,
        (),
        rate,
        ((50.0, 0.1), (99.0, p99)),
        p99,
        0.01,
        0.01,
        0.001,
        kex=kex,
        server_cpu=cpu,
        server_share=rate * cpu,
    )


def test_a_key_exchange_that_costs_the_server_more_serves_fewer_logins_a_core_and_says_by_how_much() -> None:
    """Curve25519 at 19.2 ms of server CPU a login, sntrup761 5 ms more, ML-KEM within noise of curve25519."""
    rows = []
    for rate, noise in ((10, 0.0002), (20, -0.0001), (40, 0.0001), (48, -0.0002)):
        late = 1.5 if rate == 48 else 0.2
        rows += [
            _step(CURVE, rate, 0.0192 + noise, late),
            _step(SNTRUP, rate, 0.0243 + noise * 2, 1.5 if rate >= 40 else 0.2),
            _step(MLKEM, rate, 0.0194 - noise, late),
        ]
    curve, sntrup, mlkem = capacities(rows, (CURVE, SNTRUP, MLKEM), 1.0)
    assert curve.diff is None and curve.cpu is not None and curve.cpu.value == pytest.approx(0.0192, abs=1e-4)
    assert curve.knee.rate == 40 and sntrup.knee.rate == 20 and mlkem.knee.rate == 40
    assert sntrup.diff is not None and sntrup.diff.low is not None and sntrup.diff.low > 0.004
    assert sntrup.change(curve) == pytest.approx(0.0192 / 0.0243 - 1, abs=0.01)  # about -21 % a core
    assert mlkem.diff is not None and mlkem.diff.low is not None and mlkem.diff.high is not None
    assert mlkem.diff.low < 0 < mlkem.diff.high
    printed = Console(record=True, width=200)
    print_capacity(printed, [curve, sntrup, mlkem])
    said = printed.export_text()
    assert "the baseline" in said and "-21 % logins a second a core" in said and "52" in said
    assert "no measurable difference" in said


def test_one_value_has_no_interval_and_none_has_no_mean() -> None:
    one = mean([0.02])
    assert one is not None and one.low is None and one.n == 1
    assert mean([]) is None


def test_two_runs_set_each_key_exchanges_cpu_side_by_side_with_welchs_interval() -> None:
    """`compare A B` of two `load --kex` runs: the same key exchange's CPU a login in each, B - A unpaired."""
    from sshbench.analyse.capacity import across, welch

    before = [_step(CURVE, r, 0.0260 + d) for r, d in ((4, 0.0004), (8, -0.0003), (16, 0.0001))]
    before += [_step(SNTRUP, r, 0.0284 + d) for r, d in ((4, 0.0003), (8, -0.0002), (16, 0.0))]
    after = [_step(CURVE, r, 0.0200 + d) for r, d in ((4, 0.0002), (8, -0.0001), (16, 0.0002))]  # a faster build
    (curve,) = across(before, after, (CURVE, MLKEM))  # ML-KEM in neither: left out
    assert curve.diff is not None and curve.diff.high is not None and curve.diff.high < 0
    assert curve.diff.value == pytest.approx(-0.006, abs=2e-4)
    assert welch([0.02], [0.03, 0.031]) is None
    same = welch([0.02, 0.02], [0.03, 0.03])
    assert same is not None and same.low == same.high == pytest.approx(0.01)
