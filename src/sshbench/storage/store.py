"""SQLite storage: every sample is committed the moment it is taken, with the run's metadata.

Rows come back as typed records (reads.py, the reading half of `Store`). Only raw measurements are stored;
everything derived (summaries, a sweep's analysis) is computed on read. The tables, their history and the checks
and migrations of an existing database are in storage/schema.py."""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from sshbench import hints, leases
from sshbench.discovery import Discovery
from sshbench.environment import Environment
from sshbench.errors import ExitCode, SshbenchError
from sshbench.joboptions import JobOptions
from sshbench.model import Scenario
from sshbench.records import (
    Fleet,
    MemoryRecord,
    ServerReport,
    servers_to_dict,
)
from sshbench.samples import RunStatus, Sample
from sshbench.storage.reads import Reads
from sshbench.storage.rows import open_error, write_error
from sshbench.storage.schema import SCHEMA, check_format, migrate

BUSY_TIMEOUT_MS = 5000  # wait this long for another sshbench's write before reporting the database locked


def default_db_path() -> Path:
    """Return $XDG_DATA_HOME/sshbench/sshbench.db (default ~/.local/share/sshbench/sshbench.db)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "sshbench" / "sshbench.db"


def _now() -> str:
    """Return the current UTC time in ISO 8601."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


