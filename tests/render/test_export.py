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
