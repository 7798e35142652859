"""The measuring commands: run, algos, latency, throughput, sweep, servers. Each turns its options into
`JobOptions` and hands them to `common.execute`, which runs the job and shows what it stored.

The data model is imported inside the commands: `--help` reads this module and needs none of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from sshbench.cli.common import Decorator, apply, db_option, execute, resuming, ssh_config_option
from sshbench.cli.completion import RunRef, algorithms
from sshbench.cli.options import parse_budget, parse_cpu_share, parse_list, parse_percent, parse_size
from sshbench.errors import ExitCode, SshbenchError
from sshbench.targets.emulation import CHOICES, HOST_PRESETS
from sshbench.targets.links import PRESETS
from sshbench.targets.registry import KNOWN, SERVER_TYPES

if TYPE_CHECKING:
    from sshbench.model import JobOptions, RunKind

DIRECTIONS = {"both": ("down", "up"), "down": ("down",), "up": ("up",)}
POLICY_HELP = (
    "Security policy: any, compatible (drops what ssh-audit fails), modern (also drops its warnings; "
    "curve25519 stays: not post-quantum is not weak), post-quantum, or a TOML file (base/allow/deny)."
)


def count_option(name: str, default: int, low: int, high: int, text: str) -> Decorator:
    """Return an option taking a whole number from low to high, showing its default."""
    return click.option(name, default=default, show_default=True, type=click.IntRange(low, high), help=text)


SERVERS_HELP = f"""SSH servers side by side: {", ".join(t.product for t in SERVER_TYPES if not t.by_path)}, or any
{" or any ".join(t.product for t in SERVER_TYPES if t.by_path)}.

\b
SERVER: {", ".join(t.spec for t in SERVER_TYPES)}
[default: the first {len(KNOWN)}; one that cannot run here is listed as skipped, with the fix]

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
LINK_PRESETS = ", ".join(f"{name} ({spec})" for name, (spec, _) in PRESETS.items())
SAMPLE_SECONDS = 0.2  # --size auto: short samples; the steady rate excludes the start, so length does not bias it
DEFAULT_BUDGET = "3m"


def algorithm_option(kind: str, text: str) -> Decorator:
    """Return --KIND: a comma-separated list of algorithm names, completed from `ssh -Q`."""
    return click.option(f"--{kind}", shell_complete=algorithms(kind), help=text)


def target_options(f: Any) -> Any:
    """Add TARGET and --ssh-config."""
    return apply(f, [click.argument("target", default="local", metavar="[TARGET]"), ssh_config_option])


def latency_options(full: bool) -> Decorator:
    """Return the options that choose connection scenarios (full: this command's default for --full)."""
    return lambda f: apply(
        f,
        [
            algorithm_option("kex", "Key exchanges to measure, comma-separated [default: all shared]."),
            algorithm_option("hostkey", "Host-key algorithms to measure [default: all shared]."),
            click.option(
                "--full/--factorised",
                default=full,
                show_default=True,
                help="Connections: every kex x every host key, or each kex with the default host key and "
                "each host key with the default kex.",
            ),
        ],
    )


def throughput_options(macs: str) -> Decorator:
    """Return the options that choose transfer scenarios (macs: this command's default for --macs)."""
    return lambda f: apply(
        f,
        [
            algorithm_option("cipher", "Ciphers to measure, comma-separated [default: all shared]."),
            algorithm_option("mac", "MACs to pair with every non-AEAD cipher [default: see --macs]."),
            click.option(
                "--macs",
                "mac_mode",
                type=click.Choice(["default", "each", "all"]),
                default=macs,
                show_default=True,
                help="default: each cipher with the default MAC; each: also every MAC once with "
                "aes128-ctr; all: every non-AEAD cipher x every MAC.",
            ),
            click.option("--direction", type=click.Choice(list(DIRECTIONS)), default="both", show_default=True),
            click.option(
                "--size",
                default="auto",
                show_default=True,
                help=f"Bytes per transfer (512M, 1G) or auto (about {SAMPLE_SECONDS:g} s of steady transfer).",
            ),
            click.option("--payload", type=click.Choice(["zero", "random"]), default="zero", show_default=True),
        ],
    )


