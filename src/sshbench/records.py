"""What a run records besides its samples: discovery, the servers of a `servers` run, and the stored run itself
(its environment is environment.py).

Each record is a frozen dataclass with `to_dict` (the JSON stored in SQLite and printed by --json) and
`from_dict` (tolerant of fields that older runs did not store), so every reader works with named fields.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sshbench import products
from sshbench.environment import EmbeddedInfo, Environment
from sshbench.joboptions import JobOptions
from sshbench.model import RunStatus, Sample, Scenario, is_local, not_measurable
from sshbench.runkinds import RunKind

SCHEMA_VERSION = 10  # of the stored data: the SQLite schema (its history is in storage/schema.py) and --json documents
ALGORITHM_KINDS = ("kex", "hostkey", "cipher", "mac")
# Pseudo-algorithms that signal extensions inside the kex list; they cannot be negotiated alone.
PSEUDO_PREFIXES = ("ext-info-", "kex-strict-")


def is_measurable(kind: str, name: str) -> bool:
    """Return False for pseudo-algorithms, certificates and security-key types (not measurable here)."""
    if kind == "kex":
        return not name.startswith(PSEUDO_PREFIXES)
    if kind == "hostkey":
        return "-cert-" not in name and not name.startswith("sk-")
    return True


class Rating(enum.StrEnum):
    """ssh-audit's verdict on one algorithm."""

    OK = "ok"
    NOT_PQ = "ok, not post-quantum"
    WARN = "warn"
    FAIL = "fail"
    UNKNOWN = "unknown"


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
class AlgorithmRating:
    """An algorithm's rating and the reasons ssh-audit gives."""

    kind: str
    name: str
    rating: Rating
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class ServerOffer:
    """What a server offers in its KEXINIT (server-to-client lists for ciphers and MACs)."""

    banner: str
    kex: tuple[str, ...]
    hostkeys: tuple[str, ...]
    ciphers: tuple[str, ...]
    macs: tuple[str, ...]
    compressions: tuple[str, ...] = ()

    def lists(self) -> dict[str, tuple[str, ...]]:
        """Return the offer per algorithm kind."""
        return {"kex": self.kex, "hostkey": self.hostkeys, "cipher": self.ciphers, "mac": self.macs}


@dataclass(frozen=True)
class Negotiated:
    """The algorithms one connection agreed on, read from `ssh -v`."""

    kex: str | None
    hostkey: str | None
    cipher: str | None
    mac: str | None
    server_version: str | None


@dataclass(frozen=True)
class Profile:
    """What one client profile negotiated, or why it failed to connect."""

    name: str
    negotiated: Negotiated | None
    failure: str | None


def _negotiated_dict(n: Negotiated | None) -> dict[str, Any] | None:
    """Return a negotiation as stored (None when the profile failed)."""
    return None if n is None else dict(vars(n))


def _tuples(data: Mapping[str, Sequence[str]] | None) -> dict[str, tuple[str, ...]]:
    """Return a kind -> names mapping with tuples."""
    return {k: tuple(v) for k, v in (data or {}).items()}


@dataclass(frozen=True)
class Discovery:
    """Everything learned about client and server before measuring."""

    client: dict[str, tuple[str, ...]]
    defaults: dict[str, tuple[str, ...]]
    server: ServerOffer | None
    server_error: str | None
    profiles: tuple[Profile, ...]
    ratings: dict[str, dict[str, AlgorithmRating]] = field(default_factory=dict)
    ssh_audit_version: str = ""

    def most_logins(self) -> int | None:
        """Return how many connections from one address the server lets log in at once (None: no limit known here;
        OpenSSH's MaxStartups starts refusing at 10)."""
        product = products.from_banner(self.server.banner) if self.server is not None else None
        return product.logins_per_address if product else None

    def shared(self, kind: str) -> tuple[str, ...]:
        """Return the measurable algorithms of a kind both sides support, in the client's order."""
        offered = self.server_lists().get(kind)
        return tuple(n for n in self.client[kind] if is_measurable(kind, n) and (offered is None or n in offered))

    def server_lists(self) -> dict[str, tuple[str, ...]]:
        """Return the server's offer per kind ({} when it could not be probed)."""
        return {} if self.server is None else self.server.lists()

    def offered(self, kind: str) -> tuple[str, ...]:
        """Return what the server offers of a kind (or the shared list when its KEXINIT is unknown)."""
        return self.server_lists().get(kind) or self.shared(kind)

    def preferred(self, kind: str) -> str | None:
        """Return the algorithm of a kind that the client would pick by default (first shared in its proposal)."""
        shared = self.shared(kind)
        return next((n for n in self.defaults.get(kind, ()) if n in shared), shared[0] if shared else None)

    def default(self) -> Negotiated | None:
        """Return what the plain client negotiated, if it connected."""
        return self.profiles[0].negotiated if self.profiles else None

    def profile(self, name: str) -> Profile | None:
        """Return the profile of that name (default, strict), if it was tried."""
        return next((p for p in self.profiles if p.name == name), None)

    def rating(self, kind: str, name: str | None) -> Rating | None:
        """Return the stored rating of an algorithm, if it was rated."""
        found = self.ratings.get(kind, {}).get(name or "")
        return None if found is None else found.rating

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready form for storage and --json."""
        server = None
        if self.server is not None:
            server = {**{k: list(v) for k, v in self.server.lists().items()}, "banner": self.server.banner}
        return {
            "client": {k: list(v) for k, v in self.client.items()},
            "client_defaults": {k: list(v) for k, v in self.defaults.items()},
            "server": server,
            "server_error": self.server_error,
            "profiles": [
                {"name": p.name, "failure": p.failure, "negotiated": _negotiated_dict(p.negotiated)}
                for p in self.profiles
            ],
            "ratings": {
                kind: {n: {"rating": r.rating.value, "reasons": list(r.reasons)} for n, r in rs.items()}
                for kind, rs in self.ratings.items()
            },
            "ssh_audit_version": self.ssh_audit_version,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Discovery:
        """Rebuild a discovery stored with `to_dict`."""
        server = data.get("server")
        offer = None
        if server is not None:
            lists = _tuples({k: v for k, v in server.items() if k != "banner"})
            offer = ServerOffer(
                str(server.get("banner", "")),
                *(lists.get(k, ()) for k in ALGORITHM_KINDS),
            )
        profiles = tuple(
            Profile(p["name"], None if not p.get("negotiated") else Negotiated(**p["negotiated"]), p.get("failure"))
            for p in data.get("profiles", [])
        )
        ratings = {
            kind: {n: AlgorithmRating(kind, n, Rating(r["rating"]), tuple(r.get("reasons", ()))) for n, r in rs.items()}
            for kind, rs in (data.get("ratings") or {}).items()
        }
        return cls(
            client=_tuples(data.get("client")),
            defaults=_tuples(data.get("client_defaults")),
            server=offer,
            server_error=data.get("server_error"),
            profiles=profiles,
            ratings=ratings,
            ssh_audit_version=str(data.get("ssh_audit_version", "")),
        )


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
        return {"name": self.name, "destination": self.destination, "options": list(self.options),
                "groups": list(self.groups), "run": self.run, "failure": self.failure}  # fmt: skip

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
