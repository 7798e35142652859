"""Every job's logic on a fake bench (tests/fakes.py): staging, discovery, planning, scheduling and storing run
for real; endpoints, samplers and the environment are fakes, so no server, no root and no connection is needed.
What only real servers can show stays in the integration tests beside these."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from fakes import CHACHA, CTR, FAKE_RATES, GCM, FakeBench, ListProgress, fake_stage
from sshbench import jobs
from sshbench.clients.launch import Detected
from sshbench.clienttypes import client_type
from sshbench.errors import SshbenchError
from sshbench.joboptions import ClientsOptions, FleetOptions, JobOptions, Plan
from sshbench.jobs.clients import Offer, negotiated, plan_client, plan_kex
from sshbench.model import IN_PROCESS, Direction, Kind, Scenario
from sshbench.remedy import Remedy
from sshbench.runkinds import RunKind
from sshbench.samples import RunStatus
from sshbench.storage.store import Store

PLAN = Plan(warmup=1, min_rounds=3, max_rounds=4, ci_target=0.05, max_time=None)


def options(kind: RunKind, **more: object) -> JobOptions:
    """Return a job's options with a short plan."""
    return JobOptions(command=kind, plan=PLAN, **more)  # type: ignore[arg-type]


def run(tmp_path: Path, opts: JobOptions, **stage: object) -> tuple[Store, int, list[int]]:
    """Run a job on a fake bench; return the store, the run id and the ids told to `on_run`."""
    store = Store(tmp_path / "runs.db")
    told: list[int] = []
    job = jobs.Job(store, opts, ListProgress(), on_run=told.append, stage=fake_stage(**stage))  # type: ignore[arg-type]
    return store, jobs.run(job), told


