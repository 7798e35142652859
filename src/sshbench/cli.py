"""The command line: parse options, call the job, render what was stored. `main` is the error boundary."""

from __future__ import annotations

import json
import signal
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from sshbench import __version__, analysis, policy
from sshbench.compare import Change, environment_differences, parse_fail_if, regressions
from sshbench.compare import compare as compare_runs
from sshbench.emulation import EMULATIONS
from sshbench.errors import ExitCode, SshbenchError, Terminated
from sshbench.export import run_document, to_csv, to_json, to_shell_csv
from sshbench.job import JobOptions, run_job
from sshbench.model import Direction, Plan
from sshbench.options import parse_duration, parse_list, parse_percent, parse_size
from sshbench.render import (
    print_discovery,
    print_environment,
    print_history,
    print_negotiation,
    print_results,
)
from sshbench.render_compare import print_compare
from sshbench.render_servers import print_servers
from sshbench.render_sweep import (
    latency_dimension_table,
    print_recommendation,
    top_table,
    transfer_dimension_table,
)
from sshbench.serverjob import run_servers
from sshbench.servers import KNOWN
from sshbench.snippets import valid_host
from sshbench.store import RunRecord, Store, StoredScenario, default_db_path

STATE: dict[str, Any] = {"run_id": None, "db": None, "traceback": False}
out = Console()
err = Console(stderr=True)


class RichProgress:
    """Progress bar on stderr: what is measured, round i of n, elapsed and ETA."""

    def __init__(self) -> None:
        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=err,
            transient=True,
        )
        self.task = self.bar.add_task("starting", total=None)

    def update(self, description: str, done: int, total: int) -> None:
        """Show the current scenario and progress."""
        self.bar.update(self.task, description=description, completed=done, total=max(total, 1))

    def __enter__(self) -> RichProgress:
        self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.stop()


def db_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """Add --db and --json to a command."""
    f = click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout instead of tables.")(f)
    return click.option(
        "--db",
        type=click.Path(dir_okay=False, path_type=Path),
        envvar="SSHBENCH_DB",
        help="Results database [default: $XDG_DATA_HOME/sshbench/sshbench.db].",
    )(f)


def ssh_config_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """Add --ssh-config (ssh -F) for remote targets."""
    return click.option(
        "--ssh-config",
        type=click.Path(exists=True, dir_okay=False),
        help="ssh_config file for a remote TARGET (ssh -F) [default: ~/.ssh/config].",
    )(f)


def _apply(
    f: Callable[..., Any], decorators: list[Callable[[Callable[..., Any]], Callable[..., Any]]]
) -> Callable[..., Any]:
    """Apply decorators so that options appear in --help in the order listed."""
    for decorator in reversed(decorators):
        f = decorator(f)
    return f


def sampling_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Add the transfer and sampling options shared by every measuring command."""
    return _apply(
        f,
        [
            click.option("--direction", type=click.Choice(["both", "down", "up"]), default="both", show_default=True),
            click.option(
                "--size",
                default="auto",
                show_default=True,
                help="Bytes per transfer (512M, 1G) or auto (about 1 s per sample).",
            ),
            click.option("--payload", type=click.Choice(["zero", "random"]), default="zero", show_default=True),
            click.option(
                "--warmup",
                default=1,
                show_default=True,
                type=click.IntRange(0, 10),
                help="Warm-up samples per scenario (discarded; calibrates --size auto).",
            ),
            click.option(
                "--rounds",
                default=6,
                show_default=True,
                type=click.IntRange(1, 1000),
                help="Minimum interleaved rounds per scenario.",
            ),
            click.option(
                "--max-rounds",
                default=20,
                show_default=True,
                type=click.IntRange(1, 1000),
                help="Stop adding rounds here even if the CI target is not reached.",
            ),
            click.option(
                "--ci",
                "ci",
                default="5%",
                show_default=True,
                help="Adaptive stopping: target half-width of the median's 95% CI.",
            ),
            click.option("--max-time", help="Time budget for the measurement, e.g. 90s, 5m (default: none)."),
            click.option(
                "--pin/--no-pin",
                default=None,
                help="Embedded servers: run the ssh client on one CPU and the server on another (less noise, "
                "like two hosts) [default: on for sweep, off otherwise].",
            ),
            click.option(
                "--emulate",
                type=click.Choice(sorted(EMULATIONS)),
                help="Emulate hardware: no-aesni masks AES-NI/PCLMUL from OpenSSL in ssh and the embedded "
                "OpenSSH server (recorded with the run, with `openssl speed` evidence).",
            ),
        ],
    )


def measure_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Add the options shared by measuring commands."""
    return _apply(
        f,
        [
            click.argument("target", default="local", metavar="[TARGET]"),
            ssh_config_option,
            click.option("--kex", help="Key exchanges to measure, comma-separated [default: all shared]."),
            click.option("--hostkey", help="Host-key algorithms to measure [default: all shared]."),
            click.option("--cipher", help="Ciphers to measure [default: all shared]."),
            click.option("--mac", help="MACs to measure with every non-AEAD cipher [default: see --macs]."),
            click.option(
                "--macs",
                "mac_mode",
                type=click.Choice(["default", "each", "all"]),
                help="default: each cipher with the default MAC; each: also every MAC once with "
                "aes128-ctr; all: every non-AEAD cipher x every MAC.",
            ),
            click.option("--full", is_flag=True, help="Latency: every kex x every host key (default for `latency`)."),
            sampling_options,
        ],
    )


