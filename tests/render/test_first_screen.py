"""Issue 57: the brief screen a terminal gets and the complete one (`--details`, piped output), on a fake raced run:
rows racing stopped are marked, not warned about; "!" only where a reader must act; sentences wrapped with a
hanging indent; nothing the brief screen says is missing from the complete one."""

from __future__ import annotations

import dataclasses
import io
import os
import re
from pathlib import Path

import pytest
from rich.console import Console

from fakes import CHACHA, CTR, DISCOVERY, ENVIRONMENT, GCM, FakeSampler, ListProgress, fake_stage, runs_db
from sshbench import jobs
from sshbench.analyse.claims.collect import run_recommendation
from sshbench.analyse.results import Row, ranked
from sshbench.discovery import Negotiated
from sshbench.joboptions import JobOptions, Plan
from sshbench.jobs.recording import Job
from sshbench.model import Direction, Kind, Scenario
from sshbench.ratios import Standing
from sshbench.render import screen
from sshbench.render.answer import answer_lines
from sshbench.render.console import listed_rows, policy_of
from sshbench.render.notes import row_notes
from sshbench.render.show import print_run
from sshbench.runkinds import RunKind
from sshbench.stats import summarize
from sshbench.storage.store import Store

GOLDEN = Path(__file__).parent.parent / "golden"
PLAN = Plan(warmup=1, min_rounds=3, max_rounds=10, racing=True)
CIPHERS = {GCM: 1000.0, "aes256-gcm@openssh.com": 990.0, "aes192-ctr": 930.0, CHACHA: 600.0, CTR: 500.0}
KEX = {"curve25519-sha256": 0.130, "ecdh-sha2-nistp256": 0.127, "diffie-hellman-group16-sha512": 0.150}
WIGGLE = (1.0, 0.98, 1.02, 0.99, 1.01, 1.0, 0.97, 1.03, 0.985, 1.015, 1.0)
NEGOTIATED = "Negotiated by the client's default profile (kex / host key / cipher + MAC):"  # the brief screen's title
WILD = (1.0, 0.8, 1.2, 0.85, 1.15, 0.9, 1.1, 0.82, 1.18, 0.88, 1.12)  # aes192-ctr: not told apart, a wide interval


def value(sc: Scenario, rnd: int) -> float:
    """Return a fake measurement: known spreads, so ranks, racing and warnings are exact."""
    if sc.kind is Kind.LATENCY:
        return KEX[str(sc.kex)] * WIGGLE[rnd]
    wiggle = WILD if sc.cipher == "aes192-ctr" else WIGGLE
    return CIPHERS[str(sc.cipher)] * wiggle[rnd]


def _run(store: Store) -> int:
    """Measure the fake run through the scheduler, racing on, as the quick start's `run` does."""
    latency = [Scenario(Kind.LATENCY, kex=k, hostkey="ssh-ed25519") for k in KEX]
    transfers = [Scenario(Kind.THROUGHPUT, cipher=c, direction=Direction.DOWN) for c in CIPHERS]
    job = Job(store, JobOptions(command=RunKind.RUN, plan=PLAN), ListProgress())
    rec = job.record("local", ENVIRONMENT)
    store.set_discovery(rec.run_id, DISCOVERY)
    with rec.status():
        rec.register([*latency, *transfers])
        rec.schedule(latency, FakeSampler(value), job.progress, "latency")
        rec.schedule(transfers, FakeSampler(value), job.progress, "throughput")
    return rec.run_id


def _screen(tmp_path: Path, width: int, brief: bool) -> str:
    """Return the screen `show` prints of the fake run at `width` columns."""
    store = Store(tmp_path / f"runs-{width}-{brief}.db")  # run 1 in each
    run_id = _run(store)
    console = Console(file=io.StringIO(), width=width, color_system=None, force_terminal=False)
    with screen.briefly(brief):
        print_run(console, store.load(run_id), Path("runs.db"))
    return console.file.getvalue()  # type: ignore[attr-defined]


def _sentences(text: str) -> set[str]:
    """Return the screen's sentences outside its tables, each unwrapped onto one line."""
    out: list[str] = []
    skipping = False
    for line in text.splitlines():
        if line.startswith("    ") and (skipping or out):
            if not skipping:
                out[-1] += " " + line.strip()
            continue
        skipping = "─" in line or bool(re.match(r"^\s*(=?\d+|-|#)\s{2}", line))
        header = "95% CI" in line or bool(re.match(r"^\s+median\s", line))  # a table's titles
        skipping = skipping or header or "hidden at this" in line  # laid out anew at each width
        if not skipping:
            out.append(line.strip())
    return {s for s in out if s}


