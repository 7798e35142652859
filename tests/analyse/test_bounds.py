"""What bounds a rate: the tighter of link and window when the rate comes near it, else a busy CPU, else unknown;
a limit below the rate it should cap is a broken limit, never the bound; a remedy never names the row's own choice."""

from __future__ import annotations

import dataclasses

from fakes import CHACHA, CTR, GCM, stored_values, transfer
from sshbench.analyse.claims import bounds
from sshbench.analyse.claims.core import ClaimKind
from sshbench.analyse.claims.remedies import remedy
from sshbench.analyse.results import Costs, Row, ranked
from sshbench.environment import EmbeddedInfo, Environment, LinkInfo
from sshbench.model import BoundKind, Direction, Kind, Scenario
from sshbench.ratios import Standing

WAN = LinkInfo(name="wan", rate_bits=100e6, rtt_s=0.02, measured_rtt_s=0.0204)
LONG_FAT = LinkInfo(name="long-fat", rate_bits=1e9, rtt_s=0.1, measured_rtt_s=0.1003)
OPENSSH = EmbeddedInfo("openssh", "OpenSSH", (), None, None, receive_window=2 * 2**20)
AES256_CBC = "aes256-cbc"


def _groups(rate: float, cipher: str = GCM) -> dict[str, list[Row]]:
    """Return ranked download and upload rows of one cipher around `rate` MB/s."""
    stored = [transfer(cipher, None, rate, Direction.DOWN), transfer(cipher, None, rate, Direction.UP)]
    return ranked(stored, 0.05)


def _kind(row: Row, lim: bounds.Limits) -> BoundKind:
    found = bounds.diagnose(row, lim)
    assert found is not None
    return found.bound.kind


def test_nothing_is_said_without_a_link_or_a_cpu_limit() -> None:
    assert bounds.limits(Environment()) is None


def test_a_rate_at_the_link_rate_is_network_bound() -> None:
    lim = bounds.limits(Environment(link=WAN, embedded=OPENSSH))
    assert lim is not None and lim.link == 12.5e6 and lim.rtt == 0.0204
    claims = bounds.bound_claims(_groups(12.4), lim)
    assert [c.text for c in claims] == [
        f"download: {GCM}: network-bound at 12.5 MB/s: the path is the limit: a faster cipher will not help",
        f"upload: {GCM}: network-bound at 12.5 MB/s: the path is the limit: a faster cipher will not help",
    ]
    bound = claims[0].evidence["rows"][0]["bound"]
    assert bound["kind"] == "network" and bound["limit"] == 12.5 and bound["evidence"]["link_MBps"] == 12.5


def test_a_long_fat_link_is_ssh_window_bound_and_a_small_server_window_bounds_uploads_only() -> None:
    lim = bounds.limits(Environment(link=LONG_FAT, embedded=OPENSSH))
    assert lim is not None
    down, up = (rows[0] for rows in _groups(20.5).values())
    for row in (down, up):
        found = bounds.diagnose(row, lim)
        assert found is not None and found.bound.kind is BoundKind.SSH_WINDOW
        assert abs((found.bound.limit or 0) - 20.91) < 0.01 and found.bound.evidence["rtt_ms"] == 100.3
    tiny = dataclasses.replace(lim, server_window=24576, server_product="Dropbear")  # Dropbear's default -W
    slow = _groups(0.24)
    found = bounds.diagnose(slow["upload"][0], tiny)
    assert found is not None and found.bound.kind is BoundKind.SSH_WINDOW and "-W for Dropbear" in found.bound.remedy
    assert _kind(slow["download"][0], tiny) is BoundKind.UNKNOWN  # the client's 2 MiB window allows far more