def build_options(command: str, kw: dict[str, Any], latency: bool, throughput: bool) -> JobOptions:
    """Turn validated CLI values into JobOptions."""
    rounds, max_rounds = kw["rounds"], max(kw["max_rounds"], kw["rounds"])
    plan = Plan(
        warmup=kw["warmup"],
        min_rounds=rounds,
        max_rounds=max_rounds,
        ci_target=parse_percent(kw["ci"]),
        max_time=parse_duration(kw["max_time"]) if kw["max_time"] else None,
    )
    directions = {"both": (Direction.DOWN, Direction.UP), "down": (Direction.DOWN,), "up": (Direction.UP,)}
    return JobOptions(
        command=command,
        target=kw.get("target", "local"),
        ssh_config=kw.get("ssh_config"),
        measure_latency=latency,
        measure_throughput=throughput,
        kex=parse_list(kw.get("kex")),
        hostkeys=parse_list(kw.get("hostkey")),
        ciphers=parse_list(kw.get("cipher")),
        macs=parse_list(kw.get("mac")),
        mac_mode=kw.get("mac_mode") or ("each" if command == "throughput" else "default"),
        full_latency=kw.get("full", False) or command == "latency",
        directions=directions[kw["direction"]],
        size=parse_size(kw["size"]),
        payload=kw["payload"],
        plan=plan,
        servers=tuple(kw.get("servers") or ()),
        emulate=kw.get("emulate"),
        policy=kw.get("policy") or "modern",
        sample_seconds=kw.get("sample_seconds", 1.0),
        pin=bool(kw.get("pin")),
    )


def open_store(db: Path | None) -> Store:
    """Open the results database and remember where it is for error messages."""
    store = Store(db or default_db_path())
    STATE["db"] = store.path
    return store


def execute(opts: JobOptions, db: Path | None, as_json: bool, resume: int | None = None) -> None:
    """Run a job with a progress bar, then print what was stored."""
    store = open_store(db)
    if resume is not None:
        STATE["run_id"] = resume
    job = run_servers if opts.command == "servers" else run_job
    with RichProgress() as progress:
        run_id = job(store, opts, progress, resume=resume, on_run=lambda rid: STATE.update(run_id=rid))
    show_run(store, run_id, as_json, discovery_only=not (opts.measure_latency or opts.measure_throughput))
    stored = store.scenarios(run_id)
    if stored and not any(s.ok for st in stored for s in st.samples):
        reasons = sorted({st.failure for st in stored if st.failure})
        unsupported = all(r.startswith("unsupported") for r in reasons)
        raise SshbenchError(
            "nothing could be measured: " + "; ".join(reasons[:3]),
            place=f"run {run_id}",
            fix="choose algorithms the server supports (see `sshbench algos` or the table above)",
            code=ExitCode.UNSUPPORTED_ALGORITHM if unsupported else ExitCode.MEASUREMENT_FAILED,
        )