@pytest.mark.parametrize("width", [80, 200])
def test_the_brief_screen_is_exact_and_every_line_fits(tmp_path: Path, width: int) -> None:
    text = _screen(tmp_path, width, brief=True)
    golden = GOLDEN / f"first-screen-{width}.txt"
    if os.environ.get("SSHBENCH_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text()
    assert all(len(line) <= width for line in text.splitlines())


def test_rows_racing_stopped_are_marked_and_only_a_warning_to_act_on_is_marked_with_a_bang(tmp_path: Path) -> None:
    text = _screen(tmp_path, 200, brief=True)
    stopped = [line for line in text.splitlines() if re.search(r"\d ~ ", line)]
    assert [CHACHA in line for line in stopped] == [True]  # listed, marked: the client's default cipher
    assert "~ stopped early by racing, slower: 1 not listed, 495 MB/s (--details)" in text  # counted in one line
    assert f"{CTR} " not in text and f"{CTR} " in _screen(tmp_path, 200, brief=False)
    assert "!" not in "".join(line for line in text.splitlines() if "aes192-ctr" in line)
    assert "other row(s) with a wide interval or few samples: --details names them" in text
    complete = _screen(tmp_path, 200, brief=False)
    assert "! aes192-ctr down: 95 % CI is" in complete  # said whole on the complete screen


def test_the_complete_screen_says_everything_the_brief_one_does(tmp_path: Path) -> None:
    for width in (80, 200):
        text = _screen(tmp_path, width, True)
        said, answer = text.split("The answer (")
        brief, complete = _sentences(said), _sentences(_screen(tmp_path, width, False))
        whole = _screen(tmp_path, width, False)
        shorter = {s for s in brief - complete if "--details" not in s and s != NEGOTIATED}  # --details says it
        for s in shorter:  # a shorter form of a line the complete screen has: its mark, and its figures there
            assert any(c.startswith(s.split(" ")[0].rstrip(":")) for c in complete - brief), s
            assert all(f in whole for f in re.findall(r"\d+(?:\.\d+)?", s)), s
        figures = set(re.findall(r"[+-]?\d+\.\d+|\d{3,}", answer.replace("\n    ", " ")))
        assert figures and all(f in whole for f in figures), figures - {f for f in figures if f in whole}
        assert len(_screen(tmp_path, width, True).splitlines()) <= len(_screen(tmp_path, width, False).splitlines())


def test_a_long_sentence_wraps_at_the_width_with_a_hanging_indent() -> None:
    console = Console(file=io.StringIO(), width=40, color_system=None)
    screen.say(console, "  " + " ".join(["word"] * 30))
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert len(lines) > 1 and all(len(line) <= 40 for line in lines)
    assert lines[0].startswith("  word") and all(line.startswith("    word") for line in lines[1:])


def test_the_answer_picks_what_recommend_derives_from_the_same_run(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    stored = store.load(_run(store))
    rec = run_recommendation(stored.run, stored.scenarios, policy_of(stored.run))
    groups = ranked(stored.scenarios, PLAN.ci_target)
    with screen.briefly():
        lines = answer_lines(stored.run, stored.scenarios, groups, policy_of(stored.run))
    assert rec.within_policy is not None and rec.within_policy.cipher and rec.within_policy.kex
    download = next(line for line in lines if line.startswith("  download:"))
    connection = next(line for line in lines if line.startswith("  quickest connection:"))
    assert download.startswith(f"  download: {rec.within_policy.cipher} ")
    picked = connection.split(" picks ")[1] if " picks " in connection else connection.split(": ", 1)[1]
    assert picked.startswith(rec.within_policy.kex)


def test_a_servers_run_at_80_columns_folds_names_and_counts_what_the_brief_screen_leaves_out(tmp_path: Path) -> None:
    specs = ("local:openssh", "local:dropbear")
    opts = JobOptions(
        command=RunKind.SERVERS, plan=PLAN, servers=specs, ciphers=(GCM, CHACHA, CTR), measure_latency=True
    )
    store = Store(tmp_path / "servers.db")
    run_id = jobs.run(Job(store, opts, ListProgress(), stage=fake_stage()))
    screens = {}
    for brief in (True, False):
        console = Console(file=io.StringIO(), width=80, color_system=None, force_terminal=False)
        with screen.briefly(brief):
            print_run(console, store.load(run_id), Path("runs.db"))
        screens[brief] = console.file.getvalue()  # type: ignore[attr-defined]
    text = screens[True]
    assert all(len(line) <= 80 for line in text.splitlines()) and "…" not in text  # folded, never cut
    assert "1 setting\n" not in text and "setting " in text and "key/cipher/MAC" in text  # counted, offers as numbers
    assert len(text.splitlines()) < len(screens[False].splitlines())
    assert "server settings" not in text and "UsePAM" not in text  # a throw-away server's settings: --details


def test_a_load_run_at_80_columns_says_its_method_in_a_line_and_every_sentence_hangs(tmp_path: Path) -> None:
    store = Store(runs_db(tmp_path / "runs.db"))
    screens = {}
    for brief in (True, False):
        console = Console(file=io.StringIO(), width=80, color_system=None, force_terminal=False)
        with screen.briefly(brief):
            print_run(console, store.load(4), Path("runs.db"))
        screens[brief] = console.file.getvalue()  # type: ignore[attr-defined]
    text = screens[True]
    assert "Logins under load: constant arrivals, 2 s per step (--details says how)" in text
    assert "open loop: logins at their intended times, latency from then (--details)" in text
    assert "Open loop: each login started at its intended time" in screens[False]
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines)
    unhung = [line for line in lines if line[:1].islower() and not line.startswith("offered ")]  # offered: a title
    assert not unhung  # a sentence's next lines hang under it, never at the margin


def _row(cipher: str, median: float, rank: int, standing: Standing, n: int = 10) -> Row:
    """Return a hand-made download row: `n` samples around `median`, ranked as given."""
    values = [median * w for w in WIGGLE[:n]]
    sc = Scenario(Kind.THROUGHPUT, cipher=cipher, direction=Direction.DOWN)
    return Row(sc, summarize(values), rank, False, 0, None, None, (), None, standing=standing)


def test_a_brief_table_lists_the_rows_a_reader_chooses_among_and_counts_the_rest() -> None:
    """The leader, rows tied or not told apart, the first three ranks, the client's default and the policy's pick;
    the other slower rows counted in one line with their medians' range."""
    rows = [
        _row(GCM, 1000, 1, Standing.LEADER),
        _row("aes256-gcm@openssh.com", 990, 1, Standing.EQUIVALENT),
        _row("aes192-ctr", 700, 3, Standing.SLOWER),
        _row("aes256-ctr", 650, 4, Standing.SLOWER),
        _row(CHACHA, 600, 5, Standing.SLOWER),  # the client's default
        _row("aes128-cbc", 550, 6, Standing.SLOWER),  # the policy's pick
        _row(CTR, 500, 7, Standing.SLOWER),
        _row("aes256-cbc", 980, 0, Standing.INCONCLUSIVE),
    ]
    default = Negotiated("curve25519-sha256", "ssh-ed25519", CHACHA, None, None)
    with screen.briefly(True):
        listed = listed_rows(rows, default, rows[5])
        notes = row_notes(rows, listed=listed)
    names = [r.scenario.cipher for r in listed]
    assert names == [
        "aes128-gcm@openssh.com",
        "aes256-gcm@openssh.com",
        "aes192-ctr",
        CHACHA,
        "aes128-cbc",
        "aes256-cbc",
    ]
    assert "  2 slower row(s) not listed, 500 to 650 MB/s (--details)" in notes
    with screen.briefly(False):
        assert listed_rows(rows, default, rows[5]) == rows
        assert not any("not listed" in line for line in row_notes(rows, listed=rows))


def test_a_connection_pick_is_named_as_recommend_names_it() -> None:
    """Its key exchange where the rows vary in it, its host key where they share one, a default row by its label."""
    from sshbench.render.answer import _picked

    rows = [_row(GCM, 1000, 1, Standing.LEADER)]
    ed = Scenario(Kind.LATENCY, kex="curve25519-sha256", hostkey="ssh-ed25519")
    rsa = Scenario(Kind.LATENCY, kex="ecdh-sha2-nistp256", hostkey="rsa-sha2-512")
    both = [dataclasses.replace(rows[0], scenario=s) for s in (ed, rsa)]
    assert _picked(ed, both) == "curve25519-sha256"
    assert _picked(ed, both[:1]) == "host key ssh-ed25519"
    default = Scenario(Kind.LATENCY)
    assert "None" not in _picked(default, both) and _picked(default, both) == default.label.strip()
