"""The data model: a Metric per Kind decides units, order and labels; run kinds; job options round trip."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sshbench.joboptions import ClientsOptions, FleetOptions, JobOptions, LoadOptions, Plan, ToolsOptions
from sshbench.loadsteps import StepKey
from sshbench.model import METRICS, Direction, Kind, Scenario
from sshbench.runkinds import ROWS, RunKind, entry

LAT = Scenario(Kind.LATENCY, kex="curve25519-sha256", hostkey="ssh-ed25519")
THR = Scenario(Kind.THROUGHPUT, kex="curve25519-sha256", cipher="aes128-ctr", mac="hmac-sha1", direction=Direction.UP)


def test_every_kind_has_a_metric() -> None:
    assert set(METRICS) == set(Kind)
    for kind, metric in METRICS.items():
        assert metric.kind is kind and metric.groups and metric.labels.fields


def test_metrics_format_order_and_group() -> None:
    lat, thr = LAT.metric, THR.metric
    assert (lat.format(0.1234), lat.unit, lat.stored_unit) == ("123.4", "ms", "s")
    assert (thr.format(987.6), thr.unit, thr.stored_unit) == ("988", "MB/s", "MB/s")
    assert lat.better(0.1, 0.2) and thr.better(200.0, 100.0)
    assert lat.group(LAT).name == "latency" and thr.group(THR).name == "upload"


def test_labels_come_from_the_metric() -> None:
    assert LAT.label == "curve25519-sha256 / ssh-ed25519"
    assert Scenario(Kind.LATENCY).label == "default kex / default host key"
    assert THR.label == "aes128-ctr + hmac-sha1 up"
    on_dropbear = Scenario(Kind.THROUGHPUT, cipher="x", direction=Direction.DOWN, server="dropbear")
    assert on_dropbear.label == "dropbear: x down"
    assert THR.metric.labels.cells(Scenario(Kind.THROUGHPUT, cipher="chacha20-poly1305@openssh.com")) == [
        "chacha20-poly1305@openssh.com",
        "(AEAD)",
    ]


def test_match_key_ignores_untimed_fields_only() -> None:
    other_kex = Scenario(Kind.THROUGHPUT, cipher="aes128-ctr", mac="hmac-sha1", direction=Direction.UP)
    assert THR.match_key() == other_kex.match_key()  # the kex before a transfer is not timed
    assert LAT.match_key() != Scenario(Kind.LATENCY, kex="sntrup", hostkey="ssh-ed25519").match_key()


def test_scenario_round_trip_and_key() -> None:
    assert Scenario.from_dict(THR.to_dict()) == THR
    assert THR.key == "throughput kex=curve25519-sha256 cipher=aes128-ctr mac=hmac-sha1 direction=up"


def test_run_kinds() -> None:
    assert [k for k in RunKind if k.side_by_side] == [RunKind.SERVERS]
    not_recommending = [
        RunKind.SERVERS,
        RunKind.FLEET,
        RunKind.TOOLS,
        RunKind.TUNE,
        RunKind.CLIENTS,
        RunKind.INTEROP,
        RunKind.LOAD,
        RunKind.BURSTS,
        RunKind.SESSIONS,
    ]
    assert [k for k in RunKind if not k.recommends] == not_recommending
    kinds = {"run", "latency", "throughput", "sweep", "servers", "fleet", "tools", "tune", "clients", "interop", "load"}
    failures_are_data = [RunKind.INTEROP, RunKind.LOAD, RunKind.BURSTS, RunKind.SESSIONS]  # a failed login is data
    assert [k for k in RunKind if k.row.counts_failures] == failures_are_data
    assert [k for k in RunKind if k.row.merges] == [RunKind.LOAD]  # import --merge: rate steps only
    assert {k.resume_command for k in RunKind} == kinds
    assert RunKind.LATENCY.resume_command == "latency" and RunKind.ALGOS.resume_command == "run"
    assert RunKind.SWEEP.sweep


def test_job_options_round_trip_through_json() -> None:
    opts = JobOptions(
        command=RunKind.SWEEP,
        ciphers=("aes128-ctr",),
        directions=(Direction.UP,),
        plan=Plan(min_rounds=3, max_time=60.0),
        pin=True,
    )
    assert JobOptions.from_dict(json.loads(json.dumps(opts.to_dict()))) == opts


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        ({}, JobOptions(command=RunKind.RUN)),
        ({"plan": {"ci_target": 0.1}, "policy": None}, JobOptions(RunKind.RUN, plan=Plan(ci_target=0.1))),
        ({"command": "servers", "colour": "red", "emulate": None}, JobOptions(command=RunKind.SERVERS)),
    ],
)
def test_job_options_from_older_or_partial_runs(stored: dict[str, object], expected: JobOptions) -> None:
    assert JobOptions.from_dict(stored) == expected


def test_every_run_kind_has_a_row_whose_entries_resolve() -> None:
    assert set(ROWS) == set(RunKind)
    for kind, row in ROWS.items():
        names = (
            row.job,
            row.printer,
            row.analysis,
            row.document,
            row.figures,
            row.figures_after,
            row.claims,
            row.options,
        )
        for name in filter(None, names):
            assert callable(entry(name)), f"{kind}: {name}"
        assert row.sample_seconds > 0 and (row.bounds in ("judged", "own") or row.bounds.endswith("."))


STORED_ORDER = [  # how runs have stored their options (schema 6-9): documents and older runs keep reading so
    "command",
    "target",
    "ssh_config",
    "measure_latency",
    "measure_throughput",
    "kex",
    "hostkeys",
    "ciphers",
    "macs",
    "mac_mode",
    "full_latency",
    "directions",
    "size",
    "sample_seconds",
    "payload",
    "plan",
    "servers",
    "emulate",
    "server_cpu",
    "client_cpu",
    "link",
    "policy",
    "pin",
    "kernel_evidence",
    "inventory",
    "limit",
    "hosts",
    "hosts_file",
    "forks",
    "tools",
    "margin",
    "clients",
    "rates",  # `load`'s, since issue 38
    "arrivals",
    "step_time",
    "generator",
    "sources",
    "slo",
    "burst",  # `load --burst`'s, since issue 38's second slice
    "repeats",
    "server_options",
    "job",  # `load --job exec`'s
    "up",
    "down",
    "max_rate",  # `load HOST --max-rate`'s (issue 39)
    "sessions",  # `load --job session`'s (issue 39)
    "start_at",  # `load --start-at`'s and a merged run's generators (issue 39)
    "generators",
    "precision",  # `load --precision`'s (issue 56): stored runs before it read as 0 (no bisection)
]


@pytest.mark.parametrize(
    "opts",
    [
        JobOptions(RunKind.FLEET, own=FleetOptions(inventory="hosts.ini", limit="web", forks=2)),
        JobOptions(RunKind.TOOLS, own=ToolsOptions(("scp", "rsync"))),
        JobOptions(RunKind.CLIENTS, own=ClientsOptions(("openssh", "paramiko")), ssh="/opt/openssh/bin/ssh"),
        JobOptions(RunKind.RUN),
        JobOptions(RunKind.RUN, own=FleetOptions(inventory="hosts.ini")),  # a fleet's host run carries the fleet's
        JobOptions(RunKind.LOAD, own=LoadOptions((10.0, 20.0), "poisson", 5.0, "openssh", 4, 0.5)),
        JobOptions(RunKind.BURSTS, own=LoadOptions((), burst=60, repeats=7, server_options=("MaxStartups=10:30:60",))),
        JobOptions(RunKind.SESSIONS, own=LoadOptions((), job="session", sessions=(1, 10, 100))),
        JobOptions(RunKind.LOAD, own=LoadOptions((10.0,), start_at=1796220000.0, generators=2)),
    ],
)
def test_a_commands_own_options_are_stored_flat_where_runs_always_stored_them(opts: JobOptions) -> None:
    stored = opts.to_dict()
    assert [k for k in stored if k != "ssh"] == STORED_ORDER and ("ssh" in stored) == (opts.ssh is not None)
    back = JobOptions.from_dict(json.loads(json.dumps(stored)))
    assert back.own_as(FleetOptions) == opts.own_as(FleetOptions) and back.ssh == opts.ssh
    assert back.own_as(ToolsOptions) == opts.own_as(ToolsOptions)
    assert back.own_as(ClientsOptions) == opts.own_as(ClientsOptions)
    assert back.own_as(LoadOptions) == opts.own_as(LoadOptions) and back.command is opts.command


@pytest.mark.parametrize(
    ("own", "kind"),
    [
        (LoadOptions((10.0,)), RunKind.LOAD),
        (LoadOptions((10.0,), job="exec", up=1024, down=1024), RunKind.LOAD),
        (LoadOptions((), burst=60), RunKind.BURSTS),
        (LoadOptions((), job="session", sessions=(1, 10)), RunKind.SESSIONS),
    ],
)
def test_a_load_run_stored_before_schema_12_reads_as_the_kind_it_is_today(own: LoadOptions, kind: RunKind) -> None:
    stored = JobOptions(RunKind.LOAD, own=own).to_dict()  # bursts and sessions were `load` runs, so stored
    assert stored["command"] == "load"
    back = JobOptions.from_dict(stored, "load")
    assert back.command is kind and back.own_as(LoadOptions) == own
    assert back.command.resume_command == "load"  # `load --resume` finishes all three


@given(
    st.one_of(
        st.floats(min_value=0.01, max_value=1e5, allow_nan=False).map(StepKey.rate),
        st.integers(min_value=1, max_value=10**6).map(StepKey.burst),
        st.integers(min_value=1, max_value=10**6).map(StepKey.sessions),
    )
)
def test_a_load_step_is_one_key_whose_text_parses_back(key: StepKey) -> None:
    sc = Scenario(Kind.LATENCY, kex="curve25519-sha256", load=key)
    assert StepKey.parse(key.text) == StepKey.parse(str(key))
    back = Scenario.from_dict(json.loads(json.dumps(sc.to_dict())))
    assert back.load is not None and back.load.kind is key.kind and back.load.text == key.text
    assert sc.key.endswith(f"load={key.text}")


def test_a_load_steps_stored_text_is_as_before() -> None:
    assert [StepKey.rate(20).text, StepKey.rate(2.5).text] == ["20/s", "2.5/s"]
    assert [StepKey.burst(60).text, StepKey.sessions(100).text] == ["burst 60", "100 sessions"]
    with pytest.raises(ValueError, match="not a load step"):
        StepKey.parse("twenty")
