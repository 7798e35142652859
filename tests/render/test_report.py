"""Reports from stored runs: the offline HTML report, PNG/SVG files, and a headless Chromium that opens the
report with networking disabled."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from conftest import sshbench
from fakes import CHACHA, DISCOVERY, ENVIRONMENT, GCM, add_sessions_run, runs_db
from sshbench.environment import Emulation
from sshbench.joboptions import JobOptions
from sshbench.model import Direction, Kind, Scenario
from sshbench.remedy import Remedy
from sshbench.runkinds import RunKind
from sshbench.samples import RunStatus, Sample
from sshbench.storage.store import Store


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """The hand-made runs of fakes.runs_db."""
    return runs_db(tmp_path / "runs.db")


def _html(cli_env: dict[str, str], db: Path, tmp_path: Path, *runs: str) -> str:
    """Render a report and return its text."""
    out = tmp_path / "report.html"
    done = sshbench(cli_env, "report", *runs, "--db", str(db), "-o", str(out))
    assert done.returncode == 0, done.stderr
    return out.read_text()


def test_report_has_every_chart_and_no_external_resource(cli_env: dict[str, str], db: Path, tmp_path: Path) -> None:
    html = _html(cli_env, db, tmp_path, "1", "2")
    for chart in ("run1-latency", "run1-throughput", "run1-cpu", "run2-throughput", "compare"):
        assert f'id="{chart}"' in html and f'id="{chart}-spec"' in html
    assert "Fastest within policy modern" in html and "Host your-server" in html  # recommendation + snippet
    assert "emulation" in html and "Test CPU" in html  # environment
    assert "prefers-color-scheme: dark" in html and "@media print" in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "@import" not in html and not re.search(r"url\(\s*['\"]?https?:", html)
    for spec in re.findall(r'<script type="application/json" id="[^"]+">(.*?)</script>', html, re.S):
        assert "http" not in spec  # inline data only, no schema or data URL
    servers = _html(cli_env, db, tmp_path, "3")
    for chart in ("run3-throughput", "run3-cpu", "run3-memory"):
        assert f'id="{chart}"' in servers
    load = _html(cli_env, db, tmp_path, "4")  # its own charts only: its steps are not key exchanges
    assert 'id="run4-load-percentiles"' in load and 'id="run4-load-outcomes"' in load, load[-2000:]
    assert 'id="run4-latency"' not in load and "kex_exchange_identification" in load


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_chart_files(cli_env: dict[str, str], db: Path, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / "charts"
    done = sshbench(cli_env, "report", "1", "--db", str(db), "--format", fmt, "-o", str(out))
    assert done.returncode == 0, done.stderr
    files = sorted(out.iterdir())
    assert {f.stem for f in files} >= {"run1-latency", "run1-throughput", "run1-cpu"}
    for f in files:
        head = f.read_bytes()[:8]
        assert head == b"\x89PNG\r\n\x1a\n" if fmt == "png" else b"<svg" in f.read_bytes()[:200]


def _png_colours(path: Path) -> int:
    """Return how many distinct pixel values an 8-bit RGB/RGBA PNG has (a blank page has one)."""
    data = path.read_bytes()
    pos, idat, width, height, channels = 8, b"", 0, 0, 4
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, prev, seen = zlib.decompress(idat), width * channels, bytearray(width * channels), set()
    for y in range(height):
        line = raw[y * (stride + 1) : (y + 1) * (stride + 1)]
        ftype, row = line[0], bytearray(line[1:])
        for i in range(stride):
            left = row[i - channels] if i >= channels else 0
            up, ul = prev[i], prev[i - channels] if i >= channels else 0
            if ftype == 1:
                row[i] = (row[i] + left) & 255
            elif ftype == 2:
                row[i] = (row[i] + up) & 255
            elif ftype == 3:
                row[i] = (row[i] + (left + up) // 2) & 255
            elif ftype == 4:
                p = left + up - ul
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - ul)
                row[i] = (row[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else ul)) & 255
        if y % 8 == 0:
            seen |= {bytes(row[i : i + channels]) for i in range(0, stride, channels * 4)}
        prev = row
    return len(seen)


def _chromium() -> str | None:
    """Return the Chromium binary (Debian package `chromium`), if installed."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(_chromium() is None, reason="Chromium is not installed (scripts/setup installs it)")
