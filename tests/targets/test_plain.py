"""The plaintext baselines of `tools`: an rsync daemon that runs without root, socat with blocks large enough to be a
ceiling, and a baseline that fails is named, never silently dropped (issue 21, items 4 and 11)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes import GCM, stored_values
from sshbench.analyse.claims.baselines import baseline_claims, efficiency
from sshbench.analyse.results import ranked
from sshbench.model import Direction, Kind, Scenario
from sshbench.records import StoredScenario
from sshbench.samples import Sample
from sshbench.targets.helpers import plain


def test_a_normal_users_rsync_daemon_names_no_user(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """As a normal user the daemon failed with `@ERROR: setgroups failed`, from the uid/gid lines written for it."""
    monkeypatch.setattr(plain.os, "geteuid", lambda: 1000)
    text = plain._rsyncd_config(tmp_path / "srv", tmp_path).read_text()
    assert "uid" not in text and "gid" not in text and "path = " in text
    monkeypatch.setattr(plain.os, "geteuid", lambda: 0)
    assert "uid = " in plain._rsyncd_config(tmp_path / "srv", tmp_path).read_text()  # root would become nobody


def test_a_baseline_that_failed_is_named_with_its_reason() -> None:
    """The run ended complete and the "of rsync daemon" column just disappeared."""
    rsyncd = Scenario(Kind.TOOL, tool="rsyncd", direction=Direction.DOWN)
    failed = StoredScenario(
        0,
        0,
        rsyncd,
        "rsync exited with status 5: @ERROR: setgroups failed",
        (Sample(rsyncd, 0, True, False, None, 0.1, error="@ERROR: setgroups failed"),),
    )
    rsync = stored_values(Scenario(Kind.TOOL, tool="rsync", cipher=GCM, direction=Direction.DOWN), [300.0] * 4)
    rows = ranked([rsync, failed], 0.05)["tool download"]
    claims = baseline_claims("download", rows, efficiency(rows, {}))
    assert [c.text for c in claims] == [
        "download: the rsync daemon baseline failed, so no share of it is shown: rsync exited with status 5: "
        "@ERROR: setgroups failed"
    ]


def test_item_4_a_baseline_below_the_ssh_copy_is_a_failed_baseline_not_a_share_over_100() -> None:
    """`tools` on loopback printed "131 % of plain TCP" and "142 % of rsync daemon" without a word."""
    stored = [
        stored_values(Scenario(Kind.TOOL, tool=t, cipher=c, direction=Direction.UP), [v] * 4)
        for t, c, v in (("scp", GCM, 172.0), ("rsync", GCM, 116.0), ("tcp", None, 131.0), ("rsyncd", None, 86.0))
    ]
    rows = ranked(stored, 0.05)["tool upload"]
    items = efficiency(rows, {GCM: {"client": 3000.0, "server": 2900.0}})
    by_tool = {e.row.scenario.tool: e for e in items}
    assert by_tool["scp"].of_tcp is None and by_tool["scp"].failed == ("tcp",)
    assert by_tool["rsync"].of_rsyncd is None and by_tool["rsync"].failed == ("rsyncd",)
    assert by_tool["rsync"].of_tcp == pytest.approx(116 / 131)
    assert all(s is None or s <= 1 for e in items for s in (e.of_tcp, e.of_rsyncd, e.of_crypto))
    texts = [c.text for c in baseline_claims("upload", rows, items)]
    assert any(
        "failed baseline: plain TCP (socat) at 131 MB/s is below scp + aes128-gcm@openssh.com at 172" in t
        for t in texts
    )
    assert any(
        "failed baseline: the rsync daemon at 86 MB/s is below rsync + aes128-gcm@openssh.com at 116" in t
        for t in texts
    )


def test_socat_moves_large_blocks() -> None:
    """socat's default 8 KiB blocks held the plain TCP "ceiling" below scp over SSH (docs/BENCHMARKS.md)."""
    assert plain.BLOCK >= 128 * 1024
