"""What sshbench learns before it measures: the client's algorithms (`ssh -Q`) and defaults, the server's KEXINIT
offer, what a default and a strict client profile negotiate, and ssh-audit's ratings (stored with the run).

Each record is a frozen dataclass with `to_dict` (the JSON stored in SQLite and printed by --json) and
`from_dict` (tolerant of fields that older runs did not store)."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sshbench import products

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