def show_sweep(run: RunRecord, stored: list[StoredScenario], top: int = 10) -> None:
    """Print a sweep: per-dimension aggregates, top combinations, recommendation under the run's policy."""
    pol = policy.resolve(run.options.get("policy") or "modern")
    full = bool(run.options.get("full_latency"))
    dims = analysis.dimensions(stored, full)
    for kind in ("kex", "hostkey"):
        if any(r.kind == kind for r in dims):
            out.print(latency_dimension_table(dims, kind, pol))
    for kind in ("cipher", "mac"):
        if any(r.kind == kind for r in dims):
            out.print(transfer_dimension_table(dims, kind, pol))
    combos = analysis.combinations(stored)
    if combos:
        out.print(top_table(combos, pol, top))
    rec = analysis.recommend(stored, run.discovery, pol, full)
    print_recommendation(out, rec, _host_for(run), f"run {run.id}, {run.started_at[:10]}")
    if run.status != "complete":
        out.print(f"[yellow]Run {run.id} is {run.status}[/]: finish it with `sshbench sweep --resume {run.id}`")


def _host_for(run: RunRecord) -> str:
    """Return the Host pattern for snippets: the remote target, or a placeholder for the embedded server."""
    target = run.target
    if target == "local" or target.startswith("local:") or not valid_host(target):
        return "your-server"
    return target


def show_run(store: Store, run_id: int, as_json: bool, discovery_only: bool = False) -> None:
    """Print a stored run as tables or JSON."""
    run, stored = store.run(run_id), store.scenarios(run_id)
    if as_json:
        document = run_document(run, stored, store.memory(run_id), store.analysis(run_id))
        click.echo(json.dumps(document, indent=2))
        return
    print_environment(out, run)
    if run.command == "servers":
        print_servers(out, run, stored, store.memory(run_id))
        out.print(f"Stored as run {run.id} in {store.path}", highlight=False, style="dim")
        return
    if run.command == "sweep":
        if run.discovery:
            print_negotiation(out, run.discovery)
        show_sweep(run, stored)
        out.print(f"Stored as run {run.id} in {store.path}", highlight=False, style="dim")
        return
    if run.discovery:
        if discovery_only:
            print_discovery(out, run.discovery)
        else:
            print_negotiation(out, run.discovery)
    print_results(out, run, stored)
    out.print(f"Stored as run {run.id} in {store.path}", highlight=False, style="dim")


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="sshbench")
@click.option("--traceback", is_flag=True, help="Show Python tracebacks on errors (for bug reports).")
@click.pass_context
def cli(ctx: click.Context, traceback: bool) -> None:
    """Measure which SSH cipher, MAC, key exchange and server is fastest here, and what it costs.

    With no command, `sshbench` runs the main job (`sshbench run`) against a private, throw-away
    OpenSSH server on 127.0.0.1. TARGET can instead be any ssh destination or ~/.ssh/config alias
    (user@host, host:port, alias): your own keys, agent and host-key checking are used.

    \b
    Examples:
      sshbench                          discovery, latency and throughput on the embedded server
      sshbench algos myserver           what client and server offer and negotiate, with ratings
      sshbench latency --kex curve25519-sha256,sntrup761x25519-sha512@openssh.com
      sshbench throughput --cipher aes128-gcm@openssh.com,chacha20-poly1305@openssh.com
      sshbench history; sshbench show 3; sshbench export 3 --format csv
    """
    STATE["traceback"] = traceback
    if ctx.invoked_subcommand is None:
        ctx.invoke(run_cmd)


@cli.command("run")
@measure_options
@db_option
@click.option("--resume", type=int, metavar="RUN", help="Finish an interrupted run (same target and options).")
def run_cmd(**kw: Any) -> None:
    """Discovery, then connection latency, then throughput, then a ranked summary.

    Latency is measured per key exchange (with the default host key) and per host key (with the
    default key exchange); throughput per cipher in both directions. Every sample is stored as it
    is taken; Ctrl-C keeps them and `--resume RUN` completes the run.
    """
    kw = {**_defaults(run_cmd), **kw}
    if kw["resume"] is not None:
        resume_run(kw["resume"], kw["db"], kw["as_json"])
        return
    execute(build_options("run", kw, True, True), kw["db"], kw["as_json"])


def resume_run(run_id: int, db: Path | None, as_json: bool) -> None:
    """Finish an interrupted run of any measuring command with its stored options."""
    store = open_store(db)
    record = store.run(run_id)
    if record.status == "complete":
        raise SshbenchError(
            f"run {record.id} is already complete",
            place="--resume",
            fix=f"see it with `sshbench show {record.id}`",
            code=ExitCode.USAGE,
        )
    execute(JobOptions.from_dict(record.options), db, as_json, resume=record.id)


