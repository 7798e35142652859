"""The options of a job: everything that defines it, stored with the run so that `--resume` can finish it.

`JobOptions` holds what every measuring command shares; a command with options of its own has a dataclass here
(named by its row in runkinds.ROWS) carried as `own`. A run stores them flat beside the shared ones, in the order
runs have always stored them, so that documents and older runs read as before.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from sshbench.model import Direction
from sshbench.runkinds import RunKind, entry


@dataclass(frozen=True)
class Plan:
    """How many samples to take and when to stop."""

    warmup: int = 1
    min_rounds: int = 6
    max_rounds: int = 20
    ci_target: float = 0.05  # relative half-width of the median's 95 % CI
    max_time: float | None = None  # seconds for the whole measurement
    racing: bool = False  # rows significantly slower than their group's leader stop early (measure/racing.py)
    seed: int = 0  # the order of rows in each round when racing (stored: --resume continues the same race)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Plan:
        """Rebuild a plan stored with its job options (missing fields take their defaults)."""
        return cls(**{k: v for k, v in data.items() if k in {f.name for f in dataclasses.fields(cls)}})


@dataclass(frozen=True)
class FleetOptions:
    """`fleet`'s own options: where its hosts come from, and how many are measured at once."""

    inventory: str | None = None  # an Ansible inventory (file, directory or script) for ansible-inventory
    limit: str | None = None  # Ansible's --limit pattern
    hosts: str | None = None  # Host aliases of --ssh-config matching these patterns (comma-separated)
    hosts_file: str | None = None  # a file of destinations, one per line
    forks: int = 5  # hosts measured at once (throughput: always one at a time)


@dataclass(frozen=True)
class ToolsOptions:
    """`tools`' own options."""

    tools: tuple[str, ...] = ()  # scp, sftp, rsync (the plaintext baselines tcp and rsyncd come with them)


REKEYS = 4  # `interop --rekey`: a login moves REKEYS x the limit from the server, so it rekeys about this many times


@dataclass(frozen=True)
class ClientsOptions:
    """`clients`' own options."""

    clients: tuple[str, ...] = ()  # the clients to compare (registry names)
    rekey: int | None = None  # `interop --rekey`: the servers' (and ssh's) RekeyLimit in bytes; None: their own

    @property
    def payload(self) -> int:
        """Return the bytes each login of a rekey soak moves from the server (0 without --rekey)."""
        return REKEYS * self.rekey if self.rekey else 0


@dataclass(frozen=True)
class LoadOptions:
    """`load`'s own options: the steps' rates, how arrivals are spaced, each step's length, the generator, how many
    loopback source addresses the arrivals come from, bursts instead of steps with a setting to compare, the
    highest rate a host of the user's may be loaded at, and the sessions held instead (`--job session`)."""

    rates: tuple[float, ...] = ()  # logins per second, one step each
    arrivals: str = "constant"  # constant | poisson
    step_time: float = 10.0  # seconds per step
    generator: str = "openssh"  # one ssh per login
    sources: int = 8  # 127.0.0.2 .. 127.0.0.(1+N)
    slo: float = 1.0  # seconds: a step whose p99 is above it (or whose logins fail) ends the stepping
    burst: int = 0  # connections started at one instant, instead of steps (0: steps)
    repeats: int = 5  # bursts per setting
    server_options: tuple[str, ...] = ()  # sshd_config KEY=VALUE of a second embedded server, its bursts compared
    job: str = "login"  # what each connection does: login (`true`) or exec (bytes up and down)
    up: int = 0  # exec: bytes sent to the server
    down: int = 0  # exec: bytes read back
    max_rate: float | None = None  # a host sshbench did not start: the highest rate its owner allows (None: embedded)
    sessions: tuple[int, ...] = ()  # --job session: the numbers of sessions held, one step each
    start_at: float | None = None  # steps start at agreed instants (Unix seconds) from here, one generator of several
    generators: int = 1  # the generators whose logins a run holds (`import --merge` of several hosts' runs)
    precision: float = 0.0  # bisect the knee until its two bracketing rates are this far apart (0: the steps given)

    @property
    def sends(self) -> bool:
        """Return True for an exec job (bytes up and down), False for a login (`true`) or a session held."""
        return self.job == "exec"


DEFAULT_POLICY = "modern"  # the security policy of every command that takes --policy
DEFAULT_ROUNDS, DEFAULT_MAX_ROUNDS = 8, 20  # --rounds and --max-rounds of the measuring commands
Own = FleetOptions | ToolsOptions | ClientsOptions | LoadOptions
OwnT = TypeVar("OwnT", FleetOptions, ToolsOptions, ClientsOptions, LoadOptions)
# where each command's own keys stand among the shared ones in a stored run (schema 1-10): keys of other commands'
# options are stored too, at their defaults
BEFORE_MARGIN, LAST = (FleetOptions, ToolsOptions), (ClientsOptions, LoadOptions)


