"""Command kinds: one row per kind of run, naming everything that differs by kind, so a new command is one row plus
its modules.

A row names its job (jobs/: measures it), its printer (render/: prints a stored run of it), the parts of its JSON
document and report of its own, the claims it adds, its own options' dataclass (joboptions.py), the command whose
`--resume` finishes it, how long its samples aim to be, and how the reading side treats its rows. Functions are
named as `module:function` and imported when they are needed (as the server registry names its classes), so the
ground knows every layer's entry points without importing a layer above it; `entry` resolves a name.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class RunKind(enum.StrEnum):
    """Which command made a run; its row (`ROWS`) decides how the run is measured, shown and resumed."""

    RUN = "run"
    ALGOS = "algos"
    LATENCY = "latency"
    THROUGHPUT = "throughput"
    SWEEP = "sweep"
    SERVERS = "servers"
    FLEET = "fleet"
    TOOLS = "tools"
    TUNE = "tune"
    CLIENTS = "clients"
    INTEROP = "interop"
    LOAD = "load"
    BURSTS = "bursts"
    SESSIONS = "sessions"

    @property
    def row(self) -> KindRow:
        """Return this kind's row."""
        return ROWS[self]

    @property
    def side_by_side(self) -> bool:
        """Return True for runs of several embedded servers at once (scenarios carry the server name)."""
        return self.row.side_by_side

    @property
    def sweep(self) -> bool:
        """Return True for runs read per dimension (cipher, MAC, kex, host key) with predicted pairs."""
        return self.row.sweep

    @property
    def recommends(self) -> bool:
        """Return True when the run's measurements can back a single target's recommendation (a fleet makes its
        own, for every host at once)."""
        return self.row.recommends

    @property
    def resume_command(self) -> str:
        """Return the command whose `--resume` finishes this kind of run."""
        return (self.row.resumed_by or self).value


SINGLE_JOB = "sshbench.jobs.single:run_job"
SINGLE_PRINTER = "sshbench.render.show:print_single"
SAMPLE_SECONDS = 0.2  # --size auto: short samples; the steady rate excludes the start, so length does not bias it
COPY_SECONDS = 1.0  # a file copy or a library's transfer: long enough for a tool's start and a driver's reads


@dataclass(frozen=True)
class KindRow:
    """Everything that differs by kind of run (functions as `module:function`, "" for none)."""

    job: str = SINGLE_JOB  # (jobs.Job) -> run id
    printer: str = SINGLE_PRINTER  # (Console, StoredRun, db path, discovery only) -> None: prints the whole run
    analysis: str = ""  # (StoredRun) -> dict: its derived results in the JSON document (`analysis`)
    document: str = ""  # (StoredRun) -> dict: a part of the JSON document of its own, under the kind's name
    figures: str = ""  # (StoredRun, id prefix) -> list[Figure]: report charts of its own
    figures_after: str = ""  # the same, after the sockets over time (what they explain)
    own_charts_only: bool = False  # its charts replace the shared ones (which would misread its rows)
    claims: str = ""  # (RunRecord, groups) -> list[Claim]: claims of its own, after the shared ones
    claims_title: str = ""  # the report's title for them
    options: str = ""  # "module:Class" of its own options (stored flat with the shared ones)
    resumed_by: RunKind | None = None  # the command whose --resume finishes it (None: its own)
    sample_seconds: float = SAMPLE_SECONDS  # what `--size auto` aims a sample at
    side_by_side: bool = False  # several servers at once: scenarios carry the server's name
    sweep: bool = False  # read per dimension, with predicted pairs
    recommends: bool = True  # its rows can back one target's recommendation
    fastest: bool = True  # "fastest here" is said of its rows
    bounds: str = "judged"  # what bounds its rates: judged, "own" (its section judges them), or why it is not judged
    own_findings: bool = False  # its own section reads its rows (bounds, fastest, what was left unfinished)
    timed: str = ""  # replaces "handshake excluded" in its result tables' titles, where its rows are timed otherwise
    shell_csv: bool = True  # the shell scripts' CSV files describe its rows (ssh's algorithms)
    counts_failures: bool = False  # a failed sample is data, not a sample to take again (an interop soak's login)
    failed_in: str = "pairs"  # what its rows are called when logins failed in them (exit 12)
    failed_fix: str = "each failing pair is listed above with the client's words and the command that reproduces it"
    across: str = ""  # (its runs in one report, two or more) -> list[Figure]: charts comparing them
    merges: bool = False  # `import --merge` joins its runs of several generator hosts (their steps started together)
    hosts: bool = False  # may load a host of the user's (`load HOST --max-rate N`), not only an embedded server
    listener_cpu: bool = False  # without a cgroup, the server's CPU is its listener's and reaped children's (/proc)

    @property
    def judged(self) -> bool:
        """Return True when what bounds its rates is judged (by the shared claims or its own section)."""
        return self.bounds in ("judged", "own")