def _defaults(command: click.Command) -> dict[str, Any]:
    """Return a command's option defaults (used when `sshbench` runs `run` with no arguments)."""
    ctx = click.Context(command)
    return {p.name: p.get_default(ctx) for p in command.params if p.name}


@cli.command("algos")
@click.argument("target", default="local", metavar="[TARGET]")
@ssh_config_option
@db_option
def algos_cmd(target: str, db: Path | None, as_json: bool, ssh_config: str | None) -> None:
    """What the client offers, what the server offers (its KEXINIT, no login), what they negotiate.

    Each algorithm is rated with ssh-audit's database; "ok, not post-quantum" is kept apart from
    real weaknesses. The default and a strict profile (chacha20-poly1305 / ssh-ed25519 /
    curve25519-sha256) are tried; a server that rejects one shows "fails to connect" and why.
    """
    opts = JobOptions(
        command="algos", target=target, ssh_config=ssh_config, measure_latency=False, measure_throughput=False
    )
    execute(opts, db, as_json)


@cli.command("latency")
@measure_options
@db_option
def latency_cmd(**kw: Any) -> None:
    """Connection time per key exchange x host key, with a phase breakdown.

    A sample is one `ssh TARGET true`: spawn, TCP connect, version exchange, key exchange,
    authentication, session and exit, each phase timed from ssh's own -v lines as they arrive.
    """
    execute(build_options("latency", kw, True, False), kw["db"], kw["as_json"])


@cli.command("throughput")
@measure_options
@db_option
def throughput_cmd(**kw: Any) -> None:
    """MB/s per cipher (and per MAC for non-AEAD ciphers), download and upload.

    Compression and connection sharing are off; the handshake is excluded from the rate; the byte
    count is verified (a short transfer is a failed sample). Bytes flow between the real binaries:
    remote `head -c N /dev/zero` into /dev/null, or a local file into remote `wc -c`.
    """
    execute(build_options("throughput", kw, False, True), kw["db"], kw["as_json"])


POLICY_HELP = (
    "Security policy: any, compatible (drops what ssh-audit fails), modern (also drops its warnings; "
    "curve25519 stays: not post-quantum is not weak), post-quantum, or a TOML file (base/allow/deny)."
)


@cli.command("sweep")
@measure_options
@click.option("--policy", "policy_spec", default="modern", show_default=True, help=POLICY_HELP)
@click.option("--top", default=10, show_default=True, type=click.IntRange(1, 1000), help="Combinations to list.")
@db_option
@click.option("--resume", type=int, metavar="RUN", help="Finish an interrupted sweep.")
def sweep_cmd(**kw: Any) -> None:
    """Every cipher (x MAC), both directions, and every kex x host key; then recommend.

    \b
    Factorised design (default): each cipher with the default MAC, each MAC with aes128-ctr,
    each kex with the default host key, each host key with the default kex. Kex only affects the
    handshake and MACs only matter for non-AEAD ciphers; unmeasured cipher x MAC pairs are
    predicted from per-byte costs and marked. --full measures every cipher x every MAC and every
    kex x every host key (kex is not crossed with ciphers: the steady transfer rate excludes the
    handshake, so the kex cannot change it).
    Samples are short (about 0.2 s, steady rate), client and server are pinned to different CPUs
    (--no-pin to disable), and the budget defaults to --max-time 3m; extra rounds go to the
    scenarios whose confidence intervals are widest. Prints per-cipher, per-MAC, per-kex and
    per-host-key tables, the top combinations, and recommendations as ssh_config/sshd_config lines.
    """
    if kw["resume"] is not None:
        resume_run(kw["resume"], kw["db"], kw["as_json"])
        return
    policy.resolve(kw["policy_spec"])  # a bad level or policy file fails before measuring
    spec = kw["policy_spec"]
    kw["policy"] = spec if spec in policy.LEVELS else str(Path(spec).resolve())
    kw["max_time"] = kw["max_time"] or "3m"
    kw["mac_mode"] = kw["mac_mode"] or ("all" if kw["full"] else "each")
    kw["sample_seconds"] = 0.2
    kw["pin"] = True if kw["pin"] is None else kw["pin"]
    opts = build_options("sweep", kw, True, True)
    execute(opts, kw["db"], kw["as_json"])


