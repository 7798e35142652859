"""A `clients` run's picks per job and the code lines they stand for (pure; the drivers' constants checked)."""

from __future__ import annotations

import dataclasses

from rich.console import Console

from fakes import ENVIRONMENT, stored_run_record, stored_values
from sshbench.analyse.claims.clients import languages_of, libraries_of, picks
from sshbench.analyse.results import ranked
from sshbench.clients.drivers import asyncssh_driver, paramiko_driver
from sshbench.clienttypes import TUNED_PACKET, TUNED_WINDOW, client_type
from sshbench.model import IN_PROCESS, Direction, Kind, Scenario
from sshbench.render.clients import code_lines, print_picks
from sshbench.runkinds import RunKind

GCM = "aes128-gcm@openssh.com"


def down(client: str, mode: str | None = None, tool: str | None = None) -> Scenario:
    """Return a download (or SFTP get) row of a client."""
    kind = Kind.TOOL if tool else Kind.THROUGHPUT
    return Scenario(kind, client=client, mode=mode, tool=tool, cipher=GCM, direction=Direction.DOWN)


def _sftp_tuned(client: str) -> str:
    """Return the arguments a client's tuned setting adds to SFTP calls, from its row."""
    code = client_type(client).code
    assert code is not None
    return code.sftp_tuned


def test_the_code_lines_name_the_values_the_drivers_ran_with() -> None:
    assert eval(TUNED_WINDOW) == paramiko_driver.TUNED_WINDOW == asyncssh_driver.TUNED_WINDOW
    assert eval(TUNED_PACKET) == paramiko_driver.TUNED_PACKET == asyncssh_driver.TUNED_PACKET
    assert _sftp_tuned("asyncssh") == f", max_requests={asyncssh_driver.TUNED_REQUESTS}"
    lines = code_lines(down("asyncssh", "tuned", "sftp"), "tool download")
    assert lines[0] == f"conn = await asyncssh.connect(HOST, username=USER, window={TUNED_WINDOW}, max_pktsize=2**18)"
    assert lines[1].endswith("await sftp.get(REMOTE, LOCAL, sparse=False, max_requests=128)")
    assert "pinned to aes128-gcm@openssh.com" in lines[2]
    assert code_lines(down("paramiko"), "download")[0].endswith("client.connect(HOST, username=USER)")


def test_the_pick_is_the_fastest_library_told_against_the_next_and_openssh() -> None:
    rates = {
        down("openssh"): 600.0,
        down("paramiko"): 300.0,
        down("paramiko", "tuned"): 360.0,
        down("asyncssh"): 200.0,
        down("dropbear"): 700.0,
    }
    stored = [stored_values(sc, [v * (1 + i / 100) for i in range(6)]) for sc, v in rates.items()]
    clients = {
        "paramiko": {"kind": "library"},
        "asyncssh": {"kind": "library"},
        "openssh": {"kind": "binary"},
        "dropbear": {"kind": "binary"},
        "libssh": {"start_s": "0.1"},
    }
    assert libraries_of(clients) == ["paramiko", "asyncssh", "libssh"]
    (pick,) = picks(ranked(stored, 0.05, 0.05), libraries_of(clients), 0.05)
    claim = pick.claim().text
    assert claim.startswith(
        "reading a command's output (exec channel, server -> client): paramiko (64 MiB window) "
        "with "
        "aes128-gcm@openssh.com, 369 MB/s; its default settings: +20 % vs paramiko with "
        "aes128-gcm@openssh.com (faster; 95 % interval +20 % .. +20 %, paired per round); "
        "next library: +80 % vs asyncssh with "
        "aes128-gcm@openssh.com (faster; 95 % interval +80 % .. +80 %, paired per round)"
    )
    assert claim.endswith(
        "; OpenSSH: -40 % vs openssh with aes128-gcm@openssh.com (slower; 95 % interval -40 % .. "
        "-40 %, paired per round)"
    )


def test_no_pick_where_no_library_was_ranked() -> None:
    stored = [stored_values(Scenario(Kind.LATENCY, client="paramiko", mode=IN_PROCESS), [0.1, 0.1])]
    assert picks(ranked(stored, 0.05, 0.05), ["paramiko"], 0.05) == []