SAMPLING_OPTIONS: list[Decorator] = [
    count_option("--warmup", 1, 0, 10, "Warm-up samples per scenario (discarded; a transfer's sizes the next ones)."),
    count_option("--rounds", 8, 1, 1000, "Minimum interleaved rounds per scenario."),
    count_option("--max-rounds", 20, 1, 1000, "Stop adding rounds here even if the CI target is not reached."),
    click.option(
        "--ci",
        "ci",
        default="5%",
        show_default=True,
        help="Adaptive stopping: target half-width of the median's 95% CI.",
    ),
    click.option(
        "--max-time",
        default=DEFAULT_BUDGET,
        show_default=True,
        help="Time budget shared by every row (90s, 5m, or none). A plan that cannot fit is refused before "
        "measuring; a run the budget cuts short, or whose server stops answering, ends incomplete (exit 9, "
        "--resume finishes it).",
    ),
    click.option(
        "--pin/--no-pin",
        default=True,
        show_default=True,
        help="Embedded servers: run the ssh client on one CPU and the server on another (less noise, like two hosts).",
    ),
    click.option(
        "--emulate",
        type=click.Choice(CHOICES),
        help="Emulate hardware: no-aesni masks AES-NI/PCLMUL from OpenSSL in ssh and the embedded "
        "OpenSSH server; client:no-aesni or server:no-aesni in one side only (recorded with the run, with "
        "`openssl speed` evidence).",
    ),
    click.option(
        "--server-cpu",
        metavar="PCT",
        help="Embedded servers: at most this share of one CPU for all their processes (25%, 150%), a cgroup "
        "CPU quota (root). With --emulate server:no-aesni: a slow server without AES instructions.",
    ),
    click.option(
        "--client-cpu",
        metavar="PCT",
        help="The ssh clients: at most this share of one CPU (a cgroup quota; sshbench itself is not limited).",
    ),
    click.option(
        "--link",
        metavar="LINK",
        help="Embedded servers: reach them across an emulated link (root), RATE,RTT[,LOSS] such as 100mbit,20ms or "
        f"50mbit,80ms,0.1%, or a preset: {LINK_PRESETS}. Verified before measuring; results name what bounds them.",
    ),
    click.option(
        "--preset",
        type=click.Choice(sorted(HOST_PRESETS)),
        help="A constrained host: pi = a Raspberry-Pi-class server (a tenth of one CPU, no AES instructions) on a "
        "gbe link. Options given explicitly win over the preset's.",
    ),
]


def sampling_options(f: Any) -> Any:
    """Add the sampling options shared by every measuring command."""
    return apply(f, SAMPLING_OPTIONS)


def resume_option(f: Any) -> Any:
    """Add --resume RUN."""
    return click.option(
        "--resume",
        type=RunRef(),
        metavar="RUN",
        help="Finish an interrupted or incomplete run with its stored options (give no other options).",
    )(f)


def with_preset(kw: dict[str, Any]) -> dict[str, Any]:
    """Fill the options a --preset sets, where they were not given."""
    preset = HOST_PRESETS.get(kw.get("preset") or "", {})
    return {**kw, **{k: v for k, v in preset.items() if kw.get(k) is None}}


