"""Discovery: what the client offers, what the server offers, what they negotiate, and how each rates."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sshbench import audit
from sshbench.errors import SshbenchError
from sshbench.model import STRICT_PROFILE
from sshbench.parsers import Negotiated, parse_config_dump, parse_negotiated, parse_query, ssh_failure_reason
from sshbench.proc import run_quick, run_timed
from sshbench.target import Target

QUERIES = {"kex": "kex", "hostkey": "HostKeyAlgorithms", "cipher": "cipher", "mac": "mac"}
# Pseudo-algorithms that signal extensions inside the kex list; they cannot be negotiated alone.
PSEUDO_PREFIXES = ("ext-info-", "kex-strict-")


def is_measurable(kind: str, name: str) -> bool:
    """Return False for pseudo-algorithms, certificates and security-key types (not measurable here)."""
    if kind == "kex":
        return not name.startswith(PSEUDO_PREFIXES)
    if kind == "hostkey":
        return "-cert-" not in name and not name.startswith("sk-")
    return True


def client_algorithms(ssh: str) -> dict[str, tuple[str, ...]]:
    """Return what this ssh client supports, per kind, in its own order (`ssh -Q`)."""
    return {kind: parse_query(run_quick([ssh, "-Q", query]).stdout) for kind, query in QUERIES.items()}


DEFAULT_KEYWORDS = {"kex": "kexalgorithms", "hostkey": "hostkeyalgorithms", "cipher": "ciphers", "mac": "macs"}


def client_defaults(ssh: str, target: Target) -> dict[str, tuple[str, ...]]:
    """Return the client's default proposal per kind for this target, in preference order (`ssh -G`)."""
    done = run_quick([ssh, *target.options, "-G", target.destination])
    dump = parse_config_dump(done.stdout) if done.returncode == 0 else {}
    return {
        kind: tuple(dump.get(key, "").split(",")) if dump.get(key) else () for kind, key in DEFAULT_KEYWORDS.items()
    }


@dataclass(frozen=True)
class Profile:
    """What one client profile negotiated, or why it failed to connect."""

    name: str
    negotiated: Negotiated | None
    failure: str | None


def negotiate(ssh: str, target: Target, name: str, options: dict[str, str]) -> Profile:
    """Connect once with the given -o options and report what was negotiated."""
    extra = [arg for k, v in options.items() for arg in ("-o", f"{k}={v}")]
    done = run_timed(target.argv(ssh, extra, "true"), timeout=60)
    if done.returncode != 0:
        return Profile(name, None, ssh_failure_reason(done.texts))
    return Profile(name, parse_negotiated(done.texts), None)


def offer_lists(server: audit.ServerOffer | None) -> dict[str, tuple[str, ...]]:
    """Return a server's offer per kind ({} when it could not be probed)."""
    if server is None:
        return {}
    return {"kex": server.kex, "hostkey": server.hostkeys, "cipher": server.ciphers, "mac": server.macs}


@dataclass(frozen=True)
class Discovery:
    """Everything learned about client and server before measuring."""

    client: dict[str, tuple[str, ...]]
    defaults: dict[str, tuple[str, ...]]
    server: audit.ServerOffer | None
    server_error: str | None
    profiles: tuple[Profile, ...]
    ratings: dict[str, dict[str, audit.AlgorithmRating]] = field(default_factory=dict)

    def shared(self, kind: str) -> tuple[str, ...]:
        """Return the measurable algorithms of a kind both sides support, in the client's order."""
        offered = self.server_lists().get(kind)
        return tuple(n for n in self.client[kind] if is_measurable(kind, n) and (offered is None or n in offered))

    def server_lists(self) -> dict[str, tuple[str, ...]]:
        """Return the server's offer per kind ({} when it could not be probed)."""
        return offer_lists(self.server)

    def preferred(self, kind: str) -> str | None:
        """Return the algorithm of a kind that the client would pick by default (first shared in its proposal)."""
        shared = self.shared(kind)
        return next((n for n in self.defaults.get(kind, ()) if n in shared), shared[0] if shared else None)

    def default(self) -> Negotiated | None:
        """Return what the plain client negotiated, if it connected."""
        return self.profiles[0].negotiated if self.profiles else None

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready form for storage and --json."""
        return {
            "client": {k: list(v) for k, v in self.client.items()},
            "client_defaults": {k: list(v) for k, v in self.defaults.items()},
            "server": None if self.server is None else {**self.server_lists(), "banner": self.server.banner},
            "server_error": self.server_error,
            "profiles": [
                {
                    "name": p.name,
                    "failure": p.failure,
                    "negotiated": None if p.negotiated is None else vars(p.negotiated),
                }
                for p in self.profiles
            ],
            "ratings": {
                kind: {n: {"rating": r.rating.value, "reasons": list(r.reasons)} for n, r in rs.items()}
                for kind, rs in self.ratings.items()
            },
            "ssh_audit_version": audit.version(),
        }


def discover(ssh: str, target: Target) -> Discovery:
    """Query the client, probe the server's KEXINIT, and connect with the default and strict profiles."""
    client = client_algorithms(ssh)
    server, server_error = None, None
    if target.proxied:
        server_error = "host is reached through ProxyJump/ProxyCommand; its KEXINIT cannot be probed directly"
    else:
        try:
            server = audit.probe(target.host, target.port)
        except SshbenchError as exc:
            server_error = exc.cause
    profiles = (negotiate(ssh, target, "default", {}), negotiate(ssh, target, "strict", STRICT_PROFILE))
    names: dict[str, set[str]] = {k: set(v) for k, v in client.items()}
    for kind, offered in offer_lists(server).items():
        names[kind] |= set(offered)
    ratings = {
        kind: {n: audit.rate(kind, n) for n in sorted(ns) if is_measurable(kind, n)} for kind, ns in names.items()
    }
    return Discovery(client, client_defaults(ssh, target), server, server_error, profiles, ratings)
