"""The measuring commands: run, algos, latency, throughput, sweep, servers. Each turns its options into
`JobOptions` and hands them to `common.execute`, which runs the job and shows what it stored.

The data model is imported inside the commands: `--help` reads this module and needs none of it.
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from sshbench.cli.common import execute, resuming
from sshbench.cli.decorators import (
    DIRECTIONS,
    algorithm_option,
    db_option,
    latency_options,
    resume_option,
    sampling_options,
    ssh_config_option,
    ssh_option,
    target_options,
    throughput_options,
)
from sshbench.cli.options import (
    client_path,
    parse_budget,
    parse_cpu_period,
    parse_cpu_share,
    parse_for_size,
    parse_list,
    parse_percent,
    parse_size,
)
from sshbench.cli.values import Given
from sshbench.errors import ExitCode, SshbenchError
from sshbench.joboptions import DEFAULT_POLICY
from sshbench.model import is_local
from sshbench.ssh.destination import normalize_destination
from sshbench.targets.limits.emulation import HOST_PRESETS
from sshbench.targets.servers.registry import KNOWN, SERVER_TYPES

if TYPE_CHECKING:
    from sshbench.joboptions import JobOptions
    from sshbench.runkinds import RunKind

POLICY_HELP = (
    "Security policy: any, compatible (drops what ssh-audit fails), modern (also drops its warnings; "
    "curve25519 stays: not post-quantum is not weak), post-quantum, or a TOML file (base/allow/deny)."
)


SERVERS_HELP = f"""SSH servers side by side: {", ".join(t.product for t in SERVER_TYPES if not t.by_path)}, or any
{" or any ".join(t.product for t in SERVER_TYPES if t.by_path)}.

\b
SERVER: {", ".join(t.spec for t in SERVER_TYPES)},
        or a host of yours: an ~/.ssh/config alias, user@host or host:port
[default: the first {len(KNOWN)}; one that cannot run here is listed as skipped, with the fix]

Each embedded one starts on 127.0.0.1 with fresh keys and is removed afterwards. Per server: what it offers
and what the default and strict client profiles negotiate; connection time per host-key type
and profile; throughput down and up per cipher with client and server CPU seconds per GiB
(server CPU from a cgroup per server, so every process is counted) and peak memory; memory per
process role idle, in a session and in a transfer. The settings used for each server are
printed with the results. A host of yours is measured beside them as it is, with your own ssh
configuration and host-key checking: its session reports its own CPU, peak memory and socket over
the login; --link, --server-cpu, --emulate server:... and memory per role apply to the embedded
servers only, and the results say so.

\b
Examples:
  sshbench servers
  sshbench servers local:openssh local:dropbear --cipher chacha20-poly1305@openssh.com
  sshbench servers local:openssh local:sshd=/opt/hpnssh/sbin/sshd --max-time 5m
  sshbench servers local:openssh backup-host --direction down
"""


def with_preset(given: Given) -> Given:
    """Fill the options a --preset sets, where they were not given."""
    preset = HOST_PRESETS.get(given.preset or "", {})
    unknown = set(preset) - {"emulate", "server_cpu", "client_cpu", "link"}
    assert not unknown, f"a host preset sets options with no field here: {unknown}"
    return dataclasses.replace(
        given,
        emulate=given.emulate if given.emulate is not None else preset.get("emulate"),
        server_cpu=given.server_cpu if given.server_cpu is not None else preset.get("server_cpu"),
        client_cpu=given.client_cpu if given.client_cpu is not None else preset.get("client_cpu"),
        link=given.link if given.link is not None else preset.get("link"),
    )


def with_policy(given: Given) -> Given:
    """Check --policy (a bad level or policy file fails before measuring) and keep a file's absolute path."""
    from sshbench.analyse import policy

    spec = given.policy_spec or DEFAULT_POLICY
    policy.resolve(spec)
    return dataclasses.replace(given, policy=spec if spec in policy.LEVELS else str(Path(spec).resolve()))