def test_each_language_gets_its_own_pick_against_its_own_libraries() -> None:
    clients = {
        "paramiko": {"kind": "library"},
        "asyncssh": {"kind": "library", "language": "Python"},
        "gossh": {"kind": "library", "language": "Go"},
        "russh": {"kind": "library", "language": "Rust"},
        "openssh": {"kind": "binary"},
    }
    assert languages_of(clients) == {"Python": ["paramiko", "asyncssh"], "Go": ["gossh"], "Rust": ["russh"]}
    rates = {down("paramiko"): 300.0, down("asyncssh"): 200.0, down("gossh"): 700.0, down("openssh"): 600.0}
    stored = [stored_values(sc, [v * (1 + i / 100) for i in range(6)]) for sc, v in rates.items()]
    groups = ranked(stored, 0.05, 0.05)
    (python,) = picks(groups, languages_of(clients)["Python"], 0.05)
    assert python.row.scenario.client == "paramiko"  # Go's faster row is not Python's pick, nor its "next library"
    assert [role for role, _ in python.against] == ["next library", "OpenSSH"]
    assert "asyncssh" in python.claim().text and "gossh" not in python.claim().text
    (go,) = picks(groups, languages_of(clients)["Go"], 0.05)
    assert go.row.scenario.client == "gossh" and [role for role, _ in go.against] == ["OpenSSH"]
    assert picks(groups, languages_of(clients)["Rust"], 0.05) == []


def test_a_language_with_nothing_to_recommend_says_why() -> None:
    clients = {
        "paramiko": {"kind": "library", "language": "Python", "version": "paramiko 5.1.0"},
        "russh": {"kind": "library", "language": "Rust", "skipped": "no Rust toolchain"},
    }
    run = dataclasses.replace(
        stored_run_record(RunKind.CLIENTS), environment=dataclasses.replace(ENVIRONMENT, clients=clients)
    )
    console = Console(record=True, width=200)
    print_picks(console, run, [], "Rust")
    print_picks(console, run, [], "Python")
    print_picks(console, run, [], "Go")
    text = console.export_text()
    assert "Nothing to recommend for Rust: no Rust library ran here (russh: no Rust toolchain)." in text
    assert "Nothing to recommend for Python: no Python library row was ranked (at least 3 samples)." in text
    assert "Nothing to recommend for Go: no library was in this run." in text


def test_a_second_setting_that_hurts_is_named_for_what_it_is_with_its_effect_and_why() -> None:
    """Issue 34, item 9: "paramiko tuned" downloaded at a fifth of its defaults and nothing said so."""
    import io

    from rich.console import Console

    from sshbench.analyse.claims.clients import setting_effects
    from sshbench.environment import Environment
    from sshbench.joboptions import JobOptions
    from sshbench.records import RunRecord
    from sshbench.render.clients import print_effects
    from sshbench.runkinds import RunKind
    from sshbench.samples import RunStatus

    stored = [
        stored_values(down("paramiko"), [578.0, 570.0, 590.0, 580.0, 575.0, 585.0]),
        stored_values(down("paramiko", "tuned"), [111.0, 40.0, 120.0, 90.0, 100.0, 38.0]),
    ]
    effects = setting_effects(ranked(stored, 0.05, 0.05), 0.05)
    assert [(e.client, e.group, e.hurts) for e in effects] == [("paramiko", "download", True)]
    env = Environment(clients={"paramiko": {"hurts": "its receive buffer copies the backlog on each read"}})
    run = RunRecord(1, "", "", RunStatus.COMPLETE, RunKind.CLIENTS, "local", JobOptions(command=RunKind.CLIENTS), env)
    buf = io.StringIO()
    print_effects(Console(file=buf, width=300), run, effects)
    said = buf.getvalue()
    assert "paramiko (64 MiB window): download -8" in said and "slower: it hurts here" in said
    assert "why: its receive buffer copies the backlog on each read" in said and "tuned" not in said