def test_report_renders_offline_in_headless_chromium(cli_env: dict[str, str], db: Path, tmp_path: Path) -> None:
    sessions, again = add_sessions_run(db), add_sessions_run(db)  # two servers' sessions: one chart across them too
    _html(cli_env, db, tmp_path, "1", "2", "4", str(sessions), str(again))  # load runs' charts: steps, sessions
    page = f"file://{tmp_path / 'report.html'}"
    no_network = ["unshare", "--net"] if os.geteuid() == 0 else ["unshare", "--user", "--map-root-user", "--net"]
    browser = [
        *no_network,
        str(_chromium()),
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--window-size=1100,2600",
        "--virtual-time-budget=15000",
    ]
    env = {**cli_env, "HOME": str(tmp_path)}
    dom = subprocess.run([*browser, "--dump-dom", page], capture_output=True, text=True, timeout=180, env=env)
    assert dom.returncode == 0, dom.stderr[-2000:]
    charts = re.findall(r'<div class="chart[^"]*" data-spec="([^"]+)"[^>]*>(.*?)</div>\s*</div>', dom.stdout, re.S)
    load = {"run4-load-percentiles-spec", "run4-load-outcomes-spec", f"run{sessions}-load-sessions-spec"}
    load |= {"across-load-sessions-spec"}
    assert len(charts) >= 8 and load <= {n for n, _ in charts}
    blank = [name for name, body in charts if "<svg" not in body or "marks" not in body]
    assert not blank, f"charts did not render: {blank}"
    assert ">chart failed:" not in dom.stdout  # the error text vegaEmbed failures would show
    shot = tmp_path / "shot.png"
    argv = [*browser, f"--screenshot={shot}", page]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=180, env=env)
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    assert _png_colours(shot) > 20  # charts, text and colours: not a blank page


def test_item_12_the_report_says_what_the_terminal_says(cli_env: dict[str, str], tmp_path: Path) -> None:
    """Issue 21, item 12: the report said `Host your-server` instead of the target's name, dumped the environment and
    options as raw JSON, showed no instability warnings or failed rows, and no caveat beside config lines measured
    under emulation."""
    db = tmp_path / "remote.db"
    store = Store(db)
    env = dataclasses.replace(
        ENVIRONMENT, emulation=Emulation("no-aesni", {"OPENSSL_ia32cap": "~0x2"}, ("ssh client",), "Dropbear")
    )
    run_id = store.create_run(JobOptions(command=RunKind.RUN), "backup-host", env)
    wild = Scenario(Kind.THROUGHPUT, cipher=GCM, direction=Direction.DOWN)
    steady = Scenario(Kind.THROUGHPUT, cipher=CHACHA, direction=Direction.DOWN)
    broken = Scenario(Kind.THROUGHPUT, cipher="aes128-ctr", mac="hmac-sha1", direction=Direction.DOWN)
    ids = store.add_scenarios(run_id, [wild, steady, broken])
    for i, (a, b) in enumerate(
        zip((900.0, 400.0, 1300.0, 700.0, 950.0, 500.0), (600.0, 601.0, 599.0, 600.0, 602.0, 598.0), strict=True), 1
    ):
        store.add_sample(ids[wild.key], Sample(wild, i, False, True, a, 1.0, nbytes=2**27))
        store.add_sample(ids[steady.key], Sample(steady, i, False, True, b, 1.0, nbytes=2**27))
    store.mark_failed(ids[broken.key], "ssh exited with status 255: Connection closed")
    store.set_discovery(run_id, DISCOVERY)
    store.set_status(run_id, RunStatus.COMPLETE)
    store.close()
    html = _html(cli_env, db, tmp_path, str(run_id))
    assert "Host backup-host" in html and "Host your-server" not in html
    assert "options: no time budget; no racing; rounds 6-20" in html
    assert "{&#34;" not in html and '{"command"' not in html
    assert "95 % CI is" in html  # the unstable row's warning
    assert "failed aes128-ctr + hmac-sha1 down: ssh exited with status 255: Connection closed" in html
    assert "# measured under emulated hardware no-aesni" in html  # beside the config lines
    assert "Fastest here" in html and "not measured: aes128-ctr + hmac-sha1" in html