def build_options(kind: RunKind, kw: dict[str, Any], *, latency: bool, throughput: bool) -> JobOptions:
    """Turn validated CLI values into JobOptions."""
    from sshbench.model import Direction, JobOptions, Plan
    from sshbench.targets.links import parse, sample_seconds

    kw = with_preset(kw)
    link = parse(kw["link"]) if kw.get("link") else None
    rounds, max_rounds = kw["rounds"], max(kw["max_rounds"], kw["rounds"])
    plan = Plan(
        warmup=kw["warmup"],
        min_rounds=rounds,
        max_rounds=max_rounds,
        ci_target=parse_percent(kw["ci"]),
        max_time=parse_budget(kw["max_time"]),
    )
    return JobOptions(
        command=kind,
        target=kw.get("target", "local"),
        ssh_config=kw.get("ssh_config"),
        measure_latency=latency,
        measure_throughput=throughput,
        kex=parse_list(kw.get("kex")),
        hostkeys=parse_list(kw.get("hostkey")),
        ciphers=parse_list(kw.get("cipher")),
        macs=parse_list(kw.get("mac")),
        mac_mode=kw.get("mac_mode") or "default",
        full_latency=bool(kw.get("full")),
        directions=tuple(Direction(d) for d in DIRECTIONS[kw.get("direction", "both")]),
        size=parse_size(kw.get("size", "auto")),
        payload=kw.get("payload", "zero"),
        plan=plan,
        servers=tuple(kw.get("servers") or ()),
        emulate=kw.get("emulate"),
        server_cpu=parse_cpu_share(kw.get("server_cpu"), "--server-cpu"),
        client_cpu=parse_cpu_share(kw.get("client_cpu"), "--client-cpu"),
        link=link.name if link else None,
        policy=kw.get("policy") or "modern",
        sample_seconds=sample_seconds(link, SAMPLE_SECONDS) if link else SAMPLE_SECONDS,
        pin=bool(kw.get("pin")),
    )


def _defaults(command: click.Command) -> dict[str, Any]:
    """Return a command's option defaults (used when `sshbench` runs `run` with no arguments)."""
    ctx = click.Context(command)
    return {p.name: p.get_default(ctx) for p in command.params if p.name}


@click.command("run")
@target_options
@latency_options(full=False)
@throughput_options(macs="default")
@sampling_options
@db_option
@resume_option
def run_cmd(**kw: Any) -> None:
    """Discovery, then connection latency and throughput, then ranked tables and the fastest here.

    Latency is measured per key exchange (with the default host key) and per host key (with the
    default key exchange); throughput per cipher in both directions. Both share one time budget,
    interleaved, so every row gets a fair share of samples. Every sample is stored as it is taken;
    Ctrl-C keeps them and `--resume RUN` completes the run.

    \b
    Examples:
      sshbench run
      sshbench run myserver --max-time 10m
      sshbench run --cipher aes128-gcm@openssh.com,chacha20-poly1305@openssh.com --kex curve25519-sha256
    """
    from sshbench.model import RunKind

    kw = {**_defaults(run_cmd), **kw}
    if not resuming(kw):
        execute(build_options(RunKind.RUN, kw, latency=True, throughput=True), kw["db"], kw["as_json"])


@click.command("algos")
@target_options
@db_option
def algos_cmd(target: str, db: Path | None, as_json: bool, ssh_config: str | None) -> None:
    """What the client offers, what the server offers (its KEXINIT, no login), what they negotiate.

    Each algorithm is rated with ssh-audit's database; "ok, not post-quantum" is kept apart from
    real weaknesses. The default and a strict profile (chacha20-poly1305 / ssh-ed25519 /
    curve25519-sha256) are tried; a server that rejects one shows "fails to connect" and why.
    Exits 4 when the server cannot be reached.
    """
    from sshbench.model import JobOptions, RunKind

    opts = JobOptions(
        command=RunKind.ALGOS, target=target, ssh_config=ssh_config, measure_latency=False, measure_throughput=False
    )
    execute(opts, db, as_json)


@click.command("latency")
@target_options
@latency_options(full=True)
@sampling_options
@db_option
@resume_option
def latency_cmd(**kw: Any) -> None:
    """Connection time per key exchange x host key, with a phase breakdown.

    A sample is one `ssh TARGET true`: spawn, TCP connect, version exchange, key exchange,
    authentication, session and exit, each phase timed from ssh's own -v lines as they arrive.
    """
    from sshbench.model import RunKind

    if not resuming(kw):
        execute(build_options(RunKind.LATENCY, kw, latency=True, throughput=False), kw["db"], kw["as_json"])


@click.command("throughput")
@target_options
@throughput_options(macs="default")
@sampling_options
@db_option
@resume_option
def throughput_cmd(**kw: Any) -> None:
    """MB/s per cipher (and per MAC for non-AEAD ciphers), download and upload.

    Compression and connection sharing are off; the handshake is excluded from the rate; the byte
    count is verified (a short transfer is a failed sample). Bytes flow between the real binaries:
    remote `head -c N /dev/zero` into /dev/null, or a local file into remote `wc -c`.
    """
    from sshbench.model import RunKind

    if not resuming(kw):
        opts = build_options(RunKind.THROUGHPUT, kw, latency=False, throughput=True)
        execute(opts, kw["db"], kw["as_json"])


