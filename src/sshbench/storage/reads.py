"""Reading a results database back as typed records (`records.RunRecord`, `StoredScenario`, `StoredRun`), never as
dicts: the reading half of `Store` (store.py opens the database and writes)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from sshbench import hints
from sshbench.errors import ExitCode, SshbenchError
from sshbench.model import Kind, Scenario
from sshbench.records import MemoryRecord, RunRecord, StoredRun, StoredScenario
from sshbench.runkinds import RunKind
from sshbench.storage.rows import damaged, host_scenarios, run_record, sample


class Reads:
    """The queries of a results database; `Store` opens it (`db`, `path`) and says which runs are top-level."""

    db: sqlite3.Connection
    path: Path
    top_level: str  # the SQL condition of a run that is no fleet host's part

    def latest_run(self, kinds: Iterable[RunKind] | None = None, measured: Kind | None = None) -> int | None:
        """Return the newest run (of these kinds, with scenarios of that kind when given; a fleet's host runs are
        parts of their fleet, never `last`), or None."""
        sql, params = "SELECT DISTINCT runs.id FROM runs", []
        if measured is not None:
            sql += " JOIN scenarios ON scenarios.run_id=runs.id AND scenarios.key LIKE ?"
            params.append(f"{measured.value} %")
        sql += f" WHERE {self.top_level}"
        if kinds is not None:
            wanted = [k.value for k in kinds]
            sql += f" AND runs.command IN ({', '.join('?' * len(wanted))})"
            params += wanted
        row = self.db.execute(sql + " ORDER BY runs.id DESC LIMIT 1", params).fetchone()
        return int(row[0]) if row else None

    def memory(self, run_id: int) -> list[MemoryRecord]:
        """Return a run's memory snapshots in the order they were taken."""
        rows = self.db.execute("SELECT * FROM memory WHERE run_id=? ORDER BY id", (run_id,)).fetchall()
        return [
            MemoryRecord(r["server"], r["state"], r["role"], r["processes"], r["vsz"], r["rss"], r["pss"]) for r in rows
        ]

    def run(self, run_id: int) -> RunRecord:
        """Return a run's header or fail naming the id."""
        row = self.db.execute("SELECT * FROM runs WHERE id=?", (run_id,)).fetchone()
        if row is None:
            raise SshbenchError(
                f"there is no run {run_id}",
                place=str(self.path),
                fix=f"list the stored runs with `{hints.sshbench('history')}`",
                code=ExitCode.USAGE,
            )
        return run_record(row)

    def load(self, run_id: int) -> StoredRun:
        """Return everything stored about a run, or fail naming the id; a fleet run comes with its hosts' runs (and
        their scenarios, each named by its host)."""
        run = self.run(run_id)
        if run.fleet is None:
            return StoredRun(run, tuple(self.scenarios(run_id)), tuple(self.memory(run_id)))
        hosts = tuple((h, None if h.run is None else self.load(h.run)) for h in run.fleet.hosts)
        return StoredRun(run, tuple(st for h, r in hosts if r for st in host_scenarios(h.name, r.scenarios)), (), hosts)

    def runs(self, limit: int = 50, hosts: bool = False) -> list[tuple[RunRecord, int]]:
        """Return the newest runs with their sample counts (a fleet's host runs too, when asked)."""
        parts = (
            "" if self.top_level == "1" else " OR scenarios.run_id IN (SELECT id FROM runs AS c WHERE c.parent=runs.id)"
        )
        rows = self.db.execute(
            "SELECT runs.*, (SELECT COUNT(*) FROM samples JOIN scenarios ON samples.scenario_id=scenarios.id"
            f" WHERE scenarios.run_id=runs.id{parts}) AS n FROM runs {'' if hosts else f'WHERE {self.top_level}'}"
            " ORDER BY id DESC LIMIT ?",
            (limit,),
        ).fetchall()
        return [(run_record(r), int(r["n"])) for r in rows]

    def scenarios(self, run_id: int) -> list[StoredScenario]:
        """Return a run's scenarios in plan order, each with all its samples."""
        result = []
        for row in self.db.execute("SELECT * FROM scenarios WHERE run_id=? ORDER BY position", (run_id,)):
            with damaged(f"scenario {row['key']!r} of run {run_id}"):
                sc = Scenario.from_dict(json.loads(row["params"]))
                samples = tuple(
                    sample(sc, s)
                    for s in self.db.execute("SELECT * FROM samples WHERE scenario_id=? ORDER BY id", (row["id"],))
                )
            result.append(StoredScenario(row["id"], row["position"], sc, row["failure"], samples))
        return result
