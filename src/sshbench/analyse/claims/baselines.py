"""How close each copy tool comes to the same copy without SSH and to the crypto alone, and which baselines failed
(pure).

Per direction, each SSH tool's median rate over the median of the plaintext baseline measured in the same run:
raw TCP with socat for every tool, and the rsync daemon for rsync (the same tool without SSH); and over the lower
of the two sides' crypto ceilings for its cipher (`openssl speed -evp`). A baseline is a ceiling: SSH cannot move
bytes faster than the same copy without SSH. So a baseline whose median lies below an SSH copy's is a **failed
baseline** (a broken measurement, held back by its block size, buffers or CPU), reported with both numbers and
never turned into a share above 100 %; the same for a crypto ceiling below the copy it caps. A baseline that did
not run at all (its rows failed) is named with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sshbench.analyse.claims.core import Claim, ClaimKind, share
from sshbench.analyse.results import Row
from sshbench.model import PLAIN_TOOLS
from sshbench.units import format_value

PLAIN = PLAIN_TOOLS
BASELINE_NAMES = {"tcp": "plain TCP (socat)", "rsyncd": "the rsync daemon", "crypto": "the crypto ceiling"}


@dataclass(frozen=True)
class Efficiency:
    """One SSH tool's rate and its shares of the plaintext and crypto ceilings (None where unknown or failed)."""

    row: Row
    of_tcp: float | None
    of_rsyncd: float | None
    of_crypto: float | None
    failed: tuple[str, ...] = ()  # baselines that failed for this row: tcp, rsyncd, crypto


def _applies(tool: str | None, baseline: str) -> bool:
    """Return True when a baseline caps a tool: plain TCP caps every copy, the rsync daemon caps rsync."""
    return baseline == "tcp" or (baseline == "rsyncd" and tool == "rsync")


def efficiency(rows: Sequence[Row], ceilings: Mapping[str, Mapping[str, float]]) -> list[Efficiency]:
    """Return the SSH tools' rows of one direction with their shares, best rate first; a share above 100 % is a
    failed baseline, named in `failed`, never shown."""
    plain = {r.scenario.tool: r.summary.median for r in rows if r.scenario.tool in PLAIN and r.summary}
    out = []
    for r in rows:
        if r.scenario.tool in PLAIN or r.summary is None:
            continue
        rate, failed = r.summary.median, []
        sides = ceilings.get(r.scenario.cipher or "", {})
        caps = {b: plain.get(b) if _applies(r.scenario.tool, b) else None for b in PLAIN}
        caps["crypto"] = min(sides.values()) if sides else None
        shares: dict[str, float | None] = {}
        for name, cap in caps.items():
            shares[name] = rate / cap if cap else None
            if cap and rate > cap:
                failed.append(name)
                shares[name] = None
        out.append(Efficiency(r, shares["tcp"], shares["rsyncd"], shares["crypto"], tuple(failed)))
    return sorted(out, key=lambda e: -(e.row.summary.median if e.row.summary else 0.0))


def baseline_claims(way: str, rows: Sequence[Row], items: Sequence[Efficiency]) -> list[Claim]:
    """Return the claims on one direction's baselines: each failed baseline with its numbers, and each baseline
    that did not run with its reason."""
    out = []
    plain = {r.scenario.tool: r for r in rows if r.scenario.tool in PLAIN}
    for name in PLAIN:
        row = plain.get(name)
        if row is not None and row.summary is None and row.failure:
            text = f"{way}: {BASELINE_NAMES[name]} baseline failed, so no share of it is shown: {row.failure}"
            out.append(Claim(ClaimKind.BASELINE, f"{way} {name}", text, {"baseline": name, "failure": row.failure}))
    for name in (*PLAIN, "crypto"):
        beaten = [e for e in items if name in e.failed]
        if not beaten:
            continue
        base = plain.get(name)
        base_rate = base.summary.median if base and base.summary else None
        best = max(beaten, key=lambda e: e.row.summary.median if e.row.summary else 0.0)
        label = best.row.scenario.metric.labels.name(best.row.scenario)
        rate = best.row.summary.median if best.row.summary else 0.0
        at = f" at {format_value('MB/s', base_rate)} MB/s" if base_rate is not None else ""
        text = (
            f"{way}: failed baseline: {BASELINE_NAMES[name]}{at} is below {label} at {format_value('MB/s', rate)} MB/s "
            f"({len(beaten)} SSH cop{'y' if len(beaten) == 1 else 'ies'} above it): a ceiling lower than what it "
            "caps is a broken measurement, not a finding, so no share of it is shown"
        )
        evidence = {
            "baseline": name,
            "baseline_MBps": base_rate,
            "above": [
                {
                    "row": e.row.scenario.metric.labels.name(e.row.scenario),
                    "MBps": e.row.summary.median if e.row.summary else None,
                }
                for e in beaten
            ],
        }
        out.append(Claim(ClaimKind.BASELINE, f"{way} {name}", text, evidence))
    return out


def shares_claims(way: str, items: Sequence[Efficiency]) -> list[Claim]:
    """Return one claim per SSH copy stating its shares (what the efficiency table prints)."""
    out = []
    for e in items:
        label = e.row.scenario.metric.labels.name(e.row.scenario)
        parts = [
            f"{share(v)} of {BASELINE_NAMES[n]}"
            for n, v in (("tcp", e.of_tcp), ("rsyncd", e.of_rsyncd), ("crypto", e.of_crypto))
            if v is not None
        ]
        if parts:
            evidence = {
                "of_tcp": e.of_tcp,
                "of_rsyncd": e.of_rsyncd,
                "of_crypto": e.of_crypto,
                "failed": list(e.failed),
            }
            out.append(Claim(ClaimKind.BASELINE, f"{way} {label}", f"{way}: {label}: " + ", ".join(parts), evidence))
    return out
