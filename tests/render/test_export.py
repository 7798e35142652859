"""Exports: the one table of formats, and the shell-script layout."""

from __future__ import annotations

import pytest

from fakes import GCM, factorised_sweep, stored_run_record
from sshbench.records import StoredRun
from sshbench.render.formats import FORMATS


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
    assert [f.name for f in FORMATS.values() if f.directory] == ["shell-csv"]


@pytest.mark.parametrize("name", ["csv", "json"])
def test_single_file_formats_write_one_file(name: str) -> None:
    files = FORMATS[name].write(StoredRun(stored_run_record(), tuple(factorised_sweep())))
    assert list(files) == [""] and "aes128-gcm@openssh.com" in files[""]


def test_every_row_names_a_writer() -> None:
    from sshbench.render import export

    assert all(callable(getattr(export, f.writer, None)) for f in FORMATS.values())


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
