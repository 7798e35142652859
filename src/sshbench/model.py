"""What is measured: kinds of measurement and their metrics, and scenarios (samples and run states are samples.py,
plans and job options joboptions.py).

A `Metric` per `Kind` says everything that depends on the kind of value: its unit (units.py), whether higher is
better, which scenario fields name a row, and which result groups it falls into. Results, comparisons, exports,
tables and charts look it up instead of branching on the kind. A new kind of measurement is a `Kind`, a `Metric` in
`METRICS`, a sampler in `measure/samplers.py` and a planner in `measure/plan.py`."""

from __future__ import annotations

import dataclasses
import enum
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sshbench.clienttypes import known
from sshbench.loadsteps import StepKey
from sshbench.remedy import Remedy, label, ssh_options
from sshbench.units import UNITS, format_value

SSH_TOOLS = ("scp", "sftp", "rsync")  # `tools`: copies over ssh
LEGACY_SCP = "scp-legacy"  # `scp -O`: the original SCP protocol (a remote `scp -f`/`scp -t`), for servers without SFTP
PLAIN_TOOLS = ("tcp", "rsyncd")  # `tools`: the same copies with no SSH (socat, an rsync daemon)
SOCAT_BLOCK = 2**20  # socat's block size for the plain TCP baseline (its 8 KiB default held it below scp)
AEAD_CIPHERS = frozenset({"chacha20-poly1305@openssh.com", "aes128-gcm@openssh.com", "aes256-gcm@openssh.com"})
STRICT_PROFILE = {
    "Ciphers": "chacha20-poly1305@openssh.com",
    "HostKeyAlgorithms": "ssh-ed25519",
    "KexAlgorithms": "curve25519-sha256",
}
PHASES = ("startup", "tcp", "version", "kex", "auth", "session")
SCENARIO_FIELDS = (
    "client",
    "mode",
    "server",
    "profile",
    "tool",
    "kex",
    "hostkey",
    "cipher",
    "mac",
    "direction",
    "remedy",
    "load",
)
OPENSSH_CLIENT, IN_PROCESS, OWN_CHOICE = "openssh", "in-process", "its own cipher"  # `clients` (see Scenario)


class Kind(enum.StrEnum):
    """What a scenario measures."""

    LATENCY = "latency"
    THROUGHPUT = "throughput"
    TOOL = "tool"  # a file copied by scp, sftp or rsync over ssh, or by a plaintext baseline (socat, rsync daemon)


class Direction(enum.StrEnum):
    """Which way the payload flows."""

    DOWN = "down"  # server -> client
    UP = "up"  # client -> server


class BoundKind(enum.StrEnum):
    """What bounds a rate."""

    NETWORK = "network"  # the path: the link's rate
    TCP_WINDOW = "tcp-window"  # the TCP receive or send buffer
    SSH_WINDOW = "ssh-window"  # one SSH channel window per round trip
    CLIENT_CPU = "client-cpu"
    SERVER_CPU = "server-cpu"
    CRYPTO = "crypto"  # the cipher itself, at the slower side's `openssl speed`
    UNKNOWN = "unknown"  # below every known limit


def is_local(spec: str) -> bool:
    """Return True for the target specs of embedded servers: `local` and `local:NAME`."""
    return spec == "local" or spec.startswith("local:")


def is_aead(cipher: str) -> bool:
    """Return True when the cipher authenticates itself and ignores the negotiated MAC."""
    return cipher in AEAD_CIPHERS


@dataclass(frozen=True)
class ResultGroup:
    """A table of results: the scenarios of one kind (and direction) ranked together."""

    name: str  # latency, download, upload
    title: str


@dataclass(frozen=True)
class Labels:
    """How a kind's rows are named: the two scenario fields that tell them apart, and how to show them."""

    fields: tuple[str, str]  # e.g. ("cipher", "mac")
    titles: tuple[str, str]  # their column titles
    blanks: tuple[str, str]  # a table cell for an unset field, e.g. "(AEAD)" for an AEAD cipher's MAC
    missing: tuple[str, str]  # a label's word for an unset field ("" leaves it out)
    join: str  # between the two in a label

    def name(self, scenario: Scenario) -> str:
        """Return what a scenario measures: its fields joined (e.g. `aes128-ctr + umac-64-etm@openssh.com`)."""
        if scenario.client:  # `clients`: the client and its settings first (`paramiko (64 MiB window) with ...`)
            who = client_name(scenario.client, scenario.mode)
            rest = self.join.join(n for n in self.cells(scenario) if n and n != "(AEAD)")
            if scenario.kind is Kind.LATENCY:  # `clients --kex`: the key exchange it was pinned to
                return f"{who} with {scenario.kex}" if scenario.kex else who
            return f"{who} with {rest}"
        names = (getattr(scenario, f) or missing for f, missing in zip(self.fields, self.missing, strict=True))
        base = self.join.join(n for n in names if n) or ("your default" if scenario.kind is Kind.THROUGHPUT else "")
        return base + label(scenario.remedy)  # `your default`: a `tune` transfer with the client's own choice

    def cells(self, scenario: Scenario) -> list[str]:
        """Return the fields as table cells (a `clients` row without a cipher: the client's own choice)."""
        if scenario.client and scenario.cipher is None and scenario.kind is not Kind.LATENCY:
            return [scenario.tool, OWN_CHOICE] if scenario.tool else [OWN_CHOICE, ""]
        cells = [getattr(scenario, f) or blank for f, blank in zip(self.fields, self.blanks, strict=True)]
        first = cells[0] or ("your default" if scenario.kind is Kind.THROUGHPUT else "")
        return [first + label(scenario.remedy), *cells[1:]]


