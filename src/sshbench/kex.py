"""The key-exchange catalog: one row per key exchange, with the facts sshbench reasons with.

A row names the algorithm, its other names (one algorithm registered twice, as `curve25519-sha256` and
`curve25519-sha256@libssh.org`), its family, whether it resists a quantum computer (a hybrid with a post-quantum
KEM), and the size of each side's key share in bytes as the protocol defines it (the client's ephemeral public key,
the server's reply: for a KEM hybrid the KEM's public key or ciphertext plus the classical share; None where the
group is negotiated, as in group exchange). `cheap` marks the cheapest of a family in CPU, the ones `tune` races a
fresh login with (a login's kex costs CPU, not round trips: docs/BENCHMARKS.md). Adding a key exchange is one row;
a name the catalog lacks is treated as classical, unknown size, and is measured under its own name.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class KexAlgorithm:
    """One key exchange: its names, family, post-quantum or not, and key-share bytes each way."""

    name: str
    family: str
    post_quantum: bool
    client_share: int | None  # bytes the client sends as its key share (None: depends on the negotiated group)
    server_share: int | None  # bytes the server replies with
    aliases: tuple[str, ...] = ()
    cheap: bool = False  # the cheapest of its family: raced by `tune` for a fresh login

    @property
    def names(self) -> tuple[str, ...]:
        """Return every name of this algorithm, its own first."""
        return (self.name, *self.aliases)


X25519 = 32
CATALOG = (
    KexAlgorithm(
        name="curve25519-sha256",
        family="curve25519",
        post_quantum=False,
        client_share=X25519,
        server_share=X25519,
        aliases=("curve25519-sha256@libssh.org",),
        cheap=True,
    ),
    KexAlgorithm(
        name="mlkem768x25519-sha256",
        family="mlkem768x25519",
        post_quantum=True,
        client_share=1184 + X25519,
        server_share=1088 + X25519,
        cheap=True,
    ),
    KexAlgorithm(
        name="ecdh-sha2-nistp256", family="ecdh-nistp", post_quantum=False, client_share=65, server_share=65, cheap=True
    ),
    KexAlgorithm(
        name="sntrup761x25519-sha512",
        family="sntrup761x25519",
        post_quantum=True,
        client_share=1158 + X25519,
        server_share=1039 + X25519,
        aliases=("sntrup761x25519-sha512@openssh.com",),
        cheap=True,
    ),
    KexAlgorithm(
        name="mlkem768nistp256-sha256",
        family="mlkem768nistp256",
        post_quantum=True,
        client_share=1184 + 65,
        server_share=1088 + 65,
    ),
    KexAlgorithm(
        name="mlkem1024nistp384-sha384",
        family="mlkem1024nistp384",
        post_quantum=True,
        client_share=1568 + 97,
        server_share=1568 + 97,
    ),
    KexAlgorithm(name="ecdh-sha2-nistp384", family="ecdh-nistp", post_quantum=False, client_share=97, server_share=97),
    KexAlgorithm(
        name="ecdh-sha2-nistp521", family="ecdh-nistp", post_quantum=False, client_share=133, server_share=133
    ),
    KexAlgorithm(
        name="curve448-sha512",
        family="curve448",
        post_quantum=False,
        client_share=56,
        server_share=56,
        aliases=("curve448-sha512@libssh.org",),
    ),
    KexAlgorithm(
        name="diffie-hellman-group14-sha256", family="dh-modp", post_quantum=False, client_share=256, server_share=256
    ),
    KexAlgorithm(
        name="diffie-hellman-group16-sha512", family="dh-modp", post_quantum=False, client_share=512, server_share=512
    ),
    KexAlgorithm(
        name="diffie-hellman-group18-sha512", family="dh-modp", post_quantum=False, client_share=1024, server_share=1024
    ),
    KexAlgorithm(
        name="diffie-hellman-group14-sha1", family="dh-modp", post_quantum=False, client_share=256, server_share=256
    ),
    KexAlgorithm(
        name="diffie-hellman-group1-sha1", family="dh-modp", post_quantum=False, client_share=128, server_share=128
    ),
    KexAlgorithm(
        name="diffie-hellman-group-exchange-sha256",
        family="dh-gex",
        post_quantum=False,
        client_share=None,
        server_share=None,
    ),
    KexAlgorithm(
        name="diffie-hellman-group-exchange-sha1",
        family="dh-gex",
        post_quantum=False,
        client_share=None,
        server_share=None,
    ),
)
_BY_NAME = {n: k for k in CATALOG for n in k.names}


def lookup(name: str) -> KexAlgorithm | None:
    """Return the catalog row of a key exchange under any of its names, or None for one the catalog lacks."""
    return _BY_NAME.get(name)


def canonical(name: str) -> str:
    """Return the catalog's own name for a key exchange (itself when it has no other, or is unknown)."""
    row = _BY_NAME.get(name)
    return row.name if row else name


def same(a: str | None, b: str | None) -> bool:
    """Return True when two names are one key exchange."""
    return a is not None and b is not None and canonical(a) == canonical(b)


def is_post_quantum(name: str) -> bool:
    """Return True for a key exchange that resists a quantum computer (a hybrid with a post-quantum KEM)."""
    row = _BY_NAME.get(name)
    return bool(row and row.post_quantum)


def other_names(name: str) -> tuple[str, ...]:
    """Return the other names the same key exchange goes by (empty for most)."""
    row = _BY_NAME.get(name)
    return tuple(n for n in row.names if n != name) if row else ()


def aliases_of(names: Iterable[str | None]) -> list[tuple[str, tuple[str, ...]]]:
    """Return each of the names that has other names none of which is among them, with those names (a row measured
    once, under one name, names the others)."""
    given = [n for n in dict.fromkeys(names) if n]
    return [(n, others) for n in given if (others := other_names(n)) and not set(others) & set(given)]


def merged(names: Iterable[str], preferred: Sequence[str] = ()) -> tuple[str, ...]:
    """Return the names with each algorithm once: of a set of aliases the one `preferred` lists first (the client's
    own proposal order), else the first given; the order of first appearance is kept."""
    given = list(dict.fromkeys(names))
    rank = {n: i for i, n in enumerate(preferred)}
    out: dict[str, str] = {}
    for name in given:
        key = canonical(name)
        if key not in out or rank.get(name, len(rank)) < rank.get(out[key], len(rank)):
            out[key] = name
    return tuple(out.values())


def cheap(shared: Iterable[str]) -> list[str]:
    """Return the cheap key exchanges of the shared names, in catalog order, each algorithm once (its shared name)."""
    offered = set(shared)
    return [next(n for n in k.names if n in offered) for k in CATALOG if k.cheap and offered & set(k.names)]
