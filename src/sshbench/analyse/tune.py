"""What a `tune` run found (pure): each direction's default copy and what bounds it, and each remedy measured
against it, paired per round, with the lines or command that give it."""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sshbench.analyse import sizes
from sshbench.analyse.claims import bounds
from sshbench.analyse.claims.fastest import pq_loss
from sshbench.analyse.results import Row, ranked, ratio_of
from sshbench.analyse.sizes import Check
from sshbench.environment import Environment
from sshbench.joboptions import JobOptions
from sshbench.model import BoundKind, Scenario
from sshbench.ratios import MIN_PAIRS, Verdict, judge, settled, worth_a_change
from sshbench.records import RunRecord, StoredScenario
from sshbench.remedy import ONE_CONNECTION, widens

GROUPS = ("download", "upload", "latency")


@dataclass(frozen=True)
class Remedy:
    """One remedy against its group's default: the row, the verdict on its ratio, and how to get it."""

    row: Row
    verdict: Verdict | None  # None: too few samples to pair
    config: tuple[str, ...]  # ssh_config lines (empty for a command)
    command: str  # a command to run instead (several connections at once), else ""
    measured: bool = True  # the config/command itself was measured (the split command is advice around it)
    sizes: tuple[tuple[int, Verdict | None], ...] = ()  # a copy remedy's gain per copy size (analyse/sizes.py)
    at_copy: Verdict | None = None  # with --for-size: the gain on the copy measured (`verdict` is for that size)
    check: Check | None = None  # the gain predicted for CHECK_SIZE against copies of that size measured

    @property
    def helps(self) -> bool:
        """Return True when the remedy is worth a change: faster than the default, from 6 paired rounds or more,
        with its whole 95 % interval beyond the margin (ratios.worth_a_change)."""
        return worth_a_change(self.verdict)

    @property
    def settled(self) -> bool:
        """Return True when more rounds would not change what the remedy's verdict says (ratios.settled)."""
        return settled(self.verdict)


@dataclass(frozen=True)
class Finding:
    """One group of a tune run: the default row, what bounds it, and the remedies."""

    group: str
    default: Row  # as diagnosed: a transfer's steady rate (handshake excluded), or a fresh login
    copy: Row  # as remedies are compared with it: one connection, spawn to exit (a fresh login for connections)
    bound: bounds.Bound | None
    remedies: tuple[Remedy, ...]
    copy_bytes: int | None = None  # the bytes of one copy (its median over samples)
    advice: tuple[str, ...] = ()  # what else the bound calls for that this run could not measure (said so)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form."""
        return {
            "group": self.group,
            "default": self.default.scenario.to_dict(),
            "copy": self.copy.scenario.to_dict(),
            "copy_bytes": self.copy_bytes,
            "bound": None if self.bound is None else self.bound.to_dict(),
            "advice": list(self.advice),
            "remedies": [
                {
                    "scenario": r.row.scenario.to_dict(),
                    "verdict": r.verdict.to_dict() if r.verdict else None,
                    "config": list(r.config),
                    "command": r.command,
                    "helps": r.helps,
                    "settled": r.settled,
                    "by_size": [
                        {"bytes": size, "verdict": v.to_dict() if v else None, "predicted": size != self.copy_bytes}
                        for size, v in r.sizes
                    ],
                    **({"measured_copy": r.at_copy.to_dict()} if r.at_copy else {}),
                    **({"check": r.check.to_dict()} if r.check else {}),
                }
                for r in self.remedies
            ],
        }


def diagnose_defaults(stored: Sequence[StoredScenario], env: Environment) -> dict[str, BoundKind]:
    """Return each direction's bound kind from the default copies stored so far (the job's step 2)."""
    groups = ranked(stored, 0.05)
    lim = bounds.limits(env, evidence=True)
    out = {}
    for group in ("download", "upload"):
        row = _default(groups.get(group, []))
        found = bounds.diagnose(row, lim) if row is not None and lim is not None else None
        out[group] = found.bound.kind if found is not None else BoundKind.UNKNOWN
    return out


def _default(rows: Sequence[Row]) -> Row | None:
    """Return a group's default as measured for the diagnosis (the client's own algorithms; a transfer's steady
    rate, or a fresh login)."""
    return next((r for r in rows if _plain(r) and r.scenario.remedy is None), None)