def build_options(kind: RunKind, given: Given, *, latency: bool, throughput: bool) -> JobOptions:
    """Turn validated CLI values into JobOptions."""
    from sshbench.joboptions import JobOptions, Plan
    from sshbench.model import Direction
    from sshbench.targets.link.links import parse, sample_seconds

    given = with_preset(given)
    link = parse(given.link) if given.link else None
    plan = Plan(
        warmup=given.warmup,
        min_rounds=given.rounds,
        max_rounds=max(given.max_rounds, given.rounds),
        ci_target=parse_percent(given.ci),
        max_time=parse_budget(given.max_time),
        racing=given.race,
        seed=random.randrange(2**31),  # stored with the plan: a resumed race visits rows in the same orders
    )
    return JobOptions(
        command=kind,
        target=given.target,
        ssh_config=given.ssh_config,
        ssh=client_path(given.ssh),
        measure_latency=latency,
        measure_throughput=throughput,
        kex=parse_list(given.kex),
        hostkeys=parse_list(given.hostkey),
        ciphers=parse_list(given.cipher),
        macs=parse_list(given.mac),
        mac_mode=given.mac_mode or "default",
        full_latency=given.full,
        directions=tuple(Direction(d) for d in DIRECTIONS[given.direction]),
        size=parse_size(given.size),
        for_size=parse_for_size(given.for_size),
        payload=given.payload,
        plan=plan,
        servers=given.servers,
        emulate=given.emulate,
        server_cpu=parse_cpu_share(given.server_cpu, "--server-cpu"),
        client_cpu=parse_cpu_share(given.client_cpu, "--client-cpu"),
        cpu_period_ms=parse_cpu_period(given.cpu_period, given.server_cpu, given.client_cpu),
        link=link.name if link else None,
        policy=given.policy or DEFAULT_POLICY,
        margin=parse_percent(given.margin or "5%", "--margin"),
        sample_seconds=sample_seconds(link, kind.row.sample_seconds) if link else kind.row.sample_seconds,
        pin=given.pin,
        kernel_evidence=given.kernel_evidence,
    )


def _defaults(command: click.Command) -> dict[str, Any]:
    """Return a command's option defaults (used when `sshbench` runs `run` with no arguments)."""
    ctx = click.Context(command)
    return {p.name: p.get_default(ctx) for p in command.params if p.name and p.expose_value}


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
    from sshbench.runkinds import RunKind

    given = Given.from_click({**_defaults(run_cmd), **kw})
    if not resuming(given):
        execute(build_options(RunKind.RUN, given, latency=True, throughput=True), given.db, given.as_json)


