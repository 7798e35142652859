"""Reading stored rows back as typed records, and the storage errors that name their cause: a damaged row, a
database that cannot be opened (locked, foreign, not a database, read-only), a write that failed (disk full).

A row is anything with `row["column"]` (an sqlite3.Row). A `running` run reads as `interrupted` once the
process that wrote it (`runs.owner`, `PID:START`) is gone.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sshbench import leases
from sshbench.environment import Environment
from sshbench.errors import ExitCode, SshbenchError
from sshbench.joboptions import JobOptions
from sshbench.model import Scenario
from sshbench.records import RunRecord, StoredScenario, read_discovery
from sshbench.samples import RunStatus, Sample


def open_error(path: Path, exc: Exception) -> SshbenchError:
    """Return the storage error for a database that cannot be opened, with the fix that fits its cause."""
    name = getattr(exc, "sqlite_errorname", "")
    cause, fix = f"cannot open the results database: {exc}", "choose a writable location with --db PATH"
    if name == "SQLITE_BUSY":
        cause, fix = "the results database is locked: another sshbench is using it", "wait for it, or use another --db"
    elif name == "SQLITE_NOTADB":
        cause, fix = "this file is not an SQLite database", "point --db (or SSHBENCH_DB) at an sshbench database"
    elif name == "SQLITE_READONLY":
        cause = "the results database is read-only"
        fix = "make it writable, or choose another --db (reading commands such as `history` still work)"
    return SshbenchError(cause, place=str(path), fix=fix, code=ExitCode.STORAGE)


def write_error(path: Path, exc: sqlite3.Error) -> SshbenchError:
    """Return the storage error for a failed write, with the fix that fits its cause."""
    name = getattr(exc, "sqlite_errorname", "")
    fix = "free disk space or choose another --db"
    if name == "SQLITE_BUSY":
        fix = "another sshbench is writing to it: wait for it, or use another --db"
    elif name == "SQLITE_READONLY":
        fix = "make the database writable, or choose another --db"
    return SshbenchError(
        f"could not write to the results database: {exc}", place=str(path), fix=fix, code=ExitCode.STORAGE
    )


@contextmanager
def damaged(what: str) -> Iterator[None]:
    """Turn a stored value that cannot be read back (edited or damaged by hand) into a storage error."""
    try:
        yield
    except (ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError) as exc:
        raise SshbenchError(
            f"{what} is damaged in the results database ({type(exc).__name__}: {str(exc)[:80]})",
            fix="delete that run (or restore the database from a copy); other runs are unaffected",
            code=ExitCode.STORAGE,
        ) from None


def run_record(row: Any) -> RunRecord:
    """Build a RunRecord from a row."""
    with damaged(f"run {row['id']}"):
        discovery, servers, fleet = read_discovery(json.loads(row["discovery"]) if row["discovery"] else None)
        options = JobOptions.from_dict(json.loads(row["options"]), row["command"])
        return RunRecord(
            id=row["id"],
            started_at=row["started_at"],
            updated_at=row["updated_at"],
            status=_status(row),
            kind=options.command,  # a `load` run stored before schema 12 reads as the kind it is today
            target=row["target"],
            options=options,
            environment=Environment.from_dict(json.loads(row["environment"])),
            discovery=discovery,
            servers=servers,
            fleet=fleet,
            parent=row["parent"] if "parent" in row.keys() else None,  # noqa: SIM118 - a Row`s `in` tests values
        )


def _status(row: Any) -> RunStatus:
    """Return a run's status as it stands: `running` only while its writer lives."""
    status = RunStatus(row["status"])
    owner = row["owner"] if "owner" in row.keys() else None  # noqa: SIM118 - a Row`s `in` tests values
    if status is RunStatus.RUNNING and not leases.alive(owner):
        return RunStatus.INTERRUPTED
    return status


def sample(sc: Scenario, row: Any) -> Sample:
    """Build a Sample from a row (columns a database opened read-only before migrating lacks read as None)."""
    have = set(row.keys())
    phases = tuple(json.loads(row["phases"]).items()) if row["phases"] else ()
    return Sample(
        sc,
        row["round"],
        bool(row["warmup"]),
        bool(row["ok"]),
        row["value"],
        row["wall"],
        nbytes=row["nbytes"],
        client_cpu=row["client_cpu"],
        phases=phases,
        error=row["error"],
        server_cpu=row["server_cpu"] if "server_cpu" in have else None,
        client_rss=row["client_rss"] if "client_rss" in have else None,
        server_rss=row["server_rss"] if "server_rss" in have else None,
        client_system=row["client_system"] if "client_system" in have else None,
        tcp=json.loads(row["tcp"]) if "tcp" in have and row["tcp"] else None,
        client_cpu_setup=row["client_cpu_setup"] if "client_cpu_setup" in have else None,
        server_cpu_setup=row["server_cpu_setup"] if "server_cpu_setup" in have else None,
        wire=json.loads(row["wire"]) if "wire" in have and row["wire"] else None,
    )


def host_scenarios(host: str, stored: Sequence[StoredScenario]) -> list[StoredScenario]:
    """Return a fleet host's scenarios named by the host (`Scenario.server`), as one fleet run shows them."""
    named = []
    for st in stored:
        sc = dataclasses.replace(st.scenario, server=host)
        samples = tuple(dataclasses.replace(s, scenario=sc) for s in st.samples)
        named.append(dataclasses.replace(st, scenario=sc, samples=samples))
    return named
