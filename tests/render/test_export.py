"""Exports: the one table of formats, and the shell-script layout."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes import GCM, factorised_sweep, stored_run_record, stored_values, transfer
from sshbench.model import Direction, Kind, Scenario
from sshbench.records import StoredRun
from sshbench.render.export import run_document
from sshbench.render.formats import FORMATS
from sshbench.runkinds import RunKind


def test_shell_csv_layout() -> None:
    files = FORMATS["shell-csv"].write(StoredRun(stored_run_record(), tuple(factorised_sweep())))
    assert set(files) == {"kex.csv", "cipher-send.csv", "cipher-receive.csv", "mac-send.csv", "mac-receive.csv"}
    lines = files["cipher-receive.csv"].splitlines()
    assert lines[0] == "algorithm,time"
    times = dict(line.split(",") for line in lines[1:])
    assert float(times[GCM]) == pytest.approx(2**30 / 1e9, rel=0.02)  # 1 GiB at 1000 MB/s
    assert "hmac-sha1" in files["mac-send.csv"] and GCM not in files["mac-send.csv"]
    assert files["kex.csv"].splitlines()[1].startswith("ecdh-sha2-nistp256,0.12")


def test_export_formats_come_from_one_table() -> None:
    from sshbench.cli.stored import export_cmd

    choice = next(p for p in export_cmd.params if p.name == "fmt").type
    assert list(choice.choices) == list(FORMATS)  # type: ignore[attr-defined]
    assert [f.name for f in FORMATS.values() if f.directory] == ["shell-csv", "hgrm"]


@pytest.mark.parametrize("name", ["csv", "json"])
def test_single_file_formats_write_one_file(name: str) -> None:
    files = FORMATS[name].write(StoredRun(stored_run_record(), tuple(factorised_sweep())))
    assert list(files) == [""] and "aes128-gcm@openssh.com" in files[""]


def test_every_row_names_a_writer() -> None:
    import importlib

    for f in FORMATS.values():
        module, function = f.writer.split(":")
        assert callable(getattr(importlib.import_module(f"sshbench.render.{module}"), function, None)), f.name


def test_hyperfine_export_follows_hyperfines_schema() -> None:
    import json

    doc = json.loads(FORMATS["hyperfine"].write(StoredRun(stored_run_record(), tuple(factorised_sweep())))[""])
    keys = {"command", "mean", "stddev", "median", "user", "system", "min", "max", "times", "exit_codes"}
    assert doc["results"] and all(keys <= set(r) for r in doc["results"])
    gcm = next(
        r for r in doc["results"] if r["parameters"].get("cipher") == GCM and r["parameters"]["direction"] == "down"
    )
    assert gcm["median"] == pytest.approx(2**28 / 1e9, rel=0.02)  # 256 MiB at 1000 MB/s, in seconds
    assert gcm["min"] <= gcm["median"] <= gcm["max"] and len(gcm["times"]) == len(gcm["exit_codes"]) == 6
    assert "Ciphers=aes128-gcm@openssh.com" in gcm["command"] and "head -c" in gcm["command"]
    kex = next(r for r in doc["results"] if r["parameters"].get("kex") == "curve25519-sha256")
    assert kex["median"] == pytest.approx(0.130) and kex["command"].endswith(" true")


def test_json_carries_units() -> None:
    from sshbench.render.export import run_document

    doc = run_document(StoredRun(stored_run_record(), tuple(factorised_sweep())))
    assert doc["units"]["wall"] == "s" and "MB/s" in doc["units"]["value"]
    units = {r["unit"] for rows in doc["results"].values() for r in rows}
    assert units == {"s", "MB/s"}


def test_item_5_mac_files_hold_the_macs_own_rows_not_another_ciphers() -> None:
    """Issue 21, item 5: a quick-start run's mac-receive.csv gave `umac-64-etm@openssh.com,40.9249`, the 3des-cbc
    pairing's time. Each cipher with its default MAC only: the MAC files name the row measured with aes128-ctr."""
    umac = "umac-64-etm@openssh.com"
    run = [transfer(c, umac, r, d) for c, r in (("3des-cbc", 26.0), ("aes128-ctr", 500.0)) for d in Direction]
    files = FORMATS["shell-csv"].write(StoredRun(stored_run_record(RunKind.RUN), tuple(run)))
    times = dict(line.split(",") for line in files["mac-receive.csv"].splitlines()[1:])
    assert float(times[umac]) == pytest.approx(2**30 / 500e6, rel=0.02)  # aes128-ctr's row, not 3des-cbc's
    without = [st for st in run if st.scenario.cipher == "3des-cbc"] + [
        transfer("aes256-ctr", umac, 480.0, d) for d in Direction
    ]
    files = FORMATS["shell-csv"].write(StoredRun(stored_run_record(RunKind.RUN), tuple(without)))
    assert "mac-receive.csv" not in files  # no reference cipher: no MAC file rather than a cipher's time