def medians(store: Store, run_id: int) -> dict[str, float]:
    """Return each stored row's median value by label."""
    found = {}
    for st in store.scenarios(run_id):
        values = sorted(st.values())
        found[st.scenario.label] = values[len(values) // 2]
    return found


def _text(remedy: Remedy | None) -> str | None:
    """Return a remedy's stored form (None for none)."""
    return None if remedy is None else remedy.text


@pytest.mark.parametrize("kind", [RunKind.RUN, RunKind.LATENCY, RunKind.THROUGHPUT, RunKind.SWEEP])
def test_single_target_jobs_store_every_row_they_plan(tmp_path: Path, kind: RunKind) -> None:
    latency = kind is not RunKind.THROUGHPUT
    throughput = kind is not RunKind.LATENCY
    opts = options(kind, measure_latency=latency, measure_throughput=throughput)
    store, run_id, told = run(tmp_path, opts)
    record = store.run(run_id)
    assert told == [run_id]
    assert record.status is RunStatus.COMPLETE
    stored = store.scenarios(run_id)
    assert stored and all(len(st.values()) >= PLAN.min_rounds for st in stored)
    kinds = {st.scenario.kind for st in stored}
    assert (Kind.LATENCY in kinds) is latency and (Kind.THROUGHPUT in kinds) is throughput
    if throughput:
        rates = medians(store, run_id)
        assert rates[f"{GCM} down"] == pytest.approx(FAKE_RATES[GCM], rel=0.02)
        assert rates[f"{CHACHA} up"] == pytest.approx(FAKE_RATES[CHACHA], rel=0.02)
    assert record.environment.target == "embedded openssh server 127.0.0.1:1"  # the fake endpoint, described


def test_algos_stores_discovery_and_measures_nothing(tmp_path: Path) -> None:
    store, run_id, _ = run(tmp_path, options(RunKind.ALGOS, measure_latency=False, measure_throughput=False))
    record = store.run(run_id)
    assert record.discovery is not None and record.discovery.default() is not None
    assert store.scenarios(run_id) == []


def test_resume_finishes_the_same_run(tmp_path: Path) -> None:
    opts = options(RunKind.THROUGHPUT, measure_latency=False, measure_throughput=True, ciphers=(GCM,))
    store, first, _ = run(tmp_path, opts)
    store.set_status(first, RunStatus.INTERRUPTED)
    job = jobs.Job(store, opts, ListProgress(), resume=first, stage=fake_stage())
    assert jobs.run(job) == first
    assert store.run(first).status is RunStatus.COMPLETE
    assert len(store.runs(10)) == 1


def test_servers_side_by_side_report_a_missing_server_and_keep_the_order_asked(tmp_path: Path) -> None:
    specs = ("local:openssh", "local:tinyssh", "local:dropbear")
    opts = options(RunKind.SERVERS, measure_latency=True, measure_throughput=True, servers=specs, ciphers=(CHACHA,))
    store, run_id, _ = run(tmp_path, opts, servers_missing=("tinyssh",))
    record = store.run(run_id)
    assert record.status is RunStatus.COMPLETE
    reports = record.servers
    assert [r.name for r in reports] == ["openssh", "tinyssh", "dropbear"]
    assert reports[1].skipped and not reports[0].skipped and reports[0].discovery is not None
    servers = {st.scenario.server for st in store.scenarios(run_id)}
    assert servers == {"openssh", "dropbear"}


def test_tools_copies_every_tool_both_ways(tmp_path: Path) -> None:
    opts = options(RunKind.TOOLS, measure_latency=False, measure_throughput=True, ciphers=(GCM, CTR))
    store, run_id, _ = run(tmp_path, opts)
    record = store.run(run_id)
    assert record.status is RunStatus.COMPLETE
    stored = store.scenarios(run_id)
    assert {st.scenario.tool for st in stored} == {"scp", "sftp", "rsync"}
    assert {st.scenario.direction for st in stored} == set(Direction)
    assert record.environment.tool_versions and record.environment.crypto_ceilings[GCM]["client"] == 2000.0


def test_fleet_measures_reached_hosts_and_records_why_others_were_not(tmp_path: Path) -> None:
    hosts = tmp_path / "hosts.txt"
    hosts.write_text("[web]\nweb-1\nweb-2\n[broken]\nclosed-1\n")
    opts = options(
        RunKind.FLEET,
        measure_latency=True,
        measure_throughput=True,
        target="fleet",
        own=FleetOptions(hosts_file=str(hosts), forks=2),
        ciphers=(GCM,),
    )
    store, run_id, _ = run(tmp_path, opts)
    fleet = store.run(run_id).fleet
    assert fleet is not None
    by_name = {h.name: h for h in fleet.hosts}
    assert by_name["closed-1"].run is None and "cannot resolve" in (by_name["closed-1"].failure or "")
    for name in ("web-1", "web-2"):
        child = by_name[name].run
        assert child is not None and store.run(child).status is RunStatus.COMPLETE
        labels = set(medians(store, child))
        assert f"{GCM} down" in labels and f"{GCM} up" in labels


def test_a_remote_target_refuses_server_limits_before_staging_anything(tmp_path: Path) -> None:
    opts = options(RunKind.LATENCY, measure_latency=True, measure_throughput=False, target="box", server_cpu=0.5)
    with pytest.raises(SshbenchError, match="--server-cpu"):
        run(tmp_path, opts)


def fake_clients(names: tuple[str, ...]) -> Callable[..., Detected]:
    """Return a `detect` that finds OpenSSH, paramiko (no chacha20), libssh (no cipher choice), libssh2, asyncssh and
    Go's x/crypto/ssh, and no dbclient."""
    mac = ("hmac-sha2-256",)
    found = {
        "openssh": Detected(client_type("openssh"), "OpenSSH_9.2p1", (GCM, CHACHA, CTR), mac, path="ssh"),
        "paramiko": Detected(client_type("paramiko"), "paramiko 5.1.0", (CTR, GCM), mac, 0.4, path="py"),
        "libssh": Detected(client_type("libssh"), "libssh 0.12.0", (), (), 0.1, path="py"),
        "libssh2": Detected(client_type("libssh2"), "libssh2 1.11.1", (GCM, CHACHA), (), 0.1, path="py"),
        "asyncssh": Detected(client_type("asyncssh"), "asyncssh 2.24", (GCM, CHACHA), (), 0.4, path="py"),
        "gossh": Detected(client_type("gossh"), "x/crypto/ssh (Go 1.26.8)", (GCM, CHACHA), mac, 0.01, path="go"),
    }
    missing = Detected(client_type("dropbear"), missing="`dbclient` not found: sudo apt-get install dropbear-bin")
    return lambda kind, note=None, ssh=None: found.get(kind.name, missing) if kind.name in names else missing


def test_clients_lists_what_each_client_lacks_and_measures_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = ("openssh", "dropbear", "paramiko", "asyncssh", "libssh", "libssh2", "gossh")
    monkeypatch.setattr("sshbench.jobs.clients.detect", fake_clients(names))
    opts = options(RunKind.CLIENTS, own=ClientsOptions(names))
    store, run_id, _ = run(tmp_path, opts, unverifiable=("libssh2",))
    record = store.run(run_id)
    assert record.status is RunStatus.COMPLETE
    rows = {st.scenario.label: st for st in store.scenarios(run_id)}
    failures = {label: st.failure for label, st in rows.items() if st.failure}
    lacks = "unsupported: paramiko has no chacha20-poly1305@openssh.com"
    assert failures == {
        "dropbear": "unsupported: `dbclient` not found: sudo apt-get install dropbear-bin",
        "libssh2": "unsupported: libssh2 cannot verify the host (fake)",
        "paramiko with chacha20-poly1305@openssh.com down": lacks,
        "paramiko with chacha20-poly1305@openssh.com up": lacks,
    }
    measured = {label for label, st in rows.items() if st.values()}
    assert {"openssh", "paramiko", "paramiko in-process", "libssh in-process", "asyncssh in-process"} <= measured
    assert {
        "paramiko (64 MiB window) with aes128-gcm@openssh.com up",
        "libssh with its own cipher down",
        "libssh with sftp + its own cipher up",
        "openssh with sftp + aes128-gcm@openssh.com down",
        "asyncssh (64 MiB window, 128 requests) with sftp + aes128-gcm@openssh.com down",
    } <= measured
    assert "openssh (its settings) with aes128-gcm@openssh.com down" not in rows  # OpenSSH runs with one setting
    gossh = "gossh (concurrent writes) with"
    assert {"gossh with aes128-gcm@openssh.com up", f"{gossh} sftp + aes128-gcm@openssh.com up"} <= measured
    assert f"{gossh} aes128-gcm@openssh.com up" not in rows  # its second setting is SFTP puts' only
    assert "gossh (concurrent writes) with sftp + aes128-gcm@openssh.com down" not in rows
    assert record.environment.clients["gossh"]["language"] == "Go"
    assert record.environment.clients["paramiko"]["tuned"].startswith("Transport(default_window_size=64 MiB")
    assert "skipped" in record.environment.clients["dropbear"]


def test_a_client_left_with_no_default_cipher_takes_the_first_it_shares() -> None:
    dbclient = Detected(client_type("dropbear"), "Dropbear v2022.83", (CHACHA, CTR), ("hmac-sha2-256",), path="db")
    offer = Offer((CTR, "aes256-ctr"), ("hmac-sha2-256",), no_sftp=None)
    made, na = plan_client(dbclient, (GCM, CHACHA), offer, (Direction.DOWN,), None)
    assert [sc.label for sc in made if sc.kind is Kind.THROUGHPUT] == [
        "dropbear with aes128-ctr + hmac-sha2-256 down",
        "dropbear (-W 2 MiB) with aes128-ctr + hmac-sha2-256 down",
    ]
    assert [why for _, why in na] == [
        "unsupported: the server does not offer it",
        "unsupported: the server does not offer it",
        "unsupported: Dropbear dbclient has no SFTP client",
    ]


def test_a_tuning_is_measured_only_on_the_jobs_it_changes() -> None:
    offer = Offer((GCM,), (), no_sftp=None)
    russh = Detected(client_type("russh"), "russh 0.55.0", (GCM,), (), path="r")
    made, _ = plan_client(russh, (GCM,), offer, (Direction.DOWN, Direction.UP), None)
    labels = [sc.label for sc in made]
    assert labels[:3] == ["russh", "russh (nodelay, 64 MiB window)", "russh in-process"]  # no Nagle: connecting too
    assert "russh (nodelay, 64 MiB window) with sftp + aes128-gcm@openssh.com down" in labels
    gossh = Detected(client_type("gossh"), "x/crypto/ssh", (GCM,), (), path="g")
    made, _ = plan_client(gossh, (GCM,), offer, (Direction.DOWN, Direction.UP), None)
    changed = [sc.label for sc in made if sc.mode == "tuned"]
    assert changed == ["gossh (concurrent writes) with sftp + aes128-gcm@openssh.com up"]


def test_tune_measures_its_defaults_then_the_remedies_of_their_bound_through_the_bench(tmp_path: Path) -> None:
    made: list[FakeBench] = []
    opts = options(RunKind.TUNE, target="local:dropbear", directions=(Direction.UP,))
    store, run_id, _ = run(tmp_path, opts, made=made)
    (bench,) = made
    assert store.run(run_id).status is RunStatus.COMPLETE
    stored = {_text(st.scenario.remedy): st for st in store.scenarios(run_id) if st.scenario.cipher is None}
    # unknown bound (no kernel evidence here): connections at once (at most 5 to Dropbear), its window, logins
    assert set(stored) >= {None, "streams=1", "streams=2", "streams=4", "window=8388608", "master"}
    assert "streams=8" not in stored
    assert all(len(st.values()) >= 3 for st in stored.values())
    wide = [label for name, label, _, _ in bench.taken if name.endswith("(wider window)")]
    assert wide and all("receive window at 8 MiB" in label for label in wide)  # only the window remedy goes there
    assert bench.widened_to == [8 * 2**20]
    assert len(bench.copy_samplers) == 2 and all(c.cleaned for c in bench.copy_samplers)  # each server's copies
    assert bench.masters_stopped == 1


def test_tune_on_a_server_without_a_window_option_starts_no_second_server(tmp_path: Path) -> None:
    made: list[FakeBench] = []
    store, run_id, _ = run(tmp_path, options(RunKind.TUNE, target="local:openssh"), made=made)
    (bench,) = made
    remedies = {_text(st.scenario.remedy) for st in store.scenarios(run_id)}
    assert "streams=8" in remedies and not any((r or "").startswith("window=") for r in remedies)
    assert bench.widened_to == [] and len(bench.copy_samplers) == 1 and bench.copy_samplers[0].cleaned


def test_a_run_stored_before_schema_10_finishes_with_resume(tmp_path: Path) -> None:
    opts = options(RunKind.THROUGHPUT, measure_latency=False, measure_throughput=True, ciphers=(GCM,))
    store, first, _ = run(tmp_path, opts)
    store.set_status(first, RunStatus.INTERRUPTED)
    with sqlite3.connect(tmp_path / "runs.db") as con:  # as schema 9 stored it: options without `ssh`
        (text,) = con.execute("SELECT options FROM runs WHERE id = ?", (first,)).fetchone()
        old = {k: v for k, v in json.loads(text).items() if k != "ssh"}
        con.execute("UPDATE runs SET options = ? WHERE id = ?", (json.dumps(old), first))
        con.execute("UPDATE meta SET value = '9' WHERE key = 'schema_version'")
    store = Store(tmp_path / "runs.db")
    resumed = store.run(first).options
    assert resumed.ssh is None and resumed.ciphers == (GCM,)
    job = jobs.Job(store, resumed, ListProgress(), resume=first, stage=fake_stage())
    assert jobs.run(job) == first and store.run(first).status is RunStatus.COMPLETE


def test_clients_kex_pins_each_client_to_each_kex_it_and_the_server_have_under_its_own_name() -> None:
    """Issue 37, item 1: per kex, a library's logins inside one process, a binary's cold; n/a with the reason."""
    mlkem, curve, libssh_curve = "mlkem768x25519-sha256", "curve25519-sha256", "curve25519-sha256@libssh.org"
    paramiko = Detected(
        client_type("paramiko"),
        "paramiko 5.1.0",
        (GCM,),
        (),
        0.4,
        path="py",
        kexes=(mlkem, libssh_curve),
        kex_default=(mlkem, libssh_curve),
    )
    libssh2 = Detected(
        client_type("libssh2"), "libssh2 1.11.1", (GCM,), (), path="py", kexes=(curve,), kex_default=(curve,)
    )
    dbclient = Detected(client_type("dropbear"), "Dropbear v2022.83", (CHACHA,), (), path="db")
    openssh = Detected(client_type("openssh"), "OpenSSH_9.2p1", (GCM,), (), path="ssh", kexes=(curve,))
    offer = Offer((GCM,), (), None, (mlkem, curve, libssh_curve))
    made, na = plan_kex(paramiko, (mlkem, curve), offer, None)
    assert [(sc.kex, sc.mode) for sc in made] == [(mlkem, IN_PROCESS), (libssh_curve, IN_PROCESS)] and not na
    made, na = plan_kex(libssh2, (mlkem, curve), offer, "openssh")
    assert [sc.kex for sc in made] == [curve]
    row = Scenario(Kind.LATENCY, client="libssh2", mode=IN_PROCESS, kex=mlkem, server="openssh")
    assert na == [(row, f"unsupported: libssh2 1.11.1 has no {mlkem}")]
    made, na = plan_kex(dbclient, (curve,), offer, None)
    assert not made and na[0][1] == "unsupported: Dropbear dbclient cannot choose a key exchange"
    made, na = plan_kex(openssh, (mlkem, curve), Offer((GCM,), (), None, (curve,)), None)
    assert [(sc.kex, sc.mode) for sc in made] == [(curve, None)]  # a binary: cold logins
    assert na[0][1] == f"unsupported: the server does not offer {mlkem}"
    assert (negotiated(paramiko, offer), negotiated(libssh2, offer), negotiated(dbclient, offer)) == (
        mlkem,
        curve,
        None,
    )
