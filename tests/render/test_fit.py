"""Tables fit the terminal: columns are shed in order, names fold at their separators, numbers are never cut."""

from __future__ import annotations

import io

from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from fakes import DISCOVERY, factorised_sweep, stored_run_record
from sshbench.analyse import policy
from sshbench.analyse.claims.fastest import pick
from sshbench.analyse.results import ranked
from sshbench.render.layout import Column, build, fit, fold_name
from sshbench.render.sweep import print_sweep
from sshbench.stats import summarize

NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-.@", min_size=1, max_size=60)


@given(NAME, st.integers(min_value=4, max_value=40))
def test_fold_name_keeps_every_character_and_the_width(name: str, width: int) -> None:
    folded = fold_name(name, width)
    assert folded.replace("\n", "") == name
    assert all(len(line) <= width for line in folded.splitlines())


def test_fold_prefers_the_vendor_suffix_then_dashes() -> None:
    assert fold_name("chacha20-poly1305@openssh.com", 20) == "chacha20-poly1305\n@openssh.com"
    assert fold_name("diffie-hellman-group-exchange-sha256", 24) == "diffie-hellman-group-\nexchange-sha256"


def _render(columns: list[Column], width: int) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    console.print(build(columns))
    return console.file.getvalue()  # type: ignore[attr-defined]


@given(
    st.lists(st.tuples(NAME, st.floats(min_value=0.1, max_value=99999)), min_size=1, max_size=8),
    st.integers(min_value=60, max_value=200),
)
def test_numbers_are_never_cut(rows: list[tuple[str, float]], width: int) -> None:
    columns = [
        Column("name", tuple(n for n, _ in rows), fold=True),
        Column("median MB/s", tuple(f"{v:.1f}" for _, v in rows), right=True),
        Column("IQR", tuple(f"{v:.1f}-{v * 2:.1f}" for _, v in rows), right=True, shed=2),
        Column("", tuple("█" * 16 for _ in rows), shed=1),
    ]
    shown, shed = fit(columns, width)
    text = _render(shown, width)
    assert all(f"{v:.1f}" in text for _, v in rows) and "…" not in text
    assert [c.shed for c in shed] in ([], [1], [1, 2])  # the bar goes first, then the IQR


def test_sweep_tables_fit_80_columns_with_every_median() -> None:
    console = Console(file=io.StringIO(), width=80, color_system=None)
    print_sweep(console, stored_run_record(), factorised_sweep())
    text = console.file.getvalue()  # type: ignore[attr-defined]
    table_lines = [line for line in text.splitlines() if "─" in line]
    assert table_lines and all(len(line) <= 80 for line in table_lines) and "…" not in text
    for st_ in factorised_sweep():
        median = summarize(st_.values()).median
        assert st_.scenario.metric.format(median) in text


def test_no_winner_from_fewer_than_three_samples() -> None:
    few = [
        type(s)(s.id, s.position, s.scenario, s.failure, s.samples[:3]) for s in factorised_sweep()
    ]  # a warm-up and 2 measured samples each
    rows = ranked(few, 0.05)
    assert all(r.rank == 0 for group in rows.values() for r in group)
    assert pick(rows["download"], policy.builtin("modern"), DISCOVERY.default()) is None


def test_the_pick_is_the_fastest_row_the_policy_allows() -> None:
    rows = ranked(factorised_sweep(), 0.05)["latency"]
    assert rows[0].scenario.kex == "ecdh-sha2-nistp256"  # fastest, but ssh-audit fails the NIST curves
    chosen = pick(rows, policy.builtin("modern"), None)
    assert chosen is not None and chosen.chosen.scenario.kex == "curve25519-sha256"
    anything = pick(rows, policy.builtin("any"), None)
    assert anything is not None and anything.outright and anything.chosen is rows[0]


def test_at_80_columns_every_row_keeps_its_verdict_against_the_leader() -> None:
    """Issue 34, item 11: at 80 columns the `vs leader` column (the claim itself) was shed with the bar."""
    from fakes import transfer
    from sshbench.analyse.results import build_rows
    from sshbench.model import Direction
    from sshbench.render.console import result_columns

    down = Direction.DOWN
    stored = [
        transfer("aes256-gcm@openssh.com", None, 1000.0, down),
        transfer("chacha20-poly1305@openssh.com", None, 600.0, down),
        transfer("aes128-ctr", "hmac-sha2-256-etm@openssh.com", 500.0, down),
    ]
    rows = build_rows(stored, 0.05)
    shown, _ = fit(result_columns(rows), 80)
    text = _render(shown, 80)
    assert text.count("slower") == 2 and text.count("leader") >= 2  # the title and the leader's own verdict


def test_servers_side_by_side_list_their_transfers_in_rank_order() -> None:
    """Issue 34, item 11: `servers` grouped rows by server, so ranks read 1, 3, 2, 4 down the table."""
    import dataclasses

    from fakes import transfer
    from sshbench.analyse.results import build_rows
    from sshbench.model import Direction
    from sshbench.render.servers import throughput_columns

    def at(server: str, cipher: str, rate: float) -> object:
        st_ = transfer(cipher, None, rate, Direction.DOWN)
        return dataclasses.replace(st_, scenario=dataclasses.replace(st_.scenario, server=server))

    stored = [
        at("openssh", "aes128-gcm@openssh.com", 1000.0),
        at("openssh", "chacha20-poly1305@openssh.com", 600.0),
        at("dropbear", "aes128-gcm@openssh.com", 800.0),
        at("dropbear", "chacha20-poly1305@openssh.com", 400.0),
    ]
    rows = build_rows(stored, 0.05)  # type: ignore[arg-type]
    ranks = throughput_columns(rows, {})[0].cells
    assert list(ranks) == ["1", "2", "3", "4"]
