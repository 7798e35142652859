"""SQLite storage: typed records in, the same typed records out; every sample kept; newest-run queries."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from fakes import DISCOVERY, ENVIRONMENT
from sshbench.joboptions import JobOptions
from sshbench.model import Direction, Kind, Scenario
from sshbench.records import SCHEMA_VERSION, Fleet, FleetHost, MemoryRecord, ServerReport
from sshbench.runkinds import RunKind
from sshbench.samples import RunStatus, Sample
from sshbench.storage.store import Store

SC = Scenario(Kind.THROUGHPUT, cipher="aes128-ctr", mac="hmac-sha1", direction=Direction.DOWN)


def test_a_run_comes_back_as_it_was_stored(tmp_path: Path) -> None:
    store = Store(tmp_path / "r.db")
    opts = JobOptions(command=RunKind.THROUGHPUT, ciphers=("aes128-ctr",))
    run_id = store.create_run(opts, "local", ENVIRONMENT)
    store.set_discovery(run_id, DISCOVERY)
    ids = store.add_scenarios(run_id, [SC])
    taken = [
        Sample(SC, 0, True, True, 400.0, 1.0, nbytes=2**27),
        Sample(SC, 1, False, True, 500.0, 1.0, nbytes=2**27, client_cpu=0.2, server_cpu=0.3, phases=(("tcp", 0.1),)),
        Sample(SC, 2, False, False, None, 1.0, error="Connection reset"),
    ]
    for s in taken:
        store.add_sample(ids[SC.key], s)
    store.add_memory(run_id, [MemoryRecord("openssh", "idle", "listener", 1, 10, 5, None)])
    store.set_status(run_id, RunStatus.COMPLETE)
    loaded = store.load(run_id)
    assert (loaded.run.kind, loaded.run.status, loaded.run.options) == (RunKind.THROUGHPUT, RunStatus.COMPLETE, opts)
    assert loaded.run.environment == ENVIRONMENT and loaded.run.discovery == DISCOVERY
    assert loaded.scenarios[0].samples == tuple(taken) and loaded.scenarios[0].values() == [500.0]
    assert loaded.memory == (MemoryRecord("openssh", "idle", "listener", 1, 10, 5, None),)


def test_a_servers_run_keeps_its_reports(tmp_path: Path) -> None:
    store = Store(tmp_path / "r.db")
    run_id = store.create_run(JobOptions(command=RunKind.SERVERS), "local:openssh local:tinyssh", ENVIRONMENT)
    reports = [ServerReport("openssh", "local:openssh", discovery=DISCOVERY), ServerReport("t", "x", skipped="why")]
    store.set_servers(run_id, reports)
    run = store.run(run_id)
    assert run.servers == tuple(reports) and run.discovery is None


def test_newest_run_by_kind_and_measurement(tmp_path: Path) -> None:
    store = Store(tmp_path / "r.db")
    assert store.latest_run() is None
    first = store.create_run(JobOptions(command=RunKind.RUN), "local", ENVIRONMENT)
    store.add_scenarios(first, [SC])
    servers = store.create_run(JobOptions(command=RunKind.SERVERS), "local:openssh", ENVIRONMENT)
    store.add_scenarios(servers, [SC])
    latency_only = store.create_run(JobOptions(command=RunKind.LATENCY), "local", ENVIRONMENT)
    store.add_scenarios(latency_only, [Scenario(Kind.LATENCY)])
    assert store.latest_run() == latency_only
    assert store.latest_run([k for k in RunKind if k.recommends], Kind.THROUGHPUT) == first


def test_runs_of_older_versions_still_load(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    Store(path).close()
    with sqlite3.connect(path) as db:  # a run as session 1 stored it: options of that time, no newer fields
        db.execute(
            "INSERT INTO runs (started_at, updated_at, status, command, target, options, environment)"
            " VALUES ('2026-11-01', '2026-11-01', 'interrupted', 'run', 'local', ?, ?)",
            ('{"command": "run", "plan": {"warmup": 1, "min_rounds": 6}}', '{"cpu_model": "x"}'),
        )
    run = Store(path).run(1)
    assert run.status is RunStatus.INTERRUPTED and run.options.plan.min_rounds == 6 and run.environment.cpu_model == "x"


def test_many_processes_opening_one_new_database_at_once_all_succeed(tmp_path: Path) -> None:
    import subprocess
    import sys

    db = tmp_path / "new.db"
    go = tmp_path / "go"
    code = (
        "import os, sys, time\nfrom pathlib import Path\nfrom sshbench.storage.store import Store\n"
        "while not Path(sys.argv[2]).exists(): time.sleep(0.001)\n"
        "Store(Path(sys.argv[1])).close()\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(db), str(go)], stderr=subprocess.PIPE, text=True)
        for _ in range(16)
    ]
    go.touch()  # all sixteen start creating the schema at the same moment
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(SCHEMA_VERSION)


def test_a_fleet_loads_with_its_hosts_runs_and_hides_them_from_the_history(tmp_path: Path) -> None:
    store = Store(tmp_path / "r.db")
    fleet_id = store.create_run(JobOptions(command=RunKind.FLEET), "hosts file h.txt", ENVIRONMENT)
    host_id = store.create_run(JobOptions(command=RunKind.RUN, target="web1"), "web1", ENVIRONMENT, parent=fleet_id)
    sc = Scenario(Kind.LATENCY, kex="curve25519-sha256", hostkey="ssh-ed25519")
    ids = store.add_scenarios(host_id, [sc])
    store.add_sample(ids[sc.key], Sample(sc, 1, False, True, 0.1, 0.1))
    store.set_fleet(
        fleet_id,
        Fleet("hosts file h.txt", (FleetHost("web1", "web1", run=host_id), FleetHost("db1", "db1", failure="refused"))),
    )
    loaded = store.load(fleet_id)
    assert [h.name for h, _ in loaded.hosts] == ["web1", "db1"] and loaded.hosts[1][1] is None
    assert [st.scenario.server for st in loaded.scenarios] == ["web1"]  # named by its host
    assert loaded.scenarios[0].samples[0].scenario.server == "web1"
    assert [(r.id, n) for r, n in store.runs()] == [(fleet_id, 1)]  # the fleet counts its hosts' samples
    assert {r.id for r, _ in store.runs(hosts=True)} == {fleet_id, host_id}
    assert store.latest_run() == fleet_id and store.run(host_id).parent == fleet_id


def test_a_schema_4_database_reads_without_fleets_and_migrates_when_written(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    store = Store(path)
    run_id = store.create_run(JobOptions(command=RunKind.RUN), "local", ENVIRONMENT)
    store.close()
    with sqlite3.connect(path) as con:
        con.execute("ALTER TABLE runs DROP COLUMN parent")
        con.execute("UPDATE meta SET value='4' WHERE key='schema_version'")
    reader = Store(path, read_only=True)
    assert reader.latest_run() == run_id and [r.id for r, _ in reader.runs()] == [run_id]
    assert reader.run(run_id).parent is None
    Store(path).close()
    with sqlite3.connect(path) as con:
        assert "parent" in {r[1] for r in con.execute("PRAGMA table_info(runs)")}


def test_a_schema_7_database_read_before_migrating_has_no_login_cpu(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    store = Store(path)
    run_id = store.create_run(JobOptions(command=RunKind.THROUGHPUT), "local", ENVIRONMENT)
    sc = Scenario(Kind.THROUGHPUT, cipher="aes128-gcm@openssh.com", direction=Direction.DOWN)
    ids = store.add_scenarios(run_id, [sc])
    store.add_sample(
        ids[sc.key],
        Sample(
            sc, 1, False, True, 500.0, 0.5, nbytes=10, client_cpu=0.3, client_cpu_setup=0.07, phases=(("login", 0.2),)
        ),
    )
    store.close()
    with sqlite3.connect(path) as con:
        for column in ("client_cpu_setup", "server_cpu_setup", "wire"):
            con.execute(f"ALTER TABLE samples DROP COLUMN {column}")
        con.execute("UPDATE meta SET value='7' WHERE key='schema_version'")
    (old,) = Store(path, read_only=True).scenarios(run_id)
    assert old.samples[0].client_cpu == 0.3 and old.samples[0].client_cpu_setup is None
    Store(path).close()  # written again: migrated, and the new sample's figure is kept from then on
    (new,) = Store(path, read_only=True).scenarios(run_id)
    assert new.samples[0].client_cpu_setup is None and new.samples[0].wire is None and SCHEMA_VERSION >= 11