@cli.command("recommend")
@click.argument("run_id", type=int, required=False, metavar="[RUN]")
@click.option("--policy", "policy_spec", help=POLICY_HELP + " [default: the run's, else modern]")
@click.option("--host", help="Host pattern for the ssh_config block [default: the run's remote target].")
@db_option
def recommend_cmd(
    run_id: int | None, policy_spec: str | None, host: str | None, db: Path | None, as_json: bool
) -> None:
    """Fastest configuration overall, within a policy, and fastest handshake, as config lines.

    Uses a stored run with throughput (default: the newest). Gains are against what the plain client
    negotiates today, in % with a conservative interval. Every algorithm the policy excludes is listed
    with its reason.

    \b
    Policy file example (TOML):
      base = "modern"
      [deny.cipher]
      "aes256-ctr" = "we standardise on AES-128"
      [allow.mac]
      "umac-64-etm@openssh.com" = "accepted on the backup network"
    """
    store = open_store(db)
    if run_id is None:
        run_id = store.latest_run()
        if run_id is None:
            raise SshbenchError(
                "no stored run has throughput results",
                place=str(store.path),
                fix="run `sshbench sweep` (or `sshbench`) first",
                code=ExitCode.USAGE,
            )
    run, stored = store.run(run_id), store.scenarios(run_id)
    if host is not None and not valid_host(host):
        raise SshbenchError(
            f"{host!r} is not a valid Host pattern", place="--host", fix="use a host name or alias", code=ExitCode.USAGE
        )
    pol = policy.resolve(policy_spec or run.options.get("policy") or "modern")
    full = bool(run.options.get("full_latency"))
    rec = analysis.recommend(stored, run.discovery, pol, full)
    if as_json:
        click.echo(json.dumps(analysis.to_document(stored, run.discovery, pol, full), indent=2))
        return
    if rec.overall is None:
        raise SshbenchError(
            f"run {run_id} has no measured throughput or latency to recommend from",
            place=f"run {run_id}",
            fix="choose a run listed by `sshbench history` with throughput results",
            code=ExitCode.USAGE,
        )
    print_environment(out, run)
    print_recommendation(out, rec, host or _host_for(run), f"run {run.id}, {run.started_at[:10]}")


@cli.command("servers")
@click.argument("servers", nargs=-1, metavar="[SERVER]...")
@click.option("--hostkey", help="Host-key algorithms [default: one each of ed25519, ecdsa, rsa].")
@click.option("--cipher", help="Ciphers [default: every cipher each server supports].")
@click.option("--no-latency", is_flag=True, help="Skip connection latency.")
@click.option("--no-throughput", is_flag=True, help="Skip throughput.")
@sampling_options
@db_option
@click.option("--resume", type=int, metavar="RUN", help="Finish an interrupted servers run.")
def servers_cmd(**kw: Any) -> None:
    """SSH servers side by side: OpenSSH, Dropbear, TinySSH, or any OpenSSH-compatible sshd.

    \b
    SERVER: local:openssh, local:dropbear, local:tinyssh, local:sshd=/path/to/sshd
    [default: all three; one that cannot run here is listed as skipped, with the fix]

    Each starts on 127.0.0.1 with fresh keys and is removed afterwards. Per server: what it offers
    and what the default and strict client profiles negotiate; connection time per host-key type
    and profile; throughput down and up per cipher with client and server CPU seconds per GiB
    (server CPU from a cgroup per server, so every process is counted) and peak memory; memory per
    process role idle, in a session and in a transfer. The settings used for each server are
    printed with the results.

    \b
    Examples:
      sshbench servers
      sshbench servers local:openssh local:dropbear --cipher chacha20-poly1305@openssh.com
      sshbench servers local:openssh local:sshd=/opt/hpnssh/sbin/sshd --max-time 5m
    """
    if kw["resume"] is not None:
        resume_run(kw["resume"], kw["db"], kw["as_json"])
        return
    specs = kw["servers"]
    for spec in specs:
        if not spec.startswith("local"):
            raise SshbenchError(
                f"{spec!r} is not an embedded server",
                place="SERVER argument",
                fix=f"use local:NAME with NAME one of {', '.join(KNOWN)}, or local:sshd=/path/to/sshd",
                code=ExitCode.USAGE,
            )
    opts = build_options("servers", kw, not kw["no_latency"], not kw["no_throughput"])
    execute(opts, kw["db"], kw["as_json"])