def _plain(row: Row) -> bool:
    """Return True for a row with the client's own algorithms (no cipher or kex pinned)."""
    return row.scenario.cipher is None and row.scenario.kex is None


def _copy(rows: Sequence[Row]) -> Row | None:
    """Return a group's default as remedies are compared with it (one connection, spawn to exit; a fresh login)."""
    remedy = ONE_CONNECTION if rows and rows[0].scenario.kind.value != "latency" else None
    return next((r for r in rows if _plain(r) and r.scenario.remedy == remedy), None)


def _how(row: Row, host: str) -> tuple[tuple[str, ...], str, bool]:
    """Return the ssh_config lines or the command that give a remedy, and whether they themselves were measured."""
    sc = row.scenario
    if sc.cipher is not None:
        return (f"Ciphers {sc.cipher}",), "", True
    if sc.kex is not None:
        return (f"KexAlgorithms {sc.kex}",), "", True
    remedy = sc.remedy or ONE_CONNECTION
    return remedy.given(host, sc.direction.value if sc.direction else None)


def advice(
    bound: bounds.Bound | None, target: str, payload: str, window_measured: bool = False, logins: int | None = None
) -> tuple[str, ...]:
    """Return the remedies a bound calls for that a tune run does not measure, in words that say so (`logins`: how
    many connections the server lets log in at once from one address, where it is known to limit them)."""
    kind = bound.kind.value if bound is not None else ""
    out = []
    if logins is not None and kind in ("network", "ssh-window", "tcp-window", "unknown", ""):  # where N were tried
        out.append(
            f"more than {logins} connections at once: not tried: Dropbear resets a connection from one "
            f"address while {logins} others are still logging in (MAX_UNAUTH_PER_IP; a build may set fewer)"
        )
    if kind == "ssh-window" and not window_measured:
        out.append(
            "a larger SSH channel window: OpenSSH's is fixed (about 2 MiB in flight per round trip); "
            "HPN-SSH's patched ssh and sshd grow it with the TCP window, Dropbear's -W sets its own "
            "(advice, not measured here: this run drove your ssh and server as they are)"
        )
    if kind == "tcp-window":
        out.append(
            "larger TCP buffers on both hosts: the maximum of net.ipv4.tcp_rmem and tcp_wmem at least the "
            "path's bandwidth x round trip (advice, not measured here: it needs root on both ends)"
        )
    if kind in ("network", "ssh-window", "tcp-window") and payload == "zero":
        out.append(
            f"Compression=yes: not measured on zeros, which say nothing of your data; `sshbench tune {target} "
            "--payload text` measures it on a text corpus"
        )
    return tuple(out)


def _better_first(remedy: Remedy, group: str) -> float:
    """Return a sort key that puts the larger gain first (for connections, the shorter time)."""
    value = remedy.verdict.ratio.value if remedy.verdict else 0.0
    return value if group == "latency" else -value


def findings(run: RunRecord, stored: Sequence[StoredScenario]) -> list[Finding]:
    """Return what a tune run found, per group."""
    groups = ranked(stored, run.options.plan.ci_target, run.options.margin)
    lim = bounds.limits(run.environment, evidence=bounds.has_evidence(stored))
    out, logins = [], run.discovery.most_logins() if run.discovery else None
    by = {st.scenario: st for st in stored}
    for group in GROUPS:
        rows = [r for r in groups.get(group, []) if r.summary is not None]
        default, base = _default(rows), _copy(rows)
        if default is None:
            continue
        found = bounds.diagnose(default, lim, rows) if lim is not None and group != "latency" else None
        remedies = []
        for r in rows:
            if r is base or r is default or base is None:
                continue
            ratio = ratio_of(r, base)
            verdict = (
                judge(ratio, r.scenario.metric.higher_is_better, run.options.margin)
                if ratio is not None and ratio.n >= MIN_PAIRS
                else None
            )  # 3 rounds, as a rank
            config, command, measured = _how(r, run.target)
            remedy = Remedy(r, verdict, config, command, measured)
            remedies.append(_sized(remedy, base, by, run.options) if base and group != "latency" else remedy)
        remedies.sort(key=lambda m: (not m.helps, _better_first(m, group)))
        sizes = [
            s.nbytes
            for st in stored
            if base and st.scenario == base.scenario
            for s in st.samples
            if s.measured and s.nbytes
        ]
        copy_bytes = int(statistics.median(sizes)) if sizes else None
        bound = found.bound if found else None
        widened = any(widens(r.row.scenario.remedy) for r in remedies)
        out.append(
            Finding(
                group,
                default,
                base or default,
                bound,
                tuple(remedies),
                copy_bytes,
                advice(bound, run.target, run.options.payload, widened, None if group == "latency" else logins),
            )
        )
    return out