NOT_JUDGED = (
    "What bounds each client's rate is not judged: a library's rate is mostly its own work (its CPU s/GiB), "
    "which the bounds do not model."
)
LOAD_ROW = KindRow(  # `load`: rate steps (login or exec); bursts and sessions held are rows made from it
    job="sshbench.jobs.load:run_load",
    printer="sshbench.render.load:print_load_run",
    document="sshbench.render.load:load_document",
    figures="sshbench.render.loadcharts:load_figures",
    own_charts_only=True,
    options="sshbench.joboptions:LoadOptions",
    recommends=False,
    fastest=False,
    bounds="What bounds a login under load is said with the knee: a limit the server's log named, the server's "
    "CPU, or the generator.",
    shell_csv=False,
    counts_failures=True,
    failed_in="steps",
    failed_fix="the causes are listed above, from the server's log where it names them (a login failing under "
    "load is a result: the exit status says that some did)",
    merges=True,
    hosts=True,
    listener_cpu=True,
)
ROWS: dict[RunKind, KindRow] = {
    RunKind.RUN: KindRow(),
    RunKind.ALGOS: KindRow(resumed_by=RunKind.RUN),
    RunKind.LATENCY: KindRow(),
    RunKind.THROUGHPUT: KindRow(),
    RunKind.SWEEP: KindRow(
        printer="sshbench.render.show:print_sweep_run",
        analysis="sshbench.render.export:sweep_document",
        figures="sshbench.render.report:dimension_figures",
        sweep=True,
        fastest=False,
    ),
    RunKind.SERVERS: KindRow(
        job="sshbench.jobs.servers:run_servers",
        printer="sshbench.render.show:print_side_by_side",
        side_by_side=True,
        recommends=False,
        fastest=False,
    ),
    RunKind.FLEET: KindRow(
        job="sshbench.jobs.fleet:run_fleet",
        printer="sshbench.render.fleet:print_fleet_run",
        analysis="sshbench.render.export:fleet_document",
        options="sshbench.joboptions:FleetOptions",
        recommends=False,
    ),
    RunKind.TOOLS: KindRow(
        job="sshbench.jobs.tools:run_tools",
        printer="sshbench.render.show:print_tools_run",
        analysis="sshbench.render.export:tools_document",
        figures="sshbench.render.report:efficiency_figures",
        claims="sshbench.analyse.claims.collect:tools_claims",
        claims_title="Baselines",
        options="sshbench.joboptions:ToolsOptions",
        sample_seconds=COPY_SECONDS,
        recommends=False,
    ),
    RunKind.TUNE: KindRow(
        job="sshbench.jobs.tune:tune_job",
        printer="sshbench.render.show:print_tune_run",
        document="sshbench.render.export:tune_document",
        figures_after="sshbench.render.report:remedy_figures",
        recommends=False,
        bounds="own",
        own_findings=True,
        timed="handshake excluded for your default's steady rate, included for each copy of one or N connections "
        "(timed from spawn to exit)",
    ),
    RunKind.CLIENTS: KindRow(
        job="sshbench.jobs.clients:run_clients",
        printer="sshbench.render.show:print_clients_run",
        options="sshbench.joboptions:ClientsOptions",
        sample_seconds=COPY_SECONDS,
        recommends=False,
        bounds=NOT_JUDGED,
        shell_csv=False,
    ),
    RunKind.INTEROP: KindRow(
        job="sshbench.jobs.interop:run_interop",
        printer="sshbench.render.interop:print_interop_run",
        document="sshbench.render.interop:interop_document",
        options="sshbench.joboptions:ClientsOptions",
        recommends=False,
        fastest=False,
        bounds="What bounds a login is not judged: a soak counts failed logins and ranks nothing.",
        shell_csv=False,
        counts_failures=True,
    ),
    RunKind.LOAD: LOAD_ROW,
    RunKind.BURSTS: dataclasses.replace(
        LOAD_ROW,
        job="sshbench.jobs.bursts:run_bursts",
        printer="sshbench.render.bursts:print_bursts_run",
        document="sshbench.render.bursts:bursts_document",
        figures="sshbench.render.loadcharts:burst_figures",
        bounds="What bounds a burst is said per setting: the connections dropped, by the cause the server's log "
        "names (OpenSSH: MaxStartups, PerSourcePenalties).",
        failed_in="burst settings",
        resumed_by=RunKind.LOAD,
        merges=False,
        hosts=False,
    ),
    RunKind.SESSIONS: dataclasses.replace(
        LOAD_ROW,
        job="sshbench.jobs.sessions:run_sessions",
        printer="sshbench.render.sessions:print_sessions_run",
        document="sshbench.render.sessions:sessions_document",
        figures="sshbench.render.loadcharts:session_figures",
        across="sshbench.render.loadcharts:sessions_across",
        bounds="Sessions held bound no rate: each step reads the server's memory per session and its CPU at rest.",
        failed_in="steps of sessions held",
        resumed_by=RunKind.LOAD,
        merges=False,
        hosts=False,
    ),
}


def entry(name: str) -> Callable[..., Any]:
    """Return the function (or class) a row names as `module:function`."""
    module, _, attribute = name.partition(":")
    found: Callable[..., Any] = getattr(importlib.import_module(module), attribute)
    return found