@click.command("algos")
@target_options
@db_option
def algos_cmd(target: str, db: Path | None, as_json: bool, ssh_config: str | None, ssh: str | None) -> None:
    """What the client offers, what the server offers (its KEXINIT, no login), what they negotiate.

    Each algorithm is rated with ssh-audit's database; "ok, not post-quantum" is kept apart from
    real weaknesses. The default and a strict profile (chacha20-poly1305 / ssh-ed25519 /
    curve25519-sha256) are tried; a server that rejects one shows "fails to connect" and why.
    Exits 4 when the server cannot be reached.
    """
    from sshbench.joboptions import JobOptions
    from sshbench.runkinds import RunKind

    opts = JobOptions(
        command=RunKind.ALGOS,
        target=target,
        ssh_config=ssh_config,
        ssh=client_path(ssh),
        measure_latency=False,
        measure_throughput=False,
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
    from sshbench.runkinds import RunKind

    given = Given.from_click(kw)
    if not resuming(given):
        execute(build_options(RunKind.LATENCY, given, latency=True, throughput=False), given.db, given.as_json)


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
    from sshbench.runkinds import RunKind

    given = Given.from_click(kw)
    if not resuming(given):
        opts = build_options(RunKind.THROUGHPUT, given, latency=False, throughput=True)
        execute(opts, given.db, given.as_json)


@click.command("sweep")
@target_options
@algorithm_option("kex", "Key exchanges to measure, comma-separated [default: all shared].")
@algorithm_option("hostkey", "Host-key algorithms to measure [default: all shared].")
@throughput_options(macs="each")
@click.option("--full", is_flag=True, help="Measure every cipher x every MAC and every kex x every host key.")
@sampling_options
@click.option("--policy", "policy_spec", default=DEFAULT_POLICY, show_default=True, help=POLICY_HELP)
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
    from sshbench.runkinds import RunKind

    given = Given.from_click(kw)
    if resuming(given):
        return
    given = with_policy(given)
    if given.full and click.get_current_context().get_parameter_source("mac_mode") is not ParameterSource.COMMANDLINE:
        given = dataclasses.replace(given, mac_mode="all")
    opts = build_options(RunKind.SWEEP, given, latency=True, throughput=True)
    execute(opts, given.db, given.as_json)


@click.command("servers", help=SERVERS_HELP)
@click.argument("servers", nargs=-1, metavar="[SERVER]...")
@ssh_config_option
@ssh_option
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
    from sshbench.runkinds import RunKind

    given = Given.from_click(kw)
    if resuming(given):
        return
    for spec in given.servers:
        if not is_local(spec) and spec.startswith("local"):
            raise SshbenchError(
                f"{spec!r} is not an embedded server",
                place="SERVER argument",
                fix=f"use local:NAME with NAME one of {', '.join(KNOWN)}, or {SERVER_TYPES[-1].spec}",
                code=ExitCode.USAGE,
            )
        if not is_local(spec):
            normalize_destination(spec)  # a host of yours: refused here when it is no destination at all
    opts = build_options(RunKind.SERVERS, given, latency=not given.no_latency, throughput=not given.no_throughput)
    execute(opts, given.db, given.as_json)


@click.command("tune")
@target_options
@click.option("--direction", type=click.Choice(list(DIRECTIONS)), default="both", show_default=True)
@click.option(
    "--size",
    default="auto",
    show_default=True,
    help="Bytes per copy (512M, 1G) or auto: long enough for a remedy to show (5 logins, 50 round trips of the "
    "path, each of N connections' part 4 times its slow start, the longest; never shrunk to fit --max-time).",
)
@click.option(
    "--for-size",
    default=None,
    help="The copy size (10M, 1G) the verdicts and pasted lines are for, predicted from each copy's steady rate "
    "and fixed cost (default: the size measured; the gain for 10 MB and 1 GB is said either way).",
)
@click.option(
    "--payload",
    type=click.Choice(["zero", "text", "random"]),
    default="zero",
    show_default=True,
    help="What the copy carries: zeros, a fixed text corpus (gzip shrinks it 2.2 times), or random "
    "data (Compression=yes is measured only for a payload that compresses).",
)
@click.option("--policy", "policy_spec", default=DEFAULT_POLICY, show_default=True, help=POLICY_HELP)
@sampling_options
@db_option
@resume_option
def tune_cmd(**kw: Any) -> None:
    """Why is a copy as fast as it is, and what makes it faster, measured.

    \b
    1. The default copy both ways (your client's own algorithms, one connection, handshake
       included) and a fresh login, with the kernel's evidence of the sockets.
    2. What bounds it: network, tcp-window, ssh-window, client-cpu, server-cpu, crypto or unknown.
    3. Only the remedies that apply, interleaved with the default under one budget: 2, 4 and 8
       connections at once and Compression=yes for a path bound; every AEAD cipher your policy
       allows for a CPU bound; reusing a master connection (ControlMaster) for logins. Each is
       raced against the default (never against another remedy), 6 rounds at least.
    4. Each remedy's gain with its 95 % interval, and the lines to paste: only a gain whose whole
       interval lies beyond --margin; a pick that drops a post-quantum default says so.
    The plan is printed first; a budget too small for 6 rounds is refused with the one that fits.

    \b
    Examples:
      sshbench tune
      sshbench tune backup-host --max-time 5m
      sshbench tune backup-host --direction up --payload random
    """
    from sshbench.runkinds import RunKind

    given = Given.from_click(kw)
    if resuming(given):
        return
    given = with_policy(given)
    execute(build_options(RunKind.TUNE, given, latency=True, throughput=True), given.db, given.as_json)


COMMANDS = (run_cmd, algos_cmd, latency_cmd, throughput_cmd, sweep_cmd, servers_cmd, tune_cmd)
