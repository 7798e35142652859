"""The measuring commands' option values, parsed once from click into one typed record (`Given`), so that a wrong
option name is a type error (mypy --strict) and not a KeyError at run time. `build_options` (cli/measuring.py)
turns a `Given` into the job's `JobOptions`. The sampling options' defaults are the fields' (cli/decorators.py
reads them), so there is one place for each."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sshbench.joboptions import DEFAULT_MAX_ROUNDS, DEFAULT_ROUNDS, FleetOptions


@dataclass(frozen=True)
class Given:
    """Every value a measuring command's options can carry (a command leaves the ones it lacks at their default)."""

    db: Path | None = None
    as_json: bool = False
    resume: int | None = None
    target: str = "local"
    ssh_config: str | None = None
    ssh: str | None = None  # --ssh: an OpenSSH client by path
    kex: str | None = None
    hostkey: str | None = None
    cipher: str | None = None
    mac: str | None = None
    mac_mode: str | None = None
    full: bool = False
    direction: str = "both"
    size: str = "auto"
    for_size: str | None = None  # `tune`: the copy size its verdict and pasted lines are for
    payload: str = "zero"
    warmup: int = 1
    rounds: int = DEFAULT_ROUNDS
    max_rounds: int = DEFAULT_MAX_ROUNDS
    ci: str = "5%"
    max_time: str | None = "3m"  # the measuring commands' time budget
    margin: str | None = None
    pin: bool = False
    kernel_evidence: bool = True
    race: bool = True
    emulate: str | None = None
    server_cpu: str | None = None
    client_cpu: str | None = None
    cpu_period: str | None = None
    link: str | None = None
    preset: str | None = None
    policy_spec: str | None = None  # --policy as typed (sweep, fleet)
    policy: str | None = None  # the policy stored with the run: a level, or a policy file's absolute path
    top: int = 10
    servers: tuple[str, ...] = ()
    no_latency: bool = False
    no_throughput: bool = False
    tool: str | None = None
    client: str | None = None  # `clients`: --client, comma-separated
    server_specs: str | None = None  # `clients`: --server, comma-separated embedded servers
    inventory: str | None = None
    limit: str | None = None
    hosts_pattern: str | None = None
    hosts_file: str | None = None
    throughput: bool = False
    forks: int = FleetOptions.forks

    @classmethod
    def from_click(cls, values: Mapping[str, Any]) -> Given:
        """Return the record of a command's parsed values; a value without a field is a programming error."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - names)
        if unknown:
            raise TypeError(f"options without a field in cli.values.Given: {', '.join(unknown)}")
        return cls(**values)