@dataclass(frozen=True)
class Metric:
    """How the values of one kind read: unit, scale, which way is better, row labels, result groups, costs."""

    kind: Kind
    unit: str  # a unit of units.UNITS: its symbol is shown to people, its stored unit is Sample.value's
    higher_is_better: bool
    labels: Labels
    groups: Mapping[Direction | None, ResultGroup]
    costs_per_gib: bool  # CPU per GiB moved (transfers), else per sample (connections)
    phases: bool  # samples carry a connection phase breakdown
    untimed: tuple[str, ...] = ()  # scenario fields pinned for the run but outside the timed part

    @property
    def stored_unit(self) -> str:
        """Return the unit of Sample.value."""
        return UNITS[self.unit].stored

    @property
    def scale(self) -> float:
        """Return the factor from a stored value to the value shown."""
        return UNITS[self.unit].scale

    def format(self, value: float) -> str:
        """Format a stored value in the shown unit (no unit text)."""
        return format_value(self.unit, value)

    def group(self, scenario: Scenario) -> ResultGroup:
        """Return the result group a scenario belongs to (a library's in-process connections apart: no process
        starts in them)."""
        if scenario.is_check:
            return CHECK_GROUPS[scenario.direction]
        return IN_PROCESS_GROUP if scenario.mode == IN_PROCESS else self.groups[scenario.direction]

    def label(self, scenario: Scenario) -> str:
        """Return the row label: the name, then the direction."""
        name = self.labels.name(scenario)
        return name if scenario.direction is None else f"{name} {scenario.direction}"

    def better(self, a: float, b: float) -> bool:
        """Return True when value a is better than value b."""
        return a > b if self.higher_is_better else a < b


LATENCY_SAMPLE = "spawn -> authenticated -> `true` -> exit"
TRANSFER_NOTE = "handshake excluded, higher is better"
TOOL_NOTE = "a file into tmpfs, its first 20 % excluded, higher is better"
METRICS: dict[Kind, Metric] = {
    Kind.LATENCY: Metric(
        kind=Kind.LATENCY,
        unit="ms",
        higher_is_better=False,
        labels=Labels(
            fields=("kex", "hostkey"),
            titles=("key exchange", "host key"),
            blanks=("default", "default"),
            missing=("default kex", "default host key"),
            join=" / ",
        ),
        groups={None: ResultGroup("latency", f"Connection time ({LATENCY_SAMPLE}), lower is better")},
        costs_per_gib=False,
        phases=True,
    ),
    Kind.THROUGHPUT: Metric(
        kind=Kind.THROUGHPUT,
        unit="MB/s",
        higher_is_better=True,
        labels=Labels(
            fields=("cipher", "mac"), titles=("cipher", "MAC"), blanks=("", "(AEAD)"), missing=("", ""), join=" + "
        ),
        groups={
            Direction.DOWN: ResultGroup("download", f"Throughput, download (server -> client), {TRANSFER_NOTE}"),
            Direction.UP: ResultGroup("upload", f"Throughput, upload (client -> server), {TRANSFER_NOTE}"),
        },
        costs_per_gib=True,
        phases=False,
        untimed=("kex",),  # a sweep pins a quick kex for the handshake before each (untimed) transfer
    ),
    Kind.TOOL: Metric(
        kind=Kind.TOOL,
        unit="MB/s",
        higher_is_better=True,
        labels=Labels(
            fields=("tool", "algorithms"),
            titles=("tool", "cipher [+ MAC]"),
            blanks=("", "(no SSH)"),
            missing=("", "no SSH"),
            join=" + ",
        ),
        groups={
            Direction.DOWN: ResultGroup("tool download", f"File copy tools, download (server -> client), {TOOL_NOTE}"),
            Direction.UP: ResultGroup("tool upload", f"File copy tools, upload (client -> server), {TOOL_NOTE}"),
        },
        costs_per_gib=True,
        phases=False,
    ),
}
IN_PROCESS_GROUP = ResultGroup(
    "latency in-process",
    "Connection time inside one process (connect -> authenticated "
    "-> `true` -> closed; the process's second connection), lower is better",
)
CHECK_NOTE = "copies of another size than tune's, spawn to exit: a predicted gain's test, higher is better"
CHECK_GROUPS = {  # `tune`'s check of a gain predicted for another copy size (analyse/sizes.py)
    None: ResultGroup("check", f"Check copies, {CHECK_NOTE}"),
    Direction.DOWN: ResultGroup("download check", f"Check copies, download, {CHECK_NOTE}"),
    Direction.UP: ResultGroup("upload check", f"Check copies, upload, {CHECK_NOTE}"),
}
GROUP_ORDER = (
    "latency",
    IN_PROCESS_GROUP.name,
    *(g.name for k in (Kind.THROUGHPUT, Kind.TOOL) for g in METRICS[k].groups.values()),
    *(g.name for g in CHECK_GROUPS.values()),
)