def _sized(remedy: Remedy, base: Row, by: Mapping[Scenario, StoredScenario], opts: JobOptions) -> Remedy:
    """Return the remedy with its gain per copy size (sizes.SIZES and --for-size) from the run's stored scenarios
    `by` scenario; with --for-size, its verdict is the one for that size, and the measured copy's is kept beside
    it."""
    a, b = by.get(base.scenario), by.get(remedy.row.scenario)
    if a is None or b is None:
        return remedy
    wanted = sorted({*sizes.SIZES, *([opts.for_size] if opts.for_size else [])})
    found = sizes.gains(a, b, wanted, opts.margin)
    if not found:
        return remedy
    check = sizes.check_of(remedy.row.scenario, base.scenario, by, dict(found).get(sizes.CHECK_SIZE), opts.margin)
    chosen = dict(found).get(opts.for_size) if opts.for_size else None
    if opts.for_size is None or chosen is None:
        return dataclasses.replace(remedy, sizes=found, check=check)
    return dataclasses.replace(remedy, sizes=found, verdict=chosen, at_copy=remedy.verdict, check=check)


def paste(found: Sequence[Finding]) -> Mapping[str, list[str]]:
    """Return the ssh_config lines of the remedies worth a change (Remedy.helps), and the commands: a transfer's best
    remedy (they were measured one at a time, never together), and for connections the best master and the best kex
    (a master's first login still runs a key exchange). One Ciphers line, where a direction's best remedy is a
    cipher: the cipher that helps in the most such directions (then the larger gain), since ssh takes the first
    Ciphers line it reads."""
    lines: list[str] = []
    commands: list[str] = []
    ciphers: dict[str, list[float]] = {}
    for f in found:
        helped = [r for r in f.remedies if r.helps]
        best: list[Remedy] = helped[:1]
        if f.group == "latency":
            masters = [r for r in helped if r.row.scenario.kex is None]
            best = [*masters[:1], *[r for r in helped if r.row.scenario.kex is not None][:1]]
        elif best and best[0].row.scenario.cipher:  # each direction's best cipher, the others' too where they help
            for r in helped:
                if r.row.scenario.cipher and r.verdict:
                    ciphers.setdefault(r.row.scenario.cipher, []).append(abs(r.verdict.ratio.value - 1))
        for r in best:
            if r.row.scenario.cipher is None:
                lines += [line for line in r.config if line not in lines]
            if r.command and r.command not in commands:
                commands.append(r.command)
    if ciphers:
        cipher = max(ciphers, key=lambda c: (len(ciphers[c]), sum(ciphers[c])))
        lines.insert(0, f"Ciphers {cipher}")
    return {"ssh_config": lines, "commands": commands}


def losses(run: RunRecord, pasted: Mapping[str, list[str]]) -> list[str]:
    """Return what the pasted lines (`paste`) lose against the client's defaults (a post-quantum key exchange)."""
    kex = next((line.split(" ", 1)[1] for line in pasted["ssh_config"] if line.startswith("KexAlgorithms ")), None)
    loss = pq_loss(run.discovery.default() if run.discovery else None, kex)
    return [] if loss is None else [loss]


def undecided(found: Sequence[Finding]) -> list[Remedy]:
    """Return the remedies whose verdict against the default is not settled (fewer than 6 paired rounds, or an
    interval that still straddles 1 or the margin)."""
    return [r for f in found for r in f.remedies if not r.settled]


def measured_commands(found: Sequence[Finding]) -> set[str]:
    """Return the pasted commands that were themselves measured (a server's option), not advice around it."""
    return {r.command for f in found for r in f.remedies if r.command and r.measured}