def test_item_12_tools_json_carries_efficiency_bounds_and_every_claim() -> None:
    """Issue 21, item 12: `tools --json` carried no efficiency and no bounds (`"analysis": null`)."""
    stored = [
        stored_values(Scenario(Kind.TOOL, tool=t, cipher=c, direction=Direction.DOWN), [v] * 4)
        for t, c, v in (("scp", GCM, 600.0), ("rsync", GCM, 400.0), ("tcp", None, 500.0), ("rsyncd", None, 900.0))
    ]
    record = stored_run_record(RunKind.TOOLS)
    doc = run_document(StoredRun(record, tuple(stored)))
    down = doc["analysis"]["efficiency"]["download"]
    scp = next(e for e in down if e["tool"] == "scp")
    assert scp["of_tcp"] is None and scp["failed_baselines"] == ["tcp"]  # 600 over a 500 MB/s "ceiling"
    rsync = next(e for e in down if e["tool"] == "rsync")
    assert rsync["of_tcp"] == pytest.approx(0.8) and rsync["of_rsyncd"] == pytest.approx(400 / 900)
    texts = [c["text"] for c in doc["claims"]]
    assert any("failed baseline: plain TCP (socat) at 500 MB/s is below scp + aes128-gcm" in t for t in texts)
    assert all("bound" in row for row in doc["results"]["tool download"])


def tools_run() -> StoredRun:
    """Return a tools run: scp, sftp, rsync and both baselines, each way."""
    rows = [
        stored_values(
            Scenario(Kind.TOOL, tool=tool, cipher=None if tool in ("tcp", "rsyncd") else GCM, direction=d),
            [500.0, 510.0, 505.0],
        )
        for tool in ("scp", "scp-legacy", "sftp", "rsync", "tcp", "rsyncd")
        for d in Direction
    ]
    return StoredRun(stored_run_record(RunKind.TOOLS), tuple(rows))


def test_hyperfine_names_the_copy_each_tools_row_ran() -> None:
    import json

    doc = json.loads(FORMATS["hyperfine"].write(tools_run())[""])
    commands = {(r["parameters"]["tool"], r["parameters"]["direction"]): r["command"] for r in doc["results"]}
    assert len(commands) == 12
    for (tool, _), command in commands.items():
        first = command.split(" | ")[-1].split()[0]
        assert first == {"scp-legacy": "scp", "tcp": "socat", "rsyncd": "rsync"}.get(tool, tool), command
    assert "-O" in commands[("scp-legacy", "down")].split()
    for plain in (commands[(t, d)].split() for t in ("tcp", "rsyncd") for d in ("down", "up")):
        assert "ssh" not in plain and "-e" not in plain and not any("Ciphers=" in w for w in plain)  # no SSH at all
    assert "rsync://" in commands[("rsyncd", "up")] and "TARGET" in commands[("rsync", "up")]


def test_shell_csv_of_a_run_without_its_rows_is_refused(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from sshbench.cli.main import cli
    from sshbench.errors import ExitCode, SshbenchError
    from sshbench.storage.store import Store

    db = tmp_path / "runs.db"
    store = Store(db)
    run = tools_run()
    run_id = store.create_run(run.run.options, "local", run.run.environment)
    ids = store.add_scenarios(run_id, [st.scenario for st in run.scenarios])
    for st in run.scenarios:
        for s in st.samples:
            store.add_sample(ids[st.scenario.key], s)
    out = tmp_path / "csv"
    done = CliRunner().invoke(cli, ["export", str(run_id), "--db", str(db), "--format", "shell-csv", "-o", str(out)])
    error = done.exception  # the CLI's one error boundary (cli.main.main) turns it into exit 2 and a sentence
    assert isinstance(error, SshbenchError) and error.code == ExitCode.USAGE
    assert "nothing to write as shell-csv" in error.cause and "--format csv or json" in (error.fix or "")
    assert not out.exists()


def test_hgrm_export_of_a_load_run_is_read_back_by_hdrhistograms_own_decoder(tmp_path: Path) -> None:
    """Issue 56: `export --format hgrm` writes each step's percentile distribution (.hgrm, ms) and every step's
    histogram in steps.hlog; hdrh's HistogramLogReader decodes the log, and its percentiles are the step table's (one
    histogram, so equal to the microsecond); a run without steps is refused with the kinds that have them."""
    from click.testing import CliRunner
    from hdrh.histogram import HdrHistogram
    from hdrh.log import HistogramLogReader

    from fakes import runs_db
    from sshbench.analyse.load import DIGITS, HIGHEST_US, LOWEST_US
    from sshbench.cli.main import cli
    from sshbench.errors import SshbenchError
    from sshbench.render.load import steps
    from sshbench.storage.store import Store

    db = runs_db(tmp_path / "runs.db")
    out = tmp_path / "hdr"
    done = CliRunner().invoke(cli, ["export", "4", "--db", str(db), "--format", "hgrm", "-o", str(out)])
    assert done.exit_code == 0, done.output
    assert sorted(p.name for p in out.iterdir()) == ["10-per-s.hgrm", "20-per-s.hgrm", "steps.hlog"]
    hgrm = (out / "20-per-s.hgrm").read_text()
    assert hgrm.split()[:4] == ["Value", "Percentile", "TotalCount", "1/(1-Percentile)"] and "#[Max     =" in hgrm
    table = steps(Store(db).load(4))
    reader = HistogramLogReader(str(out / "steps.hlog"), HdrHistogram(LOWEST_US, HIGHEST_US, DIGITS))
    for row in table:
        decoded = reader.get_next_interval_histogram()
        assert decoded is not None and decoded.get_total_count() == row.logins - row.failures
        for p in (50.0, 99.0):
            assert decoded.get_value_at_percentile(p) / 1e6 == pytest.approx(row.at(p), abs=1e-6)
    assert reader.get_next_interval_histogram() is None
    refused = CliRunner().invoke(cli, ["export", "1", "--db", str(db), "--format", "hgrm", "-o", str(tmp_path / "x")])
    assert isinstance(refused.exception, SshbenchError) and "a run of load" in (refused.exception.fix or "")
