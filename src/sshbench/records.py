"""What a run records besides its samples: the servers of a `servers` run, a fleet's hosts, and the stored run
itself (its environment is environment.py; what it learned before measuring, discovery.py).

Each record is a frozen dataclass with `to_dict` (the JSON stored in SQLite and printed by --json) and
`from_dict` (tolerant of fields that older runs did not store), so every reader works with named fields.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sshbench.discovery import Discovery
from sshbench.environment import EmbeddedInfo, Environment
from sshbench.joboptions import JobOptions
from sshbench.model import Scenario, is_local
from sshbench.runkinds import RunKind
from sshbench.samples import RunStatus, Sample, not_measurable

SCHEMA_VERSION = 12  # of the stored data: the SQLite schema (its history is in storage/schema.py) and --json documents


@dataclass(frozen=True)
class MemoryRecord:
    """Memory of one process role (or the client) of one server in one state, summed over its processes."""

    server: str
    state: str  # idle | session | transfer
    role: str  # listener | monitor | pre-auth | session | command | client
    processes: int
    vsz: int  # bytes
    rss: int  # bytes
    pss: int | None  # bytes (None when /proc/PID/smaps_rollup is not readable)


@dataclass(frozen=True)
class ServerReport:
    """One server of a `servers` run: skipped (not installed), failed to start, or started and discovered."""

    name: str
    spec: str
    skipped: str | None = None  # why it cannot run here, with the fix
    failed: str | None = None  # why it did not start
    embedded: EmbeddedInfo | None = None
    discovery: Discovery | None = None
    memory_problems: tuple[str, ...] = ()

    @property
    def remote(self) -> bool:
        """Return True for a host of the user's measured beside the embedded servers."""
        return not is_local(self.spec)

    def to_dict(self) -> dict[str, Any]:
        """Return the stored form."""
        data: dict[str, Any] = {"spec": self.spec}
        for key in ("skipped", "failed"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        if self.embedded is not None:
            data.update(self.embedded.to_dict())
        if self.discovery is not None:
            data["discovery"] = self.discovery.to_dict()
        if self.memory_problems:
            data["memory_problems"] = list(self.memory_problems)
        return data

    @classmethod
    def from_dict(cls, name: str, data: Mapping[str, Any]) -> ServerReport:
        """Rebuild the stored form."""
        disc = data.get("discovery")
        return cls(
            name=name,
            spec=str(data.get("spec", "")),
            skipped=data.get("skipped"),
            failed=data.get("failed"),
            embedded=EmbeddedInfo.from_dict(data),
            discovery=Discovery.from_dict(disc) if disc else None,
            memory_problems=tuple(data.get("memory_problems") or ()),
        )


@dataclass(frozen=True)
class FleetHost:
    """One host of a fleet: how ssh reaches it, its inventory groups, and its own run (or why it has none)."""

    name: str  # the inventory hostname, ssh_config alias or destination, as the user names it
    destination: str  # what ssh is given
    options: tuple[str, ...] = ()  # ssh options from the inventory (-p, -l, -i, -o HostName=..., common args)
    groups: tuple[str, ...] = ()
    run: int | None = None  # the host's run (discovery and samples), once it was reached
    failure: str | None = None  # why it was not measured (None: measured, or not yet)

    def to_dict(self) -> dict[str, Any]:
        """Return the stored form."""
        return {
            "name": self.name,
            "destination": self.destination,
            "options": list(self.options),
            "groups": list(self.groups),
            "run": self.run,
            "failure": self.failure,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FleetHost:
        """Rebuild the stored form."""
        return cls(
            name=str(data["name"]),
            destination=str(data.get("destination") or data["name"]),
            options=tuple(data.get("options") or ()),
            groups=tuple(data.get("groups") or ()),
            run=data.get("run"),
            failure=data.get("failure"),
        )


@dataclass(frozen=True)
class Fleet:
    """A fleet run's hosts and where they came from; each host's measurements are a run of its own."""

    source: str  # e.g. "Ansible inventory hosts.ini (--limit web)"
    hosts: tuple[FleetHost, ...]

    def to_dict(self) -> dict[str, Any]:
        """Return the stored form."""
        return {"fleet": {"source": self.source, "hosts": [h.to_dict() for h in self.hosts]}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Fleet:
        """Rebuild the stored form (the value under "fleet")."""
        return cls(str(data.get("source", "")), tuple(FleetHost.from_dict(h) for h in data.get("hosts", ())))


def servers_to_dict(reports: Sequence[ServerReport]) -> dict[str, Any]:
    """Return the stored discovery of a `servers` run."""
    return {"servers": {r.name: r.to_dict() for r in reports}}


@dataclass(frozen=True)
class RunRecord:
    """A stored run's header: what was asked, where, on what, and what discovery found."""

    id: int
    started_at: str
    updated_at: str
    status: RunStatus
    kind: RunKind
    target: str
    options: JobOptions
    environment: Environment
    discovery: Discovery | None = None  # a single target's discovery
    servers: tuple[ServerReport, ...] = ()  # a `servers` run: one report per server, in run order
    fleet: Fleet | None = None  # a `fleet` run: its hosts, each with its own run
    parent: int | None = None  # the fleet run this host's run belongs to

    @property
    def source(self) -> str:
        """Return `run N, YYYY-MM-DD`, naming where a recommendation came from."""
        return f"run {self.id}, {self.started_at[:10]}"

    def to_dict(self) -> dict[str, Any]:
        """Return the header as printed by --json (discovery is printed on its own)."""
        return {
            "id": self.id,
            "started_at": self.started_at,
            "updated_at": self.updated_at,
            "status": self.status.value,
            "command": self.kind.value,
            "target": self.target,
            "options": self.options.to_dict(),
            "environment": self.environment.to_dict(),
        }

    def discovery_dict(self) -> dict[str, Any] | None:
        """Return the stored discovery as printed by --json."""
        if self.kind.side_by_side:
            return servers_to_dict(self.servers)
        if self.fleet is not None:
            return self.fleet.to_dict()
        return None if self.discovery is None else self.discovery.to_dict()


def read_discovery(
    data: Mapping[str, Any] | None,
) -> tuple[Discovery | None, tuple[ServerReport, ...], Fleet | None]:
    """Split a stored discovery into a single target's discovery, a `servers` run's reports or a fleet."""
    if not data:
        return None, (), None
    if "servers" in data:
        return None, tuple(ServerReport.from_dict(n, d) for n, d in data["servers"].items()), None
    if "fleet" in data:
        return None, (), Fleet.from_dict(data["fleet"])
    return Discovery.from_dict(data), (), None


@dataclass(frozen=True)
class StoredScenario:
    """A stored scenario with its samples in the order they were taken."""

    id: int
    position: int
    scenario: Scenario
    failure: str | None
    samples: tuple[Sample, ...]

    def values(self) -> list[float]:
        """Return the measured values: successful samples after warm-up."""
        return [s.value for s in self.samples if s.measured and s.value is not None]

    @property
    def broke_off(self) -> bool:
        """Return True when it failed after it had worked (the server died, connections were cut): `--resume`
        tries it again, unlike a scenario that never worked or that the server does not support."""
        return self.failure is not None and not not_measurable(self.failure) and any(s.ok for s in self.samples)


@dataclass(frozen=True)
class StoredRun:
    """Everything stored about one run: header, scenarios with samples, memory snapshots."""

    run: RunRecord
    scenarios: tuple[StoredScenario, ...]
    memory: tuple[MemoryRecord, ...] = ()
    hosts: tuple[tuple[FleetHost, StoredRun | None], ...] = ()  # a fleet: each host with its run (scenarios above
    # are every host's, each named by its host in `Scenario.server`)
