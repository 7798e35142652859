"""The host-key catalog: one row per host-key algorithm sshbench has facts of beyond its name.

A row names the signature algorithm, the `ssh-keygen -t` type of its key, whether it resists a quantum computer,
the sizes of its public key and signature in bytes as the protocol defines them (the raw key and signature, without
SSH's name and length framing), and the first OpenSSH release that has it. A refusal of a host key the client
lacks names that release; an algorithm the catalog lacks is measured under its own name.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HostKeyAlgorithm:
    """One host-key algorithm: its key type, post-quantum or not, key and signature bytes, and since when."""

    name: str
    keygen: str  # `ssh-keygen -t` of its key
    post_quantum: bool
    public_key: int  # bytes of the raw public key
    signature: int  # bytes of the raw signature
    since: str  # the first OpenSSH release with it
    about: str = ""  # what it is, in a few words, for a refusal


ED25519_KEY, ED25519_SIGNATURE = 32, 64
CATALOG = (
    HostKeyAlgorithm("ssh-ed25519", "ed25519", False, ED25519_KEY, ED25519_SIGNATURE, "6.5"),
    HostKeyAlgorithm(
        name="ssh-mldsa44-ed25519@openssh.com",
        keygen="mldsa44-ed25519",
        post_quantum=True,
        public_key=1312 + ED25519_KEY,  # ML-DSA-44's public key (FIPS 204) beside Ed25519's
        signature=2420 + ED25519_SIGNATURE,
        since="10.4",
        about="a hybrid post-quantum host key (ML-DSA-44 with Ed25519), experimental and out of the default lists",
    ),
)
_BY_NAME = {h.name: h for h in CATALOG}


def missing(name: str) -> str:
    """Return what the catalog says of a host key a client lacks (empty when it says nothing)."""
    row = _BY_NAME.get(name)
    if row is None or not row.about:
        return ""
    return f": {row.about}, which OpenSSH {row.since} adds (`ssh -Q key` of this client lists no {row.name})"
