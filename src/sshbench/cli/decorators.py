"""The options commands share, as decorators: where results go (--db, --json, --wide), the target (TARGET,
--ssh-config), what to measure (--kex ... --payload), how to sample (--rounds ... --preset), --resume and --margin.

Kept light: `sshbench --help` reads it. Options the user types that locate a run or a host are noted for the
commands sshbench suggests (sshbench.hints).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from sshbench import hints
from sshbench.cli.common import Session
from sshbench.cli.params import RunRef, algorithms
from sshbench.cli.values import Given
from sshbench.runkinds import SAMPLE_SECONDS
from sshbench.targets.limits.emulation import CHOICES, HOST_PRESETS
from sshbench.targets.link.links import PRESETS

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def apply(f: Callable[..., Any], decorators: Sequence[Decorator]) -> Callable[..., Any]:
    """Apply decorators so that options appear in --help in the order listed."""
    for decorator in reversed(decorators):
        f = decorator(f)
    return f


def _noted(name: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """Return a callback that remembers an option the user typed, for the commands sshbench suggests (hints)."""

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        """Note the value when it came from the command line (an environment variable stays set for the paste)."""
        if value is not None and ctx.get_parameter_source(param.name or "") is ParameterSource.COMMANDLINE:
            hints.note(**{name: str(value)})
        return value

    return callback


def db_only(f: Callable[..., Any]) -> Callable[..., Any]:
    """Add --db (the results database)."""
    return click.option(
        "--db",
        type=click.Path(dir_okay=False, path_type=Path),
        envvar="SSHBENCH_DB",
        callback=_noted("db"),
        help="Results database [default: $XDG_DATA_HOME/sshbench/sshbench.db].",
    )(f)


def _set_wide(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """Remember --wide for the results console."""
    if value:
        ctx.ensure_object(Session).wide = True


def _set_details(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """Remember --details for the results screens."""
    if value:
        ctx.ensure_object(Session).details = True


def details_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """Add --details (every caveat and figure; a terminal otherwise gets the brief screen)."""
    return click.option(
        "--details",
        "--verbose",
        is_flag=True,
        expose_value=False,
        callback=_set_details,
        help="Every caveat and figure on the screen (a terminal otherwise gets the answer and the warnings to act "
        "on, and counts what it leaves out; piped output is always complete).",
    )(f)


def json_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """Add --json."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout instead of tables.")(f)


def wide_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """Add --wide (tables at full width; a narrow terminal otherwise hides bars, costs and IQR)."""
    return click.option(
        "--wide",
        is_flag=True,
        expose_value=False,
        callback=_set_wide,
        help="Tables at full width with every column (a narrow terminal hides bars, CPU/memory and IQR).",
    )(f)


def db_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """Add --db, --json, --wide and --details to a command that prints tables."""
    return db_only(json_option(wide_option(details_option(f))))


def ssh_config_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """Add --ssh-config (ssh -F) for remote targets."""
    return click.option(
        "--ssh-config",
        type=click.Path(exists=True, dir_okay=False),
        callback=_noted("ssh_config"),
        help="ssh_config file for a remote TARGET (ssh -F) [default: ~/.ssh/config].",
    )(f)


DIRECTIONS = {"both": ("down", "up"), "down": ("down",), "up": ("up",)}


def count_option(name: str, default: int, low: int, high: int, text: str) -> Decorator:
    """Return an option taking a whole number from low to high, showing its default."""
    return click.option(name, default=default, show_default=True, type=click.IntRange(low, high), help=text)


LINK_PRESETS = ", ".join(f"{name} ({spec})" for name, (spec, _) in PRESETS.items())


def algorithm_option(kind: str, text: str) -> Decorator:
    """Return --KIND: a comma-separated list of algorithm names, completed from `ssh -Q`."""
    return click.option(f"--{kind}", shell_complete=algorithms(kind), help=text)


def ssh_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """Add --ssh (an OpenSSH client by path)."""
    return click.option(
        "--ssh",
        type=click.Path(exists=True, dir_okay=False),
        metavar="PATH",
        help="The OpenSSH client to measure with, e.g. a newer build in a prefix (its scp and sftp beside it are "
        "used too) [default: the system's ssh].",
    )(f)


def target_options(f: Any) -> Any:
    """Add TARGET, --ssh-config and --ssh."""
    return apply(f, [click.argument("target", default="local", metavar="[TARGET]"), ssh_config_option, ssh_option])


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
    count_option(
        "--warmup", Given.warmup, 0, 10, "Warm-up samples per scenario (discarded; a transfer's sizes the next ones)."
    ),
    count_option(
        "--rounds", Given.rounds, 1, 1000, "Minimum interleaved rounds per scenario (racing: rows still racing)."
    ),
    count_option(
        "--max-rounds", Given.max_rounds, 1, 1000, "Stop adding rounds here even if the CI target is not reached."
    ),
    click.option(
        "--ci",
        "ci",
        default=Given.ci,
        show_default=True,
        help="Adaptive stopping: target half-width of the median's 95% CI.",
    ),
    click.option(
        "--max-time",
        default=Given.max_time,
        show_default=True,
        help="Time budget shared by every row (90s, 5m, or none). A plan that cannot fit is refused before "
        "measuring; a run the budget cuts short, or whose server stops answering, ends incomplete (exit 9, "
        "--resume finishes it).",
    ),
    click.option(
        "--margin",
        default="5%",
        show_default=True,
        metavar="PCT",
        help="Equivalence margin of the verdicts: a row whose ratio to the leader has its 95% interval within "
        "+-PCT is `equivalent` (stored with the run; reading commands take --margin to judge again).",
    ),
    click.option(
        "--kernel-evidence/--no-kernel-evidence",
        default=Given.kernel_evidence,
        show_default=True,
        help="While each transfer runs, read its TCP sockets from the kernel (sock_diag: RTT, congestion window, "
        "delivery rate, window- and buffer-limited time) to say what bounds the rate, on any host. Its CPU is about "
        "0.2 % of the ssh client's on loopback while ssh runs (docs/BENCHMARKS.md).",
    ),
    click.option(
        "--race/--no-race",
        default=True,
        show_default=True,
        help="Racing: each round visits the rows in a fresh random order, and a row significantly slower than its "
        "group's leader (t-test blocked by round; at most 5 % chance per group of stopping its best row) stops "
        "after the 3 samples a rank needs, so the budget goes to the close contenders. --no-race samples every "
        "row alike.",
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
        "--cpu-period",
        metavar="MS",
        help="The period of --server-cpu/--client-cpu quotas (default: the kernel's 100ms). A quota is spent in "
        "bursts: 10% over 100ms lets a 3 ms handshake run at full speed; over 10ms it is slowed too "
        "(CPU-quota-shaped). The kernel's smallest quota is 1 ms: share x period >= 1ms.",
    ),
    click.option(
        "--link",
        metavar="LINK",
        help="Embedded servers: reach them across an emulated link (root, or a user namespace of sshbench's own where "
        "the kernel allows one), RATE,RTT[,LOSS] such as 100mbit,20ms or "
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


MARGIN_HELP = "Equivalence margin: a ratio whose 95 % interval lies within +-MARGIN of 1 is `equivalent`."


def margin_option(stored: bool) -> Decorator:
    """Return --margin (for a reading command: re-judges the stored samples; default the run's own)."""
    default = "the run's own, else 5%" if stored else "5%"
    return click.option("--margin", metavar="PCT", help=f"{MARGIN_HELP} [default: {default}]")
