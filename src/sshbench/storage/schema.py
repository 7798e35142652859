"""The database's tables, the columns added to them since version 1 (older databases get them by ALTER TABLE),
and the check that a database is sshbench's and not from a newer one.

Schema history (SCHEMA_VERSION):
  1 - runs, scenarios, samples.
  2 - samples.server_cpu, client_rss, server_rss; memory (per server, state and process role);
      runs.analysis (a sweep's derived results: no longer written or read, computed on read instead).
  3 - samples.client_system (the ssh client's system CPU seconds, for hyperfine's user/system split).
  4 - runs.owner (`PID:START` of the sshbench process writing it): a `running` run whose owner is gone reads
      as interrupted, and a run with a live owner cannot be resumed by another process.
  5 - runs.parent: a fleet run's per-host runs name it (`history` lists them under it).
  6 - no new column: the claims vocabulary (docs/CLAIMS.md). Options carry the equivalence `margin`; run documents
      (--json) carry `claims`, each result row its `standing` against its group's leader with the verdict behind it,
      and `bound` as {kind, limit, unit, used, evidence, remedy} with network/tcp-window/ssh-window/client-cpu/
      server-cpu/crypto/unknown (schema 5's link/window are network/ssh-window). Runs of schema 5 and before are
      read as they are: a missing margin is 5 %.
  7 - samples.tcp: the kernel's evidence of a transfer's sockets (measure/tcpinfo.py: per side, RTT, cwnd, delivery
      rate, limited shares, retransmits, windows, `series` over time; a remote server's as `ss` read it: `read_by`).
  8 - samples.client_cpu_setup, server_cpu_setup: CPU seconds before a transfer's command was sent.
  9 - no new column: scenarios may name a `client` and `mode` (`clients`); one naming none is OpenSSH's ssh.
  10 - no new column: options carry `ssh`, the OpenSSH client a run used when not the system's (`--ssh PATH`); a
      command's own options (joboptions.py: fleet's, tools', clients') are stored flat beside the shared ones, as
      before.
  11 - samples.wire: a counted warm-up login's key exchange on the wire (measure/wire.py: bytes each way up to each
      side's NEWKEYS, round trips), or why it could not be counted; None for every other sample.
  12 - no new column: `load --burst` and `load --job session` make runs of their own kinds, `bursts` and `sessions`
      (runkinds.py); a `load` run stored before with a burst or `job` "session" is read as that kind
      (joboptions.load_kind), its stored command left as it was.
"""

import sqlite3
from pathlib import Path

from sshbench import hints
from sshbench.errors import ExitCode, SshbenchError
from sshbench.records import SCHEMA_VERSION

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    started_at TEXT NOT NULL, updated_at TEXT NOT NULL,
    status TEXT NOT NULL, command TEXT NOT NULL, target TEXT NOT NULL,
    options TEXT NOT NULL, environment TEXT NOT NULL, discovery TEXT
);
CREATE TABLE IF NOT EXISTS scenarios (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id), position INTEGER NOT NULL,
    key TEXT NOT NULL, params TEXT NOT NULL, failure TEXT,
    UNIQUE (run_id, key)
);
CREATE TABLE IF NOT EXISTS samples (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    scenario_id INTEGER NOT NULL REFERENCES scenarios(id),
    round INTEGER NOT NULL, warmup INTEGER NOT NULL, ok INTEGER NOT NULL,
    value REAL, wall REAL NOT NULL, nbytes INTEGER, client_cpu REAL,
    phases TEXT, error TEXT, taken_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS samples_by_scenario ON samples(scenario_id);
CREATE TABLE IF NOT EXISTS memory (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    server TEXT NOT NULL, state TEXT NOT NULL, role TEXT NOT NULL,
    processes INTEGER NOT NULL, vsz INTEGER NOT NULL, rss INTEGER NOT NULL, pss INTEGER,
    taken_at TEXT NOT NULL
);
"""
ADDED_COLUMNS = {  # columns added after version 1 (ALTER TABLE on older databases)
    "samples": (
        ("server_cpu", "REAL"),
        ("client_rss", "INTEGER"),
        ("server_rss", "INTEGER"),
        ("client_system", "REAL"),
        ("tcp", "TEXT"),
        ("client_cpu_setup", "REAL"),
        ("server_cpu_setup", "REAL"),
        ("wire", "TEXT"),
    ),
    "runs": (("analysis", "TEXT"), ("owner", "TEXT"), ("parent", "INTEGER")),
}


def check_format(db: sqlite3.Connection, path: Path) -> None:
    """Refuse another program's database, and one written by a newer sshbench."""
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not tables:
        return  # a new, empty database
    version = None
    if "meta" in tables:
        row = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        version = int(row[0]) if row and str(row[0]).isdigit() else None
    if version is None or not {"runs", "scenarios", "samples"} <= tables:
        raise SshbenchError(
            f"this SQLite database is not sshbench's (it has tables {', '.join(sorted(tables)[:5])})",
            place=str(path),
            fix="choose another --db: sshbench never adds its tables to another program's database",
            code=ExitCode.STORAGE,
        )
    if version > SCHEMA_VERSION:
        raise SshbenchError(
            f"the results database was written by a newer sshbench (schema {version}; this one reads up to "
            f"{SCHEMA_VERSION})",
            place=str(path),
            fix=f"upgrade sshbench (`{hints.upgrade()}`), or use another --db",
            code=ExitCode.STORAGE,
        )


def migrate(db: sqlite3.Connection) -> None:
    """Add the columns newer versions store, and record the schema version."""
    for table, columns in ADDED_COLUMNS.items():
        have = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
        for name, sqltype in columns:
            if name not in have:
                db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {sqltype}")
    db.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