def test_a_busy_server_cpu_is_named_when_no_link_explains_the_rate() -> None:
    env = Environment(embedded=dataclasses.replace(OPENSSH, cpu_share=0.5))
    lim = bounds.limits(env)
    assert lim is not None and lim.server_share == 0.5
    row = _groups(100.0, CHACHA)["download"][0]
    busy = dataclasses.replace(row, costs=Costs(2.0, 5.2, None, None, None))  # 5.2 s/GiB at 100 MB/s: 0.48 CPU
    found = bounds.diagnose(busy, lim)
    assert found is not None and found.bound.kind is BoundKind.SERVER_CPU and 0.95 < (found.bound.used or 0) < 0.99
    assert found.bound.unit == "CPU" and found.bound.limit == 0.5
    idle = dataclasses.replace(row, costs=Costs(2.0, 2.0, None, None, None))
    assert _kind(idle, lim) is BoundKind.UNKNOWN
    assert [c.text for c in bounds.bound_claims({"download": [idle]}, lim)] == [
        f"download: {CHACHA}: below every known limit"
    ]


def test_a_rate_near_the_slower_sides_openssl_speed_is_crypto_bound() -> None:
    ceilings = {GCM: {"client": 3000.0, "server": 24.8}, CHACHA: {"client": 3700.0, "server": 371.0}}
    env = Environment(embedded=dataclasses.replace(OPENSSH, cpu_share=0.1), crypto_ceilings=ceilings)
    lim = bounds.limits(env)
    assert lim is not None and lim.ceilings[GCM] == 24.8e6
    gcm = bounds.diagnose(_groups(20.0)["download"][0], lim)
    assert gcm is not None and gcm.bound.kind is BoundKind.CRYPTO and abs((gcm.bound.used or 0) - 20 / 24.8) < 1e-9
    assert _kind(_groups(39.0, CHACHA)["download"][0], lim) is BoundKind.UNKNOWN  # far below chacha20's ceiling
    only_emulated = bounds.limits(Environment(crypto_ceilings=ceilings))
    assert only_emulated is not None and only_emulated.server_share == 1.0


def test_item_3_a_ceiling_below_the_rate_is_broken_not_a_bound() -> None:
    """Issue 21, item 3: "aes256-cbc + umac-64-etm crypto-bound at 128 MB/s" while its median was 170 MB/s."""
    ceilings = {AES256_CBC: {"client": 131.0, "server": 128.0}}
    lim = bounds.limits(Environment(embedded=OPENSSH, crypto_ceilings=ceilings))
    assert lim is not None
    stored = [transfer(AES256_CBC, "umac-64-etm@openssh.com", 170.0, Direction.DOWN)]
    groups = ranked(stored, 0.05)
    found = bounds.diagnose(groups["download"][0], lim, groups["download"])
    assert found is not None and found.bound.kind is BoundKind.UNKNOWN
    assert [c.kind for c in found.broken] == [ClaimKind.CEILING]
    assert "128 MB/s is below its measured 170 MB/s" in found.broken[0].text
    claims = bounds.bound_claims(groups, lim)
    assert not any("crypto-bound" in c.text for c in claims)
    assert any(c.kind is ClaimKind.CEILING for c in claims)


def test_item_3_a_remedy_never_names_the_rows_own_cipher() -> None:
    """Issue 21, item 3: the chacha20-poly1305 row was told to switch to chacha20-poly1305."""
    env = Environment(embedded=dataclasses.replace(OPENSSH, cpu_share=0.5))
    lim = bounds.limits(env)
    assert lim is not None
    stored = [
        transfer(CHACHA, None, 450.0, Direction.DOWN),
        transfer(CTR, "umac-64-etm@openssh.com", 250.0, Direction.DOWN),
    ]
    rows = [dataclasses.replace(r, costs=Costs(2.0, 2.0, None, None, None)) for r in ranked(stored, 0.05)["download"]]
    for row in rows:
        found = bounds.diagnose(row, lim, rows)
        assert found is not None and found.bound.kind is BoundKind.SERVER_CPU
        own = row.scenario.cipher or ""
        assert own not in found.bound.remedy
    leader = bounds.diagnose(rows[0], lim, rows)
    assert leader is not None and "no cipher measured here is significantly faster" in leader.bound.remedy
    slower = bounds.diagnose(rows[1], lim, rows)
    assert slower is not None and CHACHA in slower.bound.remedy
    unsure = bounds.diagnose(dataclasses.replace(rows[1], standing=Standing.INCONCLUSIVE), lim, rows)
    assert unsure is not None and "may help (not told apart from this one yet)" in unsure.bound.remedy
    assert CHACHA in unsure.bound.remedy and "only a faster CPU" not in unsure.bound.remedy


