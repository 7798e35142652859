"""The options of a job: everything that defines it, stored with the run so that `--resume` can finish it."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sshbench.model import Direction, Plan, RunKind


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
    sample_seconds: float = 1.0
    payload: str = "zero"
    plan: Plan = dataclasses.field(default_factory=Plan)
    servers: tuple[str, ...] = ()  # `servers` command: local:NAME specs
    emulate: str | None = None  # e.g. no-aesni, server:no-aesni (see targets/limits/emulation.py)
    server_cpu: float | None = None  # embedded servers: at most this many CPUs (0.5: half of one), a cgroup quota
    client_cpu: float | None = None  # the ssh clients: at most this many CPUs
    link: str | None = None  # embedded servers behind an emulated link: a preset or RATE,RTT[,LOSS] (link/links.py)
    policy: str = "modern"  # security policy for recommendations: a level or a TOML file
    pin: bool = False  # embedded servers: ssh client on one CPU, server on another
    kernel_evidence: bool = True  # read the transfer's sockets from the kernel while each sample runs (tcpinfo.py)
    inventory: str | None = None  # `fleet`: an Ansible inventory (file, directory or script) for ansible-inventory
    limit: str | None = None  # `fleet`: Ansible's --limit pattern
    hosts: str | None = None  # `fleet`: Host aliases of --ssh-config matching these patterns (comma-separated)
    hosts_file: str | None = None  # `fleet`: a file of destinations, one per line
    forks: int = 5  # `fleet`: hosts measured at once (throughput: always one at a time)
    tools: tuple[str, ...] = ()  # `tools`: scp, sftp, rsync (the plaintext baselines tcp and rsyncd come with them)
    margin: float = 0.05  # equivalence margin of the claims (sshbench.ratios): +-5 % is "equivalent"
    clients: tuple[str, ...] = ()  # `clients`: the clients to compare (registry names)

    @property
    def measures(self) -> bool:
        """Return True when the job measures anything (not discovery alone)."""
        return self.measure_latency or self.measure_throughput

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], command: str | None = None) -> JobOptions:
        """Rebuild options stored with `to_dict`; fields a run did not store take their defaults."""
        declared = {f.name: f for f in dataclasses.fields(cls)}  # a null keeps its default unless that is None
        fields = {k: v for k, v in data.items() if k in declared and (v is not None or declared[k].default is None)}
        fields["command"] = RunKind(command or fields.get("command", RunKind.RUN))
        fields["plan"] = Plan.from_dict(fields.get("plan") or {})
        if "directions" in fields:
            fields["directions"] = tuple(Direction(d) for d in fields["directions"])
        for name in ("kex", "hostkeys", "ciphers", "macs", "servers", "tools", "clients"):
            fields[name] = tuple(fields.get(name, ()))
        return cls(**fields)