@click.command("sweep")
@target_options
@algorithm_option("kex", "Key exchanges to measure, comma-separated [default: all shared].")
@algorithm_option("hostkey", "Host-key algorithms to measure [default: all shared].")
@throughput_options(macs="each")
@click.option("--full", is_flag=True, help="Measure every cipher x every MAC and every kex x every host key.")
@sampling_options
@click.option("--policy", "policy_spec", default="modern", show_default=True, help=POLICY_HELP)
@click.option("--top", default=10, show_default=True, type=click.IntRange(1, 1000), help="Combinations to list.")
@db_option
@resume_option
def sweep_cmd(**kw: Any) -> None:
    """Every cipher (x MAC), both directions, and every kex x host key; then recommend.

    \b
    Factorised design (default): each cipher with the default MAC, each MAC with aes128-ctr,
    each kex with the default host key, each host key with the default kex. Kex only affects the
    handshake and MACs only matter for non-AEAD ciphers; unmeasured cipher x MAC pairs are
    predicted from per-byte costs and marked. --full measures every cipher x every MAC and every
    kex x every host key (kex is not crossed with ciphers: the steady transfer rate excludes the
    handshake, so the kex cannot change it).
    Samples are short (about 0.2 s, steady rate); extra rounds go to the scenarios whose confidence
    intervals are widest. Prints per-cipher, per-MAC, per-kex and per-host-key tables, the top
    combinations, and recommendations as ssh_config/sshd_config lines.
    """
    from sshbench.analyse import policy
    from sshbench.model import RunKind

    if resuming(kw):
        return
    policy.resolve(kw["policy_spec"])  # a bad level or policy file fails before measuring
    spec = kw["policy_spec"]
    kw["policy"] = spec if spec in policy.LEVELS else str(Path(spec).resolve())
    if kw["full"] and click.get_current_context().get_parameter_source("mac_mode") is not ParameterSource.COMMANDLINE:
        kw["mac_mode"] = "all"
    opts = build_options(RunKind.SWEEP, kw, latency=True, throughput=True)
    execute(opts, kw["db"], kw["as_json"])


@click.command("servers", help=SERVERS_HELP)
@click.argument("servers", nargs=-1, metavar="[SERVER]...")
@algorithm_option("hostkey", "Host-key algorithms [default: one each of ed25519, ecdsa, rsa].")
@algorithm_option("cipher", "Ciphers [default: every cipher each server supports].")
@click.option("--direction", type=click.Choice(list(DIRECTIONS)), default="both", show_default=True)
@click.option("--size", default="auto", show_default=True, help="Bytes per transfer (512M, 1G) or auto.")
@click.option("--payload", type=click.Choice(["zero", "random"]), default="zero", show_default=True)
@click.option("--no-latency", is_flag=True, help="Skip connection latency.")
@click.option("--no-throughput", is_flag=True, help="Skip throughput.")
@sampling_options
@db_option
@resume_option
def servers_cmd(**kw: Any) -> None:
    """SSH servers side by side (help: SERVERS_HELP, from the server registry)."""
    from sshbench.model import RunKind

    if resuming(kw):
        return
    for spec in kw["servers"]:
        if not spec.startswith("local"):
            raise SshbenchError(
                f"{spec!r} is not an embedded server",
                place="SERVER argument",
                fix=f"use local:NAME with NAME one of {', '.join(KNOWN)}, or {SERVER_TYPES[-1].spec}",
                code=ExitCode.USAGE,
            )
    opts = build_options(RunKind.SERVERS, kw, latency=not kw["no_latency"], throughput=not kw["no_throughput"])
    execute(opts, kw["db"], kw["as_json"])


COMMANDS = (run_cmd, algos_cmd, latency_cmd, throughput_cmd, sweep_cmd, servers_cmd)
