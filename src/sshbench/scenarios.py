"""Which scenarios to measure: pure planning from what both sides support and what the user asked."""

from __future__ import annotations

from collections.abc import Sequence

from sshbench.errors import ExitCode, SshbenchError
from sshbench.model import Direction, Kind, Scenario, is_aead
from sshbench.parsers import is_valid_algorithm

REFERENCE_CIPHER = "aes128-ctr"  # pairs with every MAC in `--macs each`


def check_requested(kind: str, requested: Sequence[str], client: Sequence[str], server: Sequence[str] | None) -> None:
    """Fail before measuring when a requested algorithm is malformed or not supported by either side."""
    for name in requested:
        if not is_valid_algorithm(name):
            raise SshbenchError(
                f"{name!r} is not a valid {kind} name",
                place=f"--{kind}",
                fix="list valid names with `sshbench algos`",
                code=ExitCode.USAGE,
            )
        if name not in client:
            raise SshbenchError(
                f"this ssh client does not support {kind} {name!r}",
                place=f"--{kind} (ssh -Q)",
                fix=f"choose from: {', '.join(client)}",
                code=ExitCode.UNSUPPORTED_ALGORITHM,
            )
        if server is not None and name not in server:
            raise SshbenchError(
                f"the server does not offer {kind} {name!r}",
                place=f"--{kind} (server KEXINIT)",
                fix=f"choose from what it offers: {', '.join(server)}",
                code=ExitCode.UNSUPPORTED_ALGORITHM,
            )


def latency_scenarios(
    kexes: Sequence[str], hostkeys: Sequence[str], default_kex: str, default_hostkey: str, full: bool
) -> list[Scenario]:
    """Return kex x host-key scenarios: the full product, or each kex with the default host key and vice versa."""
    if full:
        pairs = [(k, h) for k in kexes for h in hostkeys]
    else:
        pairs = [(k, default_hostkey) for k in kexes] + [(default_kex, h) for h in hostkeys]
    seen: dict[tuple[str, str], None] = dict.fromkeys(pairs)
    return [Scenario(Kind.LATENCY, kex=k, hostkey=h) for k, h in seen]


def cipher_mac_pairs(
    ciphers: Sequence[str], macs: Sequence[str], default_mac: str, mode: str
) -> list[tuple[str, str | None]]:
    """Return (cipher, MAC) pairs; AEAD ciphers never get a MAC (they ignore it).

    mode: `default` - each cipher with the default MAC; `each` - that, plus every MAC once with
    aes128-ctr; `all` - every non-AEAD cipher with every MAC.
    """
    plain = [c for c in ciphers if not is_aead(c)]
    pairs: list[tuple[str, str | None]] = [(c, None) for c in ciphers if is_aead(c)]
    if mode == "all":
        pairs += [(c, m) for c in plain for m in macs]
    else:
        pairs += [(c, default_mac) for c in plain]
        if mode == "each" and plain:
            reference = REFERENCE_CIPHER if REFERENCE_CIPHER in plain else plain[0]
            pairs += [(reference, m) for m in macs if m != default_mac]
    order = {c: i for i, c in enumerate(ciphers)}
    return sorted(dict.fromkeys(pairs), key=lambda p: order[p[0]])


def throughput_scenarios(
    pairs: Sequence[tuple[str, str | None]], directions: Sequence[Direction], kex: str | None = None
) -> list[Scenario]:
    """Return one scenario per (cipher, MAC) pair and direction (kex: pin the untimed handshake's kex)."""
    return [Scenario(Kind.THROUGHPUT, kex=kex, cipher=c, mac=m, direction=d) for c, m in pairs for d in directions]
