"""Which scenarios to measure: pure planning from what both sides support and what the user asked.

One planner per job shape: `plan_scenarios` for a single target (latency per kex x host key, throughput
per cipher x MAC x direction) and `plan_server` for one server of a `servers` run (profiles x host-key
types, ciphers x directions, with a reason for what the server does not support).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sshbench import hints, hostkeys, kex
from sshbench.discovery import Discovery
from sshbench.errors import ExitCode, SshbenchError
from sshbench.joboptions import JobOptions
from sshbench.model import STRICT_PROFILE, Direction, Kind, Scenario, is_aead
from sshbench.ssh.text import is_valid_algorithm

REFERENCE_CIPHER = "aes128-ctr"  # pairs with every MAC in `--macs each`
CHECK_PAIRS = 2  # pairs off both reference slices in `--macs each`: the factorised model's error is measured on them
HOSTKEY_FAMILIES = {
    "ed25519": ("ssh-ed25519",),
    "ecdsa": ("ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521"),
    "rsa": ("rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"),
}
PROFILES = ("default", "strict")


def check_requested(kind: str, requested: Sequence[str], client: Sequence[str], server: Sequence[str] | None) -> None:
    """Fail before measuring when a requested algorithm is malformed or not supported by either side."""
    for name in requested:
        if not is_valid_algorithm(name):
            raise SshbenchError(
                f"{name!r} is not a valid {kind} name",
                place=f"--{kind}",
                fix=f"list valid names with `{hints.sshbench('algos')}`",
                code=ExitCode.USAGE,
            )
        if name not in client:
            offered = server is not None and name in server  # the server has it: another client would measure it
            known = hostkeys.missing(name) if kind == "hostkey" else ""
            raise SshbenchError(
                f"this ssh client does not support {kind} {name!r}"
                + (", which the server offers" if offered else "")
                + known,
                place=f"--{kind} (ssh -Q)",
                fix=(
                    "give --ssh an OpenSSH client that supports it (a newer build in a prefix), or "
                    if offered or known
                    else ""
                )
                + f"choose from: {', '.join(client)}",
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
    aes128-ctr, plus CHECK_PAIRS pairs off both reference slices (the factorised model's own error is measured on
    them: analyse/sweep.py); `all` - every non-AEAD cipher with every MAC.
    """
    plain = [c for c in ciphers if not is_aead(c)]
    pairs: list[tuple[str, str | None]] = [(c, None) for c in ciphers if is_aead(c)]
    if mode == "all":
        pairs += [(c, m) for c in plain for m in macs]
    else:
        pairs += [(c, default_mac) for c in plain]
        if mode == "each" and plain:
            reference = REFERENCE_CIPHER if REFERENCE_CIPHER in plain else plain[0]
            others = [m for m in macs if m != default_mac]
            pairs += [(reference, m) for m in others]
            pairs += list(zip([c for c in plain if c != reference], others, strict=False))[:CHECK_PAIRS]
    order = {c: i for i, c in enumerate(ciphers)}
    return sorted(dict.fromkeys(pairs), key=lambda p: order[p[0]])


def throughput_scenarios(
    pairs: Sequence[tuple[str, str | None]], directions: Sequence[Direction], kex: str | None = None
) -> list[Scenario]:
    """Return one scenario per (cipher, MAC) pair and direction (kex: pin the untimed handshake's kex)."""
    return [Scenario(Kind.THROUGHPUT, kex=kex, cipher=c, mac=m, direction=d) for c, m in pairs for d in directions]