@dataclass(frozen=True)
class JobOptions:
    """Everything that defines a job; stored with the run so that `--resume` can finish it."""

    command: RunKind
    target: str = "local"
    ssh_config: str | None = None  # -F for remote targets (default: ~/.ssh/config)
    ssh: str | None = None  # --ssh: the OpenSSH client measured with, by absolute path (None: the system's `ssh`)
    measure_latency: bool = True
    measure_throughput: bool = True
    kex: tuple[str, ...] = ()
    hostkeys: tuple[str, ...] = ()
    ciphers: tuple[str, ...] = ()
    macs: tuple[str, ...] = ()
    mac_mode: str = "default"  # default | each | all (with `macs` given: those MACs)
    full_latency: bool = False
    directions: tuple[Direction, ...] = (Direction.DOWN, Direction.UP)
    size: int | None = None  # bytes; None = about `sample_seconds` per sample
    for_size: int | None = None  # `tune`: bytes of the copy its verdict and pasted lines are for (None: measured's)
    sample_seconds: float = 1.0
    payload: str = "zero"
    plan: Plan = dataclasses.field(default_factory=Plan)
    servers: tuple[str, ...] = ()  # `servers` command: local:NAME specs
    emulate: str | None = None  # e.g. no-aesni, server:no-aesni (see targets/limits/emulation.py)
    server_cpu: float | None = None  # embedded servers: at most this many CPUs (0.5: half of one), a cgroup quota
    client_cpu: float | None = None  # the ssh clients: at most this many CPUs
    cpu_period_ms: int | None = None  # the quotas' period (None: the kernel's 100 ms); short: slows a short burst too
    link: str | None = None  # embedded servers behind an emulated link: a preset or RATE,RTT[,LOSS] (link/links.py)
    policy: str = DEFAULT_POLICY  # security policy for recommendations: a level or a TOML file
    pin: bool = False  # embedded servers: ssh client on one CPU, server on another
    kernel_evidence: bool = True  # read the transfer's sockets from the kernel while each sample runs (tcpinfo.py)
    margin: float = 0.05  # equivalence margin of the claims (sshbench.ratios): +-5 % is "equivalent"
    own: Own | None = None  # the command's own options (its row in runkinds.ROWS names their class)

    def own_as(self, cls: type[OwnT]) -> OwnT:
        """Return the command's own options as `cls` (their defaults when it has none of that kind)."""
        return self.own if isinstance(self.own, cls) else cls()

    @property
    def measures(self) -> bool:
        """Return True when the job measures anything (not discovery alone)."""
        return self.measure_latency or self.measure_throughput

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict, flat as runs store it (`ssh` only when a client was given by path,
        `cpu_period_ms` only when a quota's period was, `for_size` and `rekey` only when given)."""
        data = dataclasses.asdict(self)
        own = data.pop("own") or {}
        for optional in ("ssh", "cpu_period_ms", "for_size"):
            if data[optional] is None:
                del data[optional]
        flat: dict[str, Any] = {}
        for key, value in data.items():
            if key == "margin":
                flat |= _own_keys(BEFORE_MARGIN, own)
            flat[key] = value
        flat |= _own_keys(LAST, own)
        if flat.get("rekey") is None:  # `interop --rekey` only: other runs store it not at all
            flat.pop("rekey", None)
        return flat

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], command: str | None = None) -> JobOptions:
        """Rebuild options stored with `to_dict`; fields a run did not store take their defaults."""
        fields = _known(cls, data, exclude=("own",))
        kind = RunKind(command or fields.get("command", RunKind.RUN))
        if kind is RunKind.LOAD:  # before schema 12, bursts and sessions held were stored as `load` runs
            kind = load_kind(LoadOptions(**_known(LoadOptions, data)))
        fields["command"] = kind
        fields["plan"] = Plan.from_dict(fields.get("plan") or {})
        if "directions" in fields:
            fields["directions"] = tuple(Direction(d) for d in fields["directions"])
        for name in ("kex", "hostkeys", "ciphers", "macs", "servers"):
            fields[name] = tuple(fields.get(name, ()))
        if kind.row.options:
            fields["own"] = _stored_own(entry(kind.row.options), data)
        else:
            fields["own"] = _carried(data)
        return cls(**fields)


SESSION = "session"  # LoadOptions.job of sessions held (`--job session`)


def load_kind(own: LoadOptions) -> RunKind:
    """Return the kind of run `load` makes with these options: bursts, sessions held, or rate steps (login or
    exec); a `load` run stored before schema 12 is read as the kind it would be today."""
    if own.burst:
        return RunKind.BURSTS
    return RunKind.SESSIONS if own.job == SESSION else RunKind.LOAD


def _carried(data: Mapping[str, Any]) -> Own | None:
    """Return the own options a run of a kind without any stored all the same (a fleet's host runs, of kind `run`,
    carry the fleet's), or None when every such key is at its default."""
    for own in (*BEFORE_MARGIN, *LAST):
        stored = _stored_own(own, data)
        if stored != own():
            return stored
    return None


def _stored_own(own: Callable[..., Any], data: Mapping[str, Any]) -> Own:
    """Return a command's own options (of class `own`) as a run stored them (flat; lists as tuples)."""
    stored: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in _known(own, data).items()}
    made: Own = own(**stored)
    return made


def _known(cls: Any, data: Mapping[str, Any], exclude: tuple[str, ...] = ()) -> dict[str, Any]:
    """Return the stored values a dataclass declares (a null keeps its default unless that is None)."""
    declared = {f.name: f for f in dataclasses.fields(cls) if f.name not in exclude}
    return {k: v for k, v in data.items() if k in declared and (v is not None or declared[k].default is None)}


def _own_keys(kinds: tuple[type[Any], ...], own: Mapping[str, Any]) -> dict[str, Any]:
    """Return the stored keys of these commands' own options: the run's values, else their defaults."""
    out: dict[str, Any] = {}
    for kind in kinds:
        out |= {k: own.get(k, v) for k, v in dataclasses.asdict(kind()).items()}
    return out
