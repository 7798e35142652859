"""How close each copy tool comes to the same copy without SSH and to the crypto alone (pure).

Per direction, each SSH tool's median rate over the median of the plaintext baselines measured in the same run
(raw TCP with socat; an rsync daemon), and over the lower of the two sides' crypto ceilings for its cipher
(`openssl speed -evp`). A share above 100 % of TCP says the baseline itself was held back (e.g. by one TCP
stream's buffers on a long link), not that SSH is faster than no SSH.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sshbench.analyse.results import Row

PLAIN = ("tcp", "rsyncd")


@dataclass(frozen=True)
class Efficiency:
    """One SSH tool's rate and its shares of the plaintext and crypto ceilings (None where unknown)."""

    row: Row
    of_tcp: float | None
    of_rsyncd: float | None
    of_crypto: float | None


def efficiency(rows: Sequence[Row], ceilings: Mapping[str, Mapping[str, float]]) -> list[Efficiency]:
    """Return the SSH tools' rows of one direction with their shares, best rate first."""
    plain = {r.scenario.tool: r.summary.median for r in rows if r.scenario.tool in PLAIN and r.summary}
    out = []
    for r in rows:
        if r.scenario.tool in PLAIN or r.summary is None:
            continue
        rate = r.summary.median
        sides = ceilings.get(r.scenario.cipher or "", {})
        crypto = min(sides.values()) if sides else None
        out.append(
            Efficiency(
                row=r,
                of_tcp=rate / plain["tcp"] if plain.get("tcp") else None,
                of_rsyncd=rate / plain["rsyncd"] if plain.get("rsyncd") else None,
                of_crypto=rate / crypto if crypto else None,
            )
        )
    return sorted(out, key=lambda e: -(e.row.summary.median if e.row.summary else 0.0))