def plan_scenarios(opts: JobOptions, disc: Discovery) -> tuple[list[Scenario], list[Scenario]]:
    """Validate requested algorithms and return (latency, throughput) scenarios for a single target."""
    server = disc.server_lists()
    chosen: dict[str, tuple[str, ...]] = {}
    for kind, requested in (
        ("kex", opts.kex),
        ("hostkey", opts.hostkeys),
        ("cipher", opts.ciphers),
        ("mac", opts.macs),
    ):
        check_requested(kind, requested, disc.client[kind], server.get(kind))
        chosen[kind] = requested or disc.shared(kind)
    if not opts.kex:  # one algorithm under two names is measured once, under the name the client proposes first
        chosen["kex"] = kex.merged(chosen["kex"], disc.defaults.get("kex", ()))
    pick = {k: _default_choice(disc, k, chosen[k]) for k in chosen}
    lat: list[Scenario] = []
    if opts.measure_latency:
        full = opts.full_latency or bool(opts.kex and opts.hostkeys)
        lat = latency_scenarios(chosen["kex"], chosen["hostkey"], pick["kex"], pick["hostkey"], full=full)
    thr: list[Scenario] = []
    if opts.measure_throughput:
        mode = "all" if opts.macs else opts.mac_mode
        pairs = cipher_mac_pairs(chosen["cipher"], chosen["mac"], pick["mac"], mode)
        # A sweep spends its budget on data: the handshake before each transfer is not timed, so it
        # uses a quick kex instead of the default (sntrup761 costs ~70 ms more here).
        quick = next(iter(kex.cheap(disc.shared("kex"))), None) if opts.command.sweep else None
        thr = throughput_scenarios(pairs, opts.directions, kex=quick)
    return lat, thr


def _default_choice(disc: Discovery, kind: str, chosen: tuple[str, ...]) -> str:
    """Return the client's default algorithm of a kind if it is among those chosen, else the first chosen."""
    preferred = disc.preferred(kind)
    return preferred if preferred in chosen else (chosen[0] if chosen else "")


@dataclass(frozen=True)
class ServerPlan:
    """What to measure on one server, and what cannot be measured there (with the reason)."""

    latency: tuple[Scenario, ...]
    throughput: tuple[Scenario, ...]
    unsupported: tuple[tuple[Scenario, str], ...]


def plan_server(name: str, disc: Discovery, opts: JobOptions) -> ServerPlan:
    """Plan one server's scenarios: profiles x host keys, ciphers x directions; unsupported ones get a reason."""
    lat = _server_latency(name, disc, opts) if opts.measure_latency else []
    thr = _server_throughput(name, disc, opts) if opts.measure_throughput else []
    return ServerPlan(
        latency=tuple(sc for sc, why in lat if why is None),
        throughput=tuple(sc for sc, why in thr if why is None),
        unsupported=tuple((sc, why) for sc, why in [*lat, *thr] if why is not None),
    )


def _server_latency(name: str, disc: Discovery, opts: JobOptions) -> list[tuple[Scenario, str | None]]:
    """Return profile x host-key scenarios, each with why it cannot be measured (None when it can)."""
    shared_hk = disc.shared("hostkey")
    wanted = opts.hostkeys or tuple(
        next((a for a in algs if a in shared_hk), algs[0]) for algs in HOSTKEY_FAMILIES.values()
    )
    planned: list[tuple[Scenario, str | None]] = []
    for hostkey in wanted:
        for profile in PROFILES:
            strict = profile == "strict"
            sc = Scenario(
                Kind.LATENCY,
                kex=STRICT_PROFILE["KexAlgorithms"] if strict else None,
                hostkey=hostkey,
                cipher=STRICT_PROFILE["Ciphers"] if strict else None,
                server=name,
                profile=profile,
            )
            p = disc.profile(profile)
            why = None
            if hostkey not in shared_hk:
                why = f"unsupported: {name} offers host keys {', '.join(disc.offered('hostkey'))}"
            elif p is not None and p.negotiated is None:
                why = f"{profile} profile fails to connect: {p.failure}"
            planned.append((sc, why))
    return planned


def _server_throughput(name: str, disc: Discovery, opts: JobOptions) -> list[tuple[Scenario, str | None]]:
    """Return cipher x direction scenarios (default MAC), each with why it cannot be measured (None when it can)."""
    shared, mac = disc.shared("cipher"), disc.preferred("mac")
    unsupported = f"unsupported: {name} offers ciphers {', '.join(disc.offered('cipher'))}"
    planned: list[tuple[Scenario, str | None]] = []
    for cipher in opts.ciphers or shared:
        for direction in opts.directions:
            sc = Scenario(
                Kind.THROUGHPUT, cipher=cipher, mac=None if is_aead(cipher) else mac, direction=direction, server=name
            )
            planned.append((sc, None if cipher in shared else unsupported))
    return planned