@cli.command("compare")
@click.argument("run_a", type=int, metavar="RUN_A")
@click.argument("run_b", type=int, metavar="RUN_B")
@click.option(
    "--fail-if",
    "fail_if",
    metavar="slower:PCT",
    help="Exit with status 10 when any scenario of RUN_B is significantly slower than in RUN_A by more "
    "than PCT (e.g. slower:5%). For CI pipelines.",
)
@db_option
def compare_cmd(run_a: int, run_b: int, fail_if: str | None, db: Path | None, as_json: bool) -> None:
    """Per scenario, the change from RUN_A to RUN_B in %, with significance.

    Overlapping 95% confidence intervals of the medians mean "no change". Differences in the
    environment (CPU, crypto flags, versions, emulation, pinning) are printed as warnings.
    """
    threshold = parse_fail_if(fail_if) if fail_if else None
    store = open_store(db)
    a, b = store.run(run_a), store.run(run_b)
    changes = compare_runs(store.scenarios(run_a), store.scenarios(run_b))
    diffs = environment_differences(a.environment, b.environment)
    failing = regressions(changes, threshold) if threshold is not None else None
    if as_json:
        click.echo(json.dumps(compare_document(a, b, changes, diffs, failing), indent=2))
    else:
        print_compare(out, a, b, changes, diffs, failing, threshold)
    if failing:
        raise SshbenchError(
            f"{len(failing)} scenario(s) of run {run_b} are slower than run {run_a} by more than {threshold:g}%",
            place="--fail-if",
            fix="see the table above; rerun both to rule out noise (`sshbench show`)",
            code=ExitCode.REGRESSION,
        )


def compare_document(
    a: RunRecord, b: RunRecord, changes: list[Change], diffs: list[str], failing: list[Change] | None
) -> dict[str, Any]:
    """Return the comparison as JSON-ready data."""
    return {
        "run_a": a.id,
        "run_b": b.id,
        "environment_differences": diffs,
        "changes": [
            {
                "scenario": c.scenario.to_dict(),
                "label": c.scenario.label,
                "a_median": c.a.median if c.a else None,
                "b_median": c.b.median if c.b else None,
                "percent": c.percent,
                "verdict": c.verdict,
            }
            for c in changes
        ],
        "failing": None if failing is None else [c.scenario.label for c in failing],
    }


@cli.command("report")
@click.argument("run_ids", nargs=-1, type=int, metavar="[RUN]...")
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    help="HTML file [default: sshbench-report.html]; for png/svg a directory [default: sshbench-charts].",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["html", "png", "svg"]),
    default="html",
    show_default=True,
    help="html: one self-contained interactive file (offline, light/dark, printable); png/svg: one file per chart.",
)
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), envvar="SSHBENCH_DB")
def report_cmd(run_ids: tuple[int, ...], output: Path | None, fmt: str, db: Path | None) -> None:
    """Charts of stored runs: an offline HTML report, or PNG/SVG files.

    \b
    Throughput per cipher (x MAC) both ways with CI error bars, connection time per kex and host
    key with its phases stacked, per-server comparisons (latency, throughput, CPU/GiB, memory), a
    sweep's per-dimension aggregates, the recommendation with its config snippets, and the
    environment. Two runs also get a comparison. Default: the newest run.

    \b
    Examples:
      sshbench report -o report.html
      sshbench report 3 7 -o before-after.html
      sshbench report 3 --format svg -o charts/
    """
    from sshbench import report  # altair and vl-convert load only when a report is asked for

    store = open_store(db)
    ids = list(run_ids)
    if not ids:
        latest = store.latest_run(with_throughput=False)
        if latest is None:
            raise SshbenchError(
                "there are no stored runs", place=str(store.path), fix="run `sshbench` first", code=ExitCode.USAGE
            )
        ids = [latest]
    runs = [report.RunData(store.run(i), store.scenarios(i), store.memory(i)) for i in ids]
    try:
        if fmt == "html":
            path = output or Path("sshbench-report.html")
            path.write_text(report.render_html(runs), encoding="utf-8")
            err.print(f"wrote {path} ({path.stat().st_size // 1024} KiB, self-contained: open it from disk)")
            return
        outdir = output or Path("sshbench-charts")
        paths = report.write_images(report.all_figures(runs), outdir, fmt)
        err.print(f"wrote {len(paths)} {fmt.upper()} file(s) in {outdir}: {', '.join(p.name for p in paths)}")
    except OSError as exc:
        raise SshbenchError(
            f"cannot write the report: {exc.strerror or exc}",
            place=str(output or "."),
            fix="choose a writable path with -o",
            code=ExitCode.STORAGE,
        ) from None


