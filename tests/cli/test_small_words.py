"""Issue 34, item 11: smaller words that did not hold (each fails on the code before it)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from conftest import sshbench
from fakes import runs_db, stored_run_record
from sshbench import leases
from sshbench.errors import ExitCode, SshbenchError
from sshbench.runkinds import RunKind


def test_resume_last_names_the_last_run_not_run_minus_1(cli_env: dict[str, str], tmp_path: Path) -> None:
    db = runs_db(tmp_path / "runs.db")
    done = sshbench(cli_env, "run", "--resume", "last", "--rounds", "4", "--db", str(db))
    assert done.returncode == ExitCode.USAGE
    assert "--resume finishes the last run with the options" in done.stderr and "run -1" not in done.stderr


def test_tinyssh_is_made_for_a_normal_user_and_a_server_needing_root_still_exits_8(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """TinySSH needed root until issue 58 (ownedroot.py); a server that needs root is still a server that cannot
    start (README: 8), not a missing binary."""
    from sshbench.jobs.servers import _refusal_code
    from sshbench.targets.servers import registry

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert registry.make_server("local:tinyssh").owned_path  # type: ignore[attr-defined]
    why = "tinyssh: TinySSH needs root here (its authorized_keys path check fails inside a user namespace)"
    assert _refusal_code(True, [why]) is ExitCode.SERVER_START
    missing = ["dropbear: `dropbear` not found: apt-get install dropbear-bin"]
    assert _refusal_code(True, missing) is ExitCode.MISSING_BINARY


def test_report_last_skips_a_run_another_sshbench_is_still_writing(cli_env: dict[str, str], tmp_path: Path) -> None:
    db = runs_db(tmp_path / "runs.db")  # runs 1-4: make 4 a run this (live) process is writing
    with sqlite3.connect(db) as con:
        con.execute("UPDATE runs SET status='running', owner=? WHERE id=4", (leases.me().text,))
    done = sshbench(cli_env, "report", "--db", str(db), "-o", str(tmp_path / "r.html"))
    assert done.returncode == 0, done.stderr
    assert f"report of run 3: run 4 (process {os.getpid()}) is still being measured" in done.stderr


def test_a_cpu_with_aes_instructions_is_not_told_that_aes_instructions_would_help() -> None:
    from fakes import stored_values
    from sshbench.analyse.claims.remedies import remedy
    from sshbench.analyse.results import build_rows
    from sshbench.model import BoundKind, Direction, Kind, Scenario

    def row(cipher: str) -> Any:
        """Return one measured row of a cipher, alone in its group."""
        sc = Scenario(Kind.THROUGHPUT, cipher=cipher, direction=Direction.DOWN, server="dropbear")
        return build_rows([stored_values(sc, [500.0, 510.0, 490.0])], 0.05)[0]

    gcm, chacha = row("aes128-gcm@openssh.com"), row("chacha20-poly1305@openssh.com")
    with_aes = remedy(BoundKind.CLIENT_CPU, gcm, [gcm], "", aes=True)
    assert "AES instructions were in use already; only a faster CPU helps" in with_aes
    assert "without AES instructions" in remedy(BoundKind.CLIENT_CPU, gcm, [gcm], "", aes=False)
    # issue 54, item 6: ChaCha20 uses no AES instructions, and a server beside it did more on this CPU
    words = remedy(BoundKind.SERVER_CPU, chacha, [chacha], "", aes=True)
    assert "AES" in words and "in use already" not in words and "another SSH implementation helps" in words
    beside = "openssh did 1038 MB/s (chacha20-poly1305@openssh.com) beside it, on this CPU"
    said = remedy(BoundKind.SERVER_CPU, chacha, [chacha], "", aes=True, elsewhere=beside)
    assert said.endswith(f"on this server; {beside}: another implementation helps") and "only" not in said


def test_at_80_columns_the_progress_line_keeps_its_count_elapsed_and_eta(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from rich.console import Console

    from sshbench.cli import common

    buf = io.StringIO()
    console = Console(file=buf, width=80, force_terminal=True, color_system=None)
    monkeypatch.setattr(common, "err", lambda: console)
    progress = common.RichProgress()
    progress.bar.auto_refresh = False
    with progress:
        progress.update("remedies: aes128-gcm@openssh.com down one connection - round 4 (extra, up to 20)", 33, 120)
        progress.bar.refresh()
    last = [line for line in buf.getvalue().split("\r") if "33/120" in line]
    assert last and "ETA" in last[-1] and "0:00:0" in last[-1]


def test_a_cpu_per_gib_that_reads_as_more_than_one_cpu_is_explained_under_the_table() -> None:
    from sshbench.analyse.results import build_rows
    from sshbench.model import Direction, Kind, Scenario
    from sshbench.records import StoredScenario
    from sshbench.render.notes import row_notes
    from sshbench.samples import Sample

    sc = Scenario(Kind.THROUGHPUT, direction=Direction.UP)
    samples = tuple(
        Sample(
            sc,
            i,
            False,
            True,
            946.0 + i,
            0.376,
            nbytes=85983232,
            client_cpu=0.14,
            client_cpu_setup=0.061,
            phases=(("login", 0.19),),
        )
        for i in range(1, 7)
    )
    (row,) = build_rows([StoredScenario(1, 1, sc, None, samples)], 0.05)
    notes = " ".join(row_notes([row]))
    assert "CPU s/GiB counts each sample's login (its CPU, not its time), so at these rates it reads as more" in notes
    assert "your default up client 1.5 (0.42)" in notes


@pytest.mark.alone  # a 3 s budget refused from what a login takes here: another test's load changes it
def test_a_refused_plan_suggests_only_options_its_command_takes(cli_env: dict[str, str], tmp_path: Path) -> None:
    """Issue 34, item 10: `servers` and `clients` suggested --kex and --macs, which neither took (`clients` takes
    --kex since issue 37: it narrows the plan to connection times)."""
    db = str(tmp_path / "runs.db")
    done = sshbench(cli_env, "servers", "local:openssh", "--max-time", "3s", "--db", db)
    assert done.returncode == ExitCode.USAGE, done.stderr
    assert "narrow the plan (--cipher, --hostkey, --direction, --no-throughput)" in done.stderr
    done = sshbench(cli_env, "clients", "--client", "openssh", "--max-time", "3s", "--db", db)
    assert done.returncode == ExitCode.USAGE, done.stderr
    assert "narrow the plan (--cipher, --kex, --direction, --client, --server)" in done.stderr
    assert "--macs" not in done.stderr


def test_a_servers_run_names_the_faster_server_beside_a_cpu_bound_one() -> None:
    from fakes import stored_values
    from sshbench.analyse.claims.collect import _fastest_beside
    from sshbench.analyse.claims.limits import Limits
    from sshbench.analyse.results import build_rows
    from sshbench.model import Direction, Kind, Scenario

    def sc(server: str) -> Scenario:
        """Return the download row of ChaCha20 on one server."""
        return Scenario(
            Kind.THROUGHPUT, cipher="chacha20-poly1305@openssh.com", direction=Direction.DOWN, server=server
        )

    stored = [stored_values(sc("dropbear"), [500.0, 510.0, 490.0]), stored_values(sc("openssh"), [1038.0] * 3)]
    lim = Limits(peers=_fastest_beside("dropbear", stored))
    row = build_rows(stored[:1], 0.05)[0]
    assert lim.elsewhere(row) == "openssh did 1038 MB/s (chacha20-poly1305@openssh.com) beside it, on this CPU"
    assert Limits(peers=_fastest_beside("openssh", stored)).elsewhere(build_rows(stored[1:], 0.05)[0]) == ""


def test_bare_recommend_says_why_a_servers_runs_throughput_does_not_back_a_recommendation(tmp_path: Path) -> None:
    from fakes import ENVIRONMENT, _samples
    from sshbench.cli.recommend import _latest_with_throughput
    from sshbench.joboptions import JobOptions
    from sshbench.model import Direction, Kind, Scenario
    from sshbench.runkinds import RunKind
    from sshbench.storage.store import Store

    store = Store(tmp_path / "runs.db")
    run = store.create_run(JobOptions(command=RunKind.SERVERS), "local:openssh local:dropbear", ENVIRONMENT)
    sc = Scenario(Kind.THROUGHPUT, cipher="aes128-ctr", direction=Direction.DOWN, server="dropbear")
    for s in _samples(sc, 230.0):
        store.add_sample(store.add_scenarios(run, [sc])[sc.key], s)
    with pytest.raises(SshbenchError) as refused:
        _latest_with_throughput(store)
    assert refused.value.cause.startswith(
        f"no stored run of run, latency, throughput, sweep has throughput results (run {run} has"
    )


def test_what_each_change_did_names_the_cipher_of_each_of_two_downloads() -> None:
    from rich.console import Console

    from sshbench.analyse.claims.clients import Effect
    from sshbench.render.clients import print_effects

    effects = [Effect("paramiko", "download", None, c) for c in ("aes128-ctr", "chacha20-poly1305@openssh.com")]
    console = Console(record=True, width=200)
    print_effects(console, stored_run_record(RunKind.CLIENTS), effects)
    text = console.export_text()
    assert "download with aes128-ctr: too few rounds" in text
    assert "download with chacha20-poly1305@openssh.com: too few rounds" in text


def test_a_host_of_yours_without_server_cpu_says_so_under_the_tables() -> None:
    import dataclasses

    from fakes import stored_values
    from sshbench.analyse.results import Costs, build_rows
    from sshbench.model import Direction, Kind, Scenario
    from sshbench.render.console import _server_cpu_unread

    sc = Scenario(Kind.THROUGHPUT, cipher="aes128-ctr", direction=Direction.DOWN)
    (row,) = build_rows([stored_values(sc, [500.0, 510.0, 490.0])], 0.05)
    row = dataclasses.replace(row, costs=Costs(1.2, None, None, None, None))
    host = dataclasses.replace(stored_run_record(RunKind.THROUGHPUT), target="myhost")
    said = _server_cpu_unread(host, [row])
    assert said is not None and said.startswith("  server CPU: not reported by your host for these rows")
    assert _server_cpu_unread(stored_run_record(RunKind.THROUGHPUT), [row]) is None  # an embedded server: measured
