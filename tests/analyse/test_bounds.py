"""What bounds a rate: the tighter of link and window when the rate comes near it, else a busy CPU, else nothing."""

from __future__ import annotations

import dataclasses

from fakes import CHACHA, GCM, stored_values, transfer
from sshbench.analyse import bounds
from sshbench.analyse.results import Costs, ranked
from sshbench.environment import EmbeddedInfo, Environment, LinkInfo
from sshbench.model import Direction, Kind, Scenario

WAN = LinkInfo(name="wan", rate_bits=100e6, rtt_s=0.02, measured_rtt_s=0.0204)
LONG_FAT = LinkInfo(name="long-fat", rate_bits=1e9, rtt_s=0.1, measured_rtt_s=0.1003)
OPENSSH = EmbeddedInfo("openssh", "OpenSSH", (), None, None, receive_window=2 * 2**20)


def _groups(rate: float, cipher: str = GCM) -> dict[str, list[bounds.Row]]:
    """Return ranked download and upload rows of one cipher around `rate` MB/s."""
    stored = [transfer(cipher, None, rate, Direction.DOWN), transfer(cipher, None, rate, Direction.UP)]
    return ranked(stored, 0.05)


def test_nothing_is_said_without_a_link_or_a_cpu_limit() -> None:
    assert bounds.limits(Environment()) is None


def test_a_rate_at_the_link_rate_is_link_bound() -> None:
    lim = bounds.limits(Environment(link=WAN, embedded=OPENSSH))
    assert lim is not None and lim.link == 12.5e6 and lim.rtt == 0.0204
    lines = bounds.summary_lines(_groups(12.4), lim)
    assert lines == [
        f"download: {GCM} link-bound at 12.5 MB/s: a faster cipher will not help",
        f"upload: {GCM} link-bound at 12.5 MB/s: a faster cipher will not help",
    ]


def test_a_long_fat_link_is_window_bound_and_a_small_server_window_bounds_uploads_only() -> None:
    lim = bounds.limits(Environment(link=LONG_FAT, embedded=OPENSSH))
    assert lim is not None
    down, up = (rows[0] for rows in _groups(20.5).values())
    for row in (down, up):
        bound = bounds.diagnose(row, lim)
        assert bound is not None and bound.kind == "window" and abs(bound.limit - 20.91) < 0.01  # type: ignore[operator]
    tiny = dataclasses.replace(lim, server_window=24576)  # Dropbear's default -W
    slow = _groups(0.24)
    assert bounds.diagnose(slow["upload"][0], tiny).kind == "window"  # type: ignore[union-attr]
    assert bounds.diagnose(slow["download"][0], tiny) is None  # the client's 2 MiB window allows far more


def test_a_busy_server_cpu_is_named_when_no_link_explains_the_rate() -> None:
    env = Environment(embedded=dataclasses.replace(OPENSSH, cpu_share=0.5))
    lim = bounds.limits(env)
    assert lim is not None and lim.server_share == 0.5
    row = _groups(100.0, CHACHA)["download"][0]
    busy = dataclasses.replace(row, costs=Costs(2.0, 5.2, None, None, None))  # 5.2 s/GiB at 100 MB/s: 0.48 CPU
    bound = bounds.diagnose(busy, lim)
    assert bound is not None and bound.kind == "server CPU" and 0.95 < bound.used < 0.99
    idle = dataclasses.replace(row, costs=Costs(2.0, 2.0, None, None, None))
    assert bounds.diagnose(idle, lim) is None
    assert bounds.describe(None) == "no known limit"
    assert bounds.summary_lines({"download": [idle]}, lim) == [f"download: {CHACHA}: below every known limit"]


def test_a_rate_near_the_slower_sides_openssl_speed_is_crypto_bound() -> None:
    ceilings = {GCM: {"client": 3000.0, "server": 24.8}, CHACHA: {"client": 3700.0, "server": 371.0}}
    env = Environment(embedded=dataclasses.replace(OPENSSH, cpu_share=0.1), crypto_ceilings=ceilings)
    lim = bounds.limits(env)
    assert lim is not None and lim.ceilings[GCM] == 24.8e6
    gcm = bounds.diagnose(_groups(20.0)["download"][0], lim)
    assert gcm is not None and gcm.kind == "crypto" and abs(gcm.used - 20 / 24.8) < 1e-9
    assert bounds.diagnose(_groups(39.0, CHACHA)["download"][0], lim) is None  # far below chacha20's ceiling
    only_emulated = bounds.limits(Environment(crypto_ceilings=ceilings))
    assert only_emulated is not None and only_emulated.server_share == 1.0


def test_copy_tools_are_diagnosed_and_a_plaintext_copy_has_no_channel_window() -> None:
    lim = bounds.limits(Environment(link=LONG_FAT, embedded=OPENSSH))
    assert lim is not None
    scp = Scenario(Kind.TOOL, tool="scp", cipher=GCM, direction=Direction.DOWN)
    tcp = Scenario(Kind.TOOL, tool="tcp", direction=Direction.DOWN)
    stored = [stored_values(sc, [20.5, 20.4, 20.6]) for sc in (scp, tcp)]
    groups = ranked(stored, 0.05)
    rows = {r.scenario.tool: r for r in groups["tool download"]}
    assert bounds.diagnose(rows["scp"], lim).kind == "window"  # type: ignore[union-attr]
    assert bounds.diagnose(rows["tcp"], lim) is None  # no SSH window: 20 MB/s is far below the 125 MB/s link
    lines = bounds.summary_lines(groups, lim)
    window = f"scp + {GCM} window-bound at 20.9 MB/s: {bounds.REMEDIES['window']}"
    assert lines == [f"tool download: {window}; tcp + no SSH: below every known limit"]
    busy = dataclasses.replace(rows["tcp"], costs=Costs(20.0, 20.0, None, None, None))  # 0.4 CPU per side at 20 MB/s
    assert bounds.diagnose(busy, dataclasses.replace(lim, client_share=0.3, server_share=0.3)) is None