@dataclass(frozen=True)
class Scenario:
    """One configuration to measure: a connection (kex x host key) or a transfer (cipher x MAC x direction)."""

    kind: Kind
    kex: str | None = None  # None: whatever the client's default proposal negotiates
    hostkey: str | None = None
    cipher: str | None = None
    mac: str | None = None
    direction: Direction | None = None
    server: str | None = None  # embedded server name in a `servers` run (not an ssh option)
    profile: str | None = None  # client profile (default / strict) a `servers` latency scenario stands for
    tool: str | None = None  # `tools` runs: scp, sftp, rsync (over ssh), tcp or rsyncd (plaintext baselines)
    remedy: Remedy | None = None  # `tune` runs: what a row changes (N connections, compression, a master, ...)
    client: str | None = None  # `clients` runs: openssh, dropbear, paramiko, ... (None: openssh, as every older run)
    mode: str | None = None  # `clients` runs: tuned settings, or in-process connections (None: default, cold start)
    load: StepKey | None = None  # `load` runs: the step (an offered rate, a burst, sessions held)

    @property
    def metric(self) -> Metric:
        """Return how this scenario's values read."""
        return METRICS[self.kind]

    @property
    def algorithms(self) -> str | None:
        """Return the cipher, with its MAC when one is pinned (`aes128-ctr + hmac-sha2-256-etm@openssh.com`)."""
        if self.cipher is None:
            return None
        return self.cipher if self.mac is None else f"{self.cipher} + {self.mac}"

    @property
    def is_check(self) -> bool:
        """Return True for `tune`'s check of a prediction: a copy whose remedy carries its own size (Remedy.copy)."""
        return self.remedy is not None and bool(self.remedy.copy)

    @functools.cached_property
    def key(self) -> str:
        """Return a stable identifier, unique within a run (made once: a sample asks for it several times)."""
        named = [f"{name}={getattr(self, name)}" for name in SCENARIO_FIELDS if getattr(self, name) is not None]
        return " ".join([self.kind.value, *named])

    @property
    def label(self) -> str:
        """Return a short human label."""
        where = "" if self.server is None else f"{self.server}: "
        if self.profile is not None:
            return f"{where}{self.profile} profile, host key {self.hostkey}"
        step = "" if self.load is None else f"{self.load}: "  # a load step is what its row measures: `20/s: ...`
        return where + step + self.metric.label(self)

    def match_key(self) -> tuple[Any, ...]:
        """Return what this scenario measures, for matching across runs (untimed pinned fields left out)."""
        fields = {f: None if f in self.metric.untimed else getattr(self, f) for f in SCENARIO_FIELDS}
        return (self.kind, *(fields | {"client": self.client or OPENSSH_CLIENT}).values())

    def ssh_options(self) -> list[str]:
        """Return the `-o` options that pin this scenario's algorithms."""
        pinned = {
            "KexAlgorithms": self.kex,
            "HostKeyAlgorithms": self.hostkey,
            "Ciphers": self.cipher,
            "MACs": self.mac,
        } | ssh_options(self.remedy)
        return [arg for opt, v in pinned.items() if v is not None for arg in ("-o", f"{opt}={v}")]

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict of the fields that are set."""
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # not asdict: a StepKey is its text
        return {k: str(v) for k, v in values.items() if v is not None}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Scenario:
        """Rebuild a scenario stored with `to_dict`."""
        direction = data.get("direction")
        load, remedy = data.get("load"), data.get("remedy")
        named = {f: data.get(f) for f in SCENARIO_FIELDS if f not in ("direction", "load", "remedy")}
        return cls(
            kind=Kind(data["kind"]),
            direction=Direction(direction) if direction else None,
            load=StepKey.parse(load) if load else None,
            remedy=Remedy.parse(remedy) if remedy else None,
            **named,
        )


def client_name(client: str, mode: str | None) -> str:
    """Return a client with its settings as a label names them: `paramiko`, `paramiko (64 MiB window)`,
    `russh in-process`."""
    if mode == "tuned":
        row = known(client)
        return f"{client} ({(row.setting if row else None) or 'its settings'})"
    return client + (f" {mode}" if mode else "")
