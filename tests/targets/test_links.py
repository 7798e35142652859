"""Link specs: presets, RATE,RTT[,LOSS], errors that name the accepted forms, and the numbers derived from them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sshbench.errors import ExitCode, SshbenchError
from sshbench.targets.link import linkcheck, links
from sshbench.targets.link.netns import mtu_for


def test_presets_and_explicit_links_parse() -> None:
    assert links.parse("wan") == links.LinkSpec(rate=100e6, rtt=0.020, loss=0.0, name="wan")
    lte = links.parse("LTE")
    assert (lte.rate, lte.rtt, lte.loss) == (30e6, 0.050, 0.001)
    odd = links.parse("50mbit,80ms,0.1%")
    assert (odd.rate, odd.rtt, odd.loss, odd.name) == (50e6, 0.080, 0.001, "50mbit,80ms,0.1%")
    assert links.parse("1gbit,300us").rtt == pytest.approx(0.0003)
    assert links.parse("long-fat").bdp == pytest.approx(12.5e6)
    assert links.parse("wan").describe() == "100 Mbit/s, 20 ms RTT (wan)"
    assert links.parse("50mbit,80ms,0.1%").describe() == "50 Mbit/s, 80 ms RTT, 0.1 % loss"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("fast", "expected a preset or RATE,RTT[,LOSS]"),
        ("100mb,20ms", "rate '100mb' is not like 100mbit"),
        ("100mbit,20", "round-trip time '20' is not like 20ms"),
        ("100mbit,20ms,1", "loss '1' is not a percentage"),
        ("100kbit,20ms", "is outside 1 Mbit/s..2 Gbit/s"),
        ("100mbit,5s", "above 2e+03 ms"),
        ("100mbit,20ms,50%", "loss 50 % is above 10 %"),
    ],
)
def test_bad_links_are_refused_naming_the_accepted_forms(text: str, why: str) -> None:
    with pytest.raises(SshbenchError) as err:
        links.parse(text)
    assert why in err.value.cause and err.value.code is ExitCode.USAGE
    assert "100mbit,20ms" in err.value.fix and "gbe" in err.value.fix


@given(st.integers(1, 2000), st.integers(0, 2000), st.integers(0, 100))
def test_any_valid_rate_rtt_and_loss_round_trips(mbit: int, ms: int, tenths: int) -> None:
    spec = links.parse(f"{mbit}mbit,{ms}ms,{tenths / 10}%")
    assert (
        spec.rate == mbit * 1e6 and spec.rtt == pytest.approx(ms / 1000) and spec.loss == pytest.approx(tenths / 1000)
    )
    assert links.sample_seconds(spec, 0.2) >= 1.0 + 20 * spec.rtt - 1e-9
    assert 1500 <= mtu_for(spec.rate) <= 9000


def test_the_link_check_connects_fewer_times_only_where_one_connect_is_long() -> None:
    assert linkcheck.connects_for(0.0005) == linkcheck.CONNECTS  # gbe: sub-ms jitter needs every connect
    assert linkcheck.connects_for(0.008) == linkcheck.CONNECTS
    assert linkcheck.connects_for(0.020) == 12  # ~0.25 s of connects
    assert linkcheck.connects_for(0.100) == linkcheck.FEWEST_CONNECTS
    assert linkcheck.connects_for(0.0) == linkcheck.CONNECTS  # no delay asked: a loopback-fast link