@cli.command("history")
@db_option
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 10000))
def history_cmd(db: Path | None, as_json: bool, limit: int) -> None:
    """List stored runs, newest first."""
    runs = open_store(db).runs(limit)
    if as_json:
        click.echo(
            json.dumps(
                [
                    {
                        "id": r.id,
                        "started_at": r.started_at,
                        "command": r.command,
                        "target": r.target,
                        "status": r.status,
                        "samples": n,
                    }
                    for r, n in runs
                ],
                indent=2,
            )
        )
    elif not runs:
        out.print("No runs stored yet: run `sshbench` to make one.")
    else:
        print_history(out, runs)


@cli.command("show")
@click.argument("run_id", type=int, metavar="RUN")
@db_option
def show_cmd(run_id: int, db: Path | None, as_json: bool) -> None:
    """Show a stored run (complete or partial) as tables or JSON."""
    store = open_store(db)
    show_run(store, run_id, as_json, discovery_only=store.run(run_id).command == "algos")


@cli.command("export")
@click.argument("run_id", type=int, metavar="RUN")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "json", "shell-csv"]),
    default="csv",
    show_default=True,
    help="csv: one row per sample; json: samples, summaries, metadata; shell-csv: one `algorithm,time` file "
    "per test (kex, cipher-send, cipher-receive, mac-send, mac-receive) like the common shell scripts "
    "(time: s per connection, or s per GiB at the median rate) - needs -o DIR.",
)
@click.option(
    "-o", "--output", type=click.Path(path_type=Path), help="File (directory for shell-csv) [default: stdout]."
)
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), envvar="SSHBENCH_DB")
def export_cmd(run_id: int, fmt: str, output: Path | None, db: Path | None) -> None:
    """Export a run: every sample (CSV/JSON), or the shell-script layout (shell-csv)."""
    store = open_store(db)
    run = store.run(run_id)
    stored = store.scenarios(run_id)
    if fmt == "shell-csv":
        if output is None:
            raise SshbenchError(
                "shell-csv writes several files",
                place="--format shell-csv",
                fix="give a directory: -o DIR",
                code=ExitCode.USAGE,
            )
        files = to_shell_csv(stored, bool(run.options.get("full_latency")))
        _write(output, files)
        err.print(f"wrote {', '.join(sorted(files))} in {output}")
        return
    memory, derived = store.memory(run_id), store.analysis(run_id)
    text = to_csv(run, stored) if fmt == "csv" else to_json(run, stored, memory, derived)
    if output is None:
        click.echo(text, nl=False)
        return
    _write(output, {"": text})
    err.print(f"wrote {output}")


def _write(output: Path, files: dict[str, str]) -> None:
    """Write one file (name '') or several files into a directory, naming the path on failure."""
    try:
        if "" in files:
            output.write_text(files[""])
            return
        output.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (output / name).write_text(text)
    except OSError as exc:
        raise SshbenchError(
            f"cannot write {output}: {exc.strerror}",
            place="--output",
            fix="choose a writable path",
            code=ExitCode.STORAGE,
        ) from None


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    """Turn SIGTERM into an exception so that servers and files are cleaned up."""
    raise Terminated()


def _interrupted(code: ExitCode, what: str) -> int:
    """Report an interruption and how to resume; return the exit code."""
    run_id = STATE["run_id"]
    msg = f"sshbench: {what}"
    if run_id is not None:
        msg += f"; every sample so far is stored in run {run_id}: finish it with `sshbench run --resume {run_id}`"
    err.print(msg, highlight=False)
    return int(code)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; the only place that turns exceptions into exit statuses."""
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        cli.main(args=argv, prog_name="sshbench", standalone_mode=False)
        code = 0
    except click.exceptions.Abort:
        code = _interrupted(ExitCode.INTERRUPTED, "interrupted")
    except KeyboardInterrupt:
        code = _interrupted(ExitCode.INTERRUPTED, "interrupted")
    except Terminated:
        code = _interrupted(ExitCode.TERMINATED, "terminated")
    except click.ClickException as exc:
        exc.show()
        code = ExitCode.USAGE if exc.exit_code == 2 else exc.exit_code
    except SshbenchError as exc:
        if STATE["traceback"]:
            traceback.print_exc()
        err.print(f"sshbench: error: {exc.render()}", highlight=False, markup=False)
        code = int(exc.code)
    sys.exit(code)