def test_a_tune_run_charts_its_default_socket_over_time_and_each_remedy_with_its_interval(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    db = tmp_path / "tune.db"
    store = Store(db)
    run_id = store.create_run(JobOptions(command=RunKind.TUNE, target="backup-host"), "backup-host", ENVIRONMENT)
    steady = Scenario(Kind.THROUGHPUT, direction=Direction.DOWN)
    copy = dataclasses.replace(steady, remedy=Remedy.streams(1))
    four = dataclasses.replace(steady, remedy=Remedy.streams(4))
    ids = store.add_scenarios(run_id, [steady, copy, four])
    series = {
        "t_s": [0.0, 0.1, 0.2, 0.3],
        "delivery_MBps": [5.0, 15.0, 20.0, 20.5],
        "rtt_ms": [100.0, 101.0, 102.0, 101.5],
        "cwnd_segments": [10, 40, 48, 48],
    }
    for rnd, (a, b, c) in enumerate(((20.0, 16.0, 40.0), (20.5, 16.2, 41.0), (19.8, 15.9, 39.5)), 1):
        tcp = {"server": {"rtt_ms": 101.0, "series": series}, "client": {"rtt_ms": 101.0}}
        store.add_sample(ids[steady.key], Sample(steady, rnd, False, True, a, 1.0, nbytes=2**25, tcp=tcp))
        store.add_sample(ids[copy.key], Sample(copy, rnd, False, True, b, 1.0, nbytes=2**27))
        store.add_sample(ids[four.key], Sample(four, rnd, False, True, c, 1.0, nbytes=2**27))
    store.set_status(run_id, RunStatus.COMPLETE)
    store.close()
    html = _html(cli_env, db, tmp_path, str(run_id))
    for chart in (f"run{run_id}-tcp-download", f"run{run_id}-remedies-download"):
        assert f'id="{chart}"' in html and f'id="{chart}-spec"' in html
    assert "the sender&#39;s socket (server) over its median sample (20.0 MB/s)" in html
    out = tmp_path / "charts"
    done = sshbench(cli_env, "report", str(run_id), "--db", str(db), "--format", "svg", "-o", str(out))
    assert done.returncode == 0, done.stderr
    drawn = {f.stem: f.read_text() for f in out.iterdir()}
    assert "cwnd, segments" in drawn[f"run{run_id}-tcp-download"]  # the three panels, drawn offline
    assert "% change against the default copy" in drawn[f"run{run_id}-remedies-download"]


def test_a_load_runs_report_carries_no_throughput_notes(tmp_path: Path) -> None:
    """Issue 54, item 8: a load run's report said `--size auto, payload zero` and ranked its steps."""
    from sshbench.render.report import render_html

    db = runs_db(tmp_path / "runs.db")
    html = render_html([Store(db, read_only=True).load(4)])
    assert "--size auto" not in html and "payload zero" not in html and "rank - " not in html
    assert "Notes: latency" not in html


def test_a_step_cut_short_is_named_on_the_load_chart(tmp_path: Path) -> None:
    from sshbench.render.loadcharts import load_figures

    stored = Store(runs_db(tmp_path / "runs.db"), read_only=True).load(4)
    ten, twenty = stored.scenarios
    cut = dataclasses.replace(stored, scenarios=(ten, dataclasses.replace(twenty, samples=twenty.samples[:25])))
    (percentiles, _) = load_figures(cut, "run4-")
    assert percentiles.title.endswith("; cut short, not read for the knee: 20/s (25 of 40 logins)")
    assert "cut short" not in load_figures(stored, "run4-")[0].title


def test_a_run_that_compares_key_exchanges_charts_p99_and_capacity_per_key_exchange(tmp_path: Path) -> None:
    """Issue 56: `load --kex A,B` reports each key exchange's p99 and its knee beside what one core serves."""
    from sshbench.render.loadcharts import load_figures

    stored = Store(runs_db(tmp_path / "runs.db"), read_only=True).load(4)
    kexes = ("curve25519-sha256", "mlkem768x25519-sha256")
    pinned = tuple(
        dataclasses.replace(st, scenario=dataclasses.replace(st.scenario, kex=k))
        for k in kexes
        for st in stored.scenarios
    )
    run = dataclasses.replace(stored.run, options=dataclasses.replace(stored.run.options, kex=kexes))
    figures = load_figures(dataclasses.replace(stored, run=run, scenarios=pinned), "run4-")
    assert [f.id for f in figures] == ["run4-load-p99-kex", "run4-load-capacity", "run4-load-outcomes"]
    capacity = json.dumps(figures[1].spec)
    assert all(k in capacity for k in kexes) and "knee" in capacity
    assert "mlkem768x25519-sha256 20/s" in json.dumps(figures[2].spec)