class Store(Reads):
    """One SQLite database of runs; read-only for the commands that only read."""

    def __init__(self, path: Path, read_only: bool = False) -> None:
        self.path = path
        if read_only and not path.exists():
            raise SshbenchError(
                "there is no results database yet",
                place=str(path),
                fix=f"run `{hints.sshbench()}` first, or point --db (or SSHBENCH_DB) at a database",
                code=ExitCode.USAGE,
            )
        try:
            if read_only:
                self.db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                self.db = sqlite3.connect(path, isolation_level=None)  # autocommit: each write is committed at once
            self.db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            check_format(self.db, self.path)
            if not read_only:
                self._prepare()
            columns = {r[1] for r in self.db.execute("PRAGMA table_info(runs)")}
        except (OSError, sqlite3.Error) as exc:
            raise open_error(path, exc) from None
        self.db.row_factory = sqlite3.Row
        # a database before schema 5, opened read-only (not migrated), has no fleets: every run is top-level
        self.top_level = "runs.parent IS NULL" if "parent" in columns else "1"

    def _prepare(self) -> None:
        """Switch to WAL, then create or migrate the schema and settle dead runs in one transaction, so that a
        second sshbench opening the same new database never sees half a schema. Some lock states answer BUSY at
        once, without the busy handler (another process switching to WAL): retry for the busy timeout."""
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        while True:
            try:
                self.db.execute("PRAGMA journal_mode=WAL")
                # each commit reaches the file at once (an interrupted or killed sshbench loses no sample) but is
                # not forced to the disk one by one: only a power loss or a crash of the OS can undo the last ones
                # (an fsync a sample cost 0.4-0.5 ms of sshbench's CPU here, between two transfers)
                self.db.execute("PRAGMA synchronous=NORMAL")
                return self._schema()
            except sqlite3.OperationalError as exc:
                if getattr(exc, "sqlite_errorname", "") != "SQLITE_BUSY" or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    def _schema(self) -> None:
        """Create or migrate the schema and settle dead runs, in one transaction."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            check_format(self.db, self.path)
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    self.db.execute(statement)
            migrate(self.db)
            self._settle_stale()
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def _settle_stale(self) -> None:
        """Turn `running` runs whose writer is gone (killed, crashed) into `interrupted`."""
        for row in self.db.execute("SELECT id, owner FROM runs WHERE status=?", (RunStatus.RUNNING.value,)).fetchall():
            if not leases.alive(row[1]):
                self._mark_interrupted(row[0], row[1])

    def _mark_interrupted(self, run_id: int, owner: str | None) -> None:
        """Mark a run interrupted if it is still `running` under that (dead) owner."""
        self.db.execute(
            "UPDATE runs SET status=?, updated_at=? WHERE id=? AND status=? AND owner IS ?",
            (RunStatus.INTERRUPTED.value, _now(), run_id, RunStatus.RUNNING.value, owner),
        )

    def writer(self, run_id: int) -> int | None:
        """Return the PID of the live sshbench process writing a run, or None when none is."""
        row = self.db.execute("SELECT status, owner FROM runs WHERE id=?", (run_id,)).fetchone()
        holder = leases.Owner.parse(row[1]) if row is not None else None
        if row is not None and row[0] == RunStatus.RUNNING.value and holder is not None and holder.alive():
            return holder.pid
        return None

    def check_free(self, run_id: int) -> None:
        """Fail when a live sshbench process is writing the run."""
        pid = self.writer(run_id)
        if pid is not None:
            raise SshbenchError(
                f"run {run_id} is being measured right now by another sshbench (process {pid})",
                place="--resume",
                fix=f"wait for it to finish (or stop it with Ctrl-C there, or kill {pid}), then resume",
                code=ExitCode.USAGE,
            )

    def claim(self, run_id: int) -> None:
        """Make this process the writer of a stored run (to resume it), or fail if a live process holds it."""
        with self._writing() as db:
            db.execute("BEGIN IMMEDIATE")  # no other process can claim between the check and the update
            try:
                self.check_free(run_id)
                db.execute(
                    "UPDATE runs SET status=?, owner=?, updated_at=? WHERE id=?",
                    (RunStatus.RUNNING.value, leases.me().text, _now(), run_id),
                )
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def close(self) -> None:
        """Close the database."""
        self.db.close()

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """Turn SQLite write errors into a storage error naming the file."""
        try:
            yield self.db
        except sqlite3.Error as exc:
            raise write_error(self.path, exc) from None

    def create_run(
        self,
        options: JobOptions,
        target: str,
        environment: Environment,
        parent: int | None = None,
        started_at: str | None = None,
    ) -> int:
        """Insert a new run in status 'running' (a fleet's host run names its fleet) and return its id."""
        with self._writing() as db:
            cur = db.execute(
                "INSERT INTO runs (started_at, updated_at, status, command, target, options, environment, owner,"
                " parent) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    started_at or _now(),
                    _now(),
                    RunStatus.RUNNING.value,
                    options.command.value,
                    target,
                    json.dumps(options.to_dict()),
                    json.dumps(environment.to_dict()),
                    leases.me().text,
                    parent,
                ),
            )
        assert cur.lastrowid is not None
        return cur.lastrowid

    def set_status(self, run_id: int, status: RunStatus) -> None:
        """Set a run's status."""
        with self._writing() as db:
            db.execute("UPDATE runs SET status=?, updated_at=? WHERE id=?", (status.value, _now(), run_id))

    def set_discovery(self, run_id: int, discovery: Discovery) -> None:
        """Store what discovery found about a run's target."""
        self._set_discovery(run_id, json.dumps(discovery.to_dict()))

    def set_servers(self, run_id: int, reports: Sequence[ServerReport]) -> None:
        """Store what a `servers` run found about each of its servers."""
        self._set_discovery(run_id, json.dumps(servers_to_dict(reports)))

    def set_fleet(self, run_id: int, fleet: Fleet) -> None:
        """Store a fleet run's hosts (each with its run id or why it has none)."""
        self._set_discovery(run_id, json.dumps(fleet.to_dict()))

    def add_to_environment(self, run_id: int, key: str, value: object) -> None:
        """Add what a run learnt while measuring (a master's own account) to its stored environment, as `key`."""
        with self._writing() as db:
            row = db.execute("SELECT environment FROM runs WHERE id=?", (run_id,)).fetchone()
            stored = json.loads(row[0]) | {key: value}
            db.execute("UPDATE runs SET environment=?, updated_at=? WHERE id=?", (json.dumps(stored), _now(), run_id))

    def _set_discovery(self, run_id: int, text: str) -> None:
        """Write a run's discovery column."""
        with self._writing() as db:
            db.execute("UPDATE runs SET discovery=?, updated_at=? WHERE id=?", (text, _now(), run_id))

    def add_scenarios(self, run_id: int, scenarios: list[Scenario], first: int = 0) -> dict[str, int]:
        """Register scenarios (idempotent) at positions from `first` and return the run's ids by key."""
        with self._writing() as db:
            for position, sc in enumerate(scenarios, first):
                db.execute(
                    "INSERT OR IGNORE INTO scenarios (run_id, position, key, params) VALUES (?, ?, ?, ?)",
                    (run_id, position, sc.key, json.dumps(sc.to_dict())),
                )
        rows = self.db.execute("SELECT id, key FROM scenarios WHERE run_id=?", (run_id,)).fetchall()
        return {row["key"]: row["id"] for row in rows}

    def mark_failed(self, scenario_id: int, reason: str | None) -> None:
        """Record why a scenario cannot be measured (None: it may be tried again)."""
        with self._writing() as db:
            db.execute("UPDATE scenarios SET failure=? WHERE id=?", (reason, scenario_id))

    def add_sample(self, scenario_id: int, s: Sample) -> None:
        """Store one sample immediately (autocommit)."""
        with self._writing() as db:
            db.execute(
                "INSERT INTO samples (scenario_id, round, warmup, ok, value, wall, nbytes, client_cpu,"
                " phases, error, taken_at, server_cpu, client_rss, server_rss, client_system, tcp, client_cpu_setup,"
                " server_cpu_setup, wire) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    scenario_id,
                    s.round,
                    int(s.warmup),
                    int(s.ok),
                    s.value,
                    s.wall,
                    s.nbytes,
                    s.client_cpu,
                    json.dumps(dict(s.phases)) if s.phases else None,
                    s.error,
                    _now(),
                    s.server_cpu,
                    s.client_rss,
                    s.server_rss,
                    s.client_system,
                    json.dumps(s.tcp) if s.tcp else None,
                    s.client_cpu_setup,
                    s.server_cpu_setup,
                    json.dumps(s.wire) if s.wire else None,
                ),
            )

    def add_memory(self, run_id: int, records: list[MemoryRecord]) -> None:
        """Store memory snapshots (one row per server, state and process role) immediately."""
        with self._writing() as db:
            for m in records:
                db.execute(
                    "INSERT INTO memory (run_id, server, state, role, processes, vsz, rss, pss, taken_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (run_id, m.server, m.state, m.role, m.processes, m.vsz, m.rss, m.pss, _now()),
                )


def settle(db: str) -> None:
    """Mark interrupted the runs of a database whose writer died (for the guardian and reapers): opening it for
    writing does that."""
    if Path(db).exists():
        Store(Path(db)).close()
