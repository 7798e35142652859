"""The one table of export formats: `export --format` offers its names and help, and writes through it.

A row names its writer as `module:function` in render/ (export.py: JSON and CSV; layouts.py: other tools'
layouts), imported only when a run is exported (the table is read by `--help`, so it stays light). Adding a
format is a writer there and a row here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sshbench.records import StoredRun


@dataclass(frozen=True)
class ExportFormat:
    """One way to write a stored run: its name, what it holds, and the writer that makes its files."""

    name: str
    help: str
    directory: bool  # writes several files, so it needs -o DIR
    writer: str  # `module:function` of render/: StoredRun -> {file name: text}, one file named ""
    holds: str = ""  # a directory format: what its files hold, said when a run has none of it
    kinds: str = ""  # a directory format: the runs that have it

    def write(self, stored: StoredRun) -> dict[str, str]:
        """Return the files of this format for a run."""
        module, function = self.writer.split(":")
        write: Callable[[StoredRun], dict[str, str]] = getattr(
            importlib.import_module(f"sshbench.render.{module}"), function
        )
        return write(stored)


FORMATS = {
    f.name: f
    for f in (
        ExportFormat("csv", "one row per sample", False, "export:to_csv"),
        ExportFormat("json", "samples, summaries, metadata", False, "export:to_json"),
        ExportFormat(
            "hyperfine",
            "hyperfine's --export-json schema (s per connection or per transfer), for hyperfine's scripts",
            False,
            "layouts:to_hyperfine",
        ),
        ExportFormat(
            "shell-csv",
            "one `algorithm,time` file per test (kex, cipher-send, cipher-receive, mac-send, mac-receive) like the "
            "common shell scripts (time: s per connection, or s per GiB at the median rate) - needs -o DIR",
            True,
            "layouts:to_shell_csv",
            "throughput per cipher and MAC and connection time per key exchange and host key",
            "run, latency, throughput, sweep or servers",
        ),
        ExportFormat(
            "hgrm",
            "a load run's steps as HdrHistogram's percentile distribution (one .hgrm a step, ms, for its plotter) and "
            "every step's histogram encoded in steps.hlog (us) - needs -o DIR",
            True,
            "hdr:to_hgrm",
            "the login times of a load run's steps",
            "load (rate steps, bursts or sessions held)",
        ),
    )
}