def test_copy_tools_are_diagnosed_and_a_plaintext_copy_has_no_channel_window() -> None:
    lim = bounds.limits(Environment(link=LONG_FAT, embedded=OPENSSH))
    assert lim is not None
    scp = Scenario(Kind.TOOL, tool="scp", cipher=GCM, direction=Direction.DOWN)
    tcp = Scenario(Kind.TOOL, tool="tcp", direction=Direction.DOWN)
    stored = [stored_values(sc, [20.5, 20.4, 20.6]) for sc in (scp, tcp)]
    groups = ranked(stored, 0.05)
    rows = {r.scenario.tool: r for r in groups["tool download"]}
    assert _kind(rows["scp"], lim) is BoundKind.SSH_WINDOW
    assert _kind(rows["tcp"], lim) is BoundKind.UNKNOWN  # no SSH window: 20 MB/s is far below the 125 MB/s link
    texts = [c.text for c in bounds.bound_claims(groups, lim)]
    window = remedy(BoundKind.SSH_WINDOW, rows["scp"], [], lim.server_product)
    assert texts == [
        f"tool download: scp + {GCM}: ssh-window-bound at 20.9 MB/s: {window}; tcp + no SSH: below every known limit"
    ]
    busy = dataclasses.replace(rows["tcp"], costs=Costs(20.0, 20.0, None, None, None))  # 0.4 CPU per side at 20 MB/s
    assert _kind(busy, dataclasses.replace(lim, client_share=0.3, server_share=0.3)) is BoundKind.UNKNOWN


def test_a_sides_cpu_is_judged_while_the_payload_moved_not_with_its_login() -> None:
    lim = bounds.limits(Environment(embedded=OPENSSH), evidence=True)
    assert lim is not None
    row = _groups(500.0, CHACHA)["download"][0]
    # per GiB with the login's CPU in it: 2.4 s/GiB at 500 MB/s reads as 1.12 CPUs, more than one CPU can give
    inflated = Costs(2.4, 1.0, None, None, None)
    assert _kind(dataclasses.replace(row, costs=inflated), lim) is BoundKind.CLIENT_CPU
    measured = dataclasses.replace(inflated, client_busy=0.62, server_busy=0.4)  # CPU after the login, over its time
    assert _kind(dataclasses.replace(row, costs=measured), lim) is BoundKind.UNKNOWN
    found = bounds.diagnose(dataclasses.replace(row, costs=dataclasses.replace(measured, client_busy=0.97)), lim)
    assert found is not None and found.bound.kind is BoundKind.CLIENT_CPU and found.bound.used == 0.97


def test_a_cpu_bound_past_its_share_says_the_logins_cpu_is_counted_not_more_than_all_of_it() -> None:
    """Issue 34: "server-cpu-bound (164% of its CPU share)" on a host of the user's, where CPU per GiB counts logins."""
    from sshbench.analyse.claims.bounds import Bound, describe
    from sshbench.model import BoundKind

    said = describe(Bound(BoundKind.SERVER_CPU, 1.0, "CPU", 1.64, {}, "a faster cipher"))
    assert said.startswith("server-cpu-bound (all of its CPU share: 164% of it counting each sample's login")
    assert describe(Bound(BoundKind.SERVER_CPU, 1.0, "CPU", 0.97, {}, "x")) == "server-cpu-bound (97% of its CPU share)"
