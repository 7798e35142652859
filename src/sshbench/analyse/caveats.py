"""What a user should know about a recommendation: what the policy excluded and costs, ties, predictions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sshbench.analyse.sweep import Combo


def caveats(excluded: Sequence[tuple[str, str, str]], combos: Sequence[Combo], allowed: Sequence[Combo]) -> list[str]:
    """Return what the user should know about these recommendations."""
    out = []
    cbc = [a for k, a, _ in excluded if k == "cipher" and a.endswith("-cbc")]
    if cbc:
        out.append(f"CBC excluded by policy ({', '.join(cbc)})")
    if combos and allowed and combos[0] is not allowed[0]:
        best, ok = combos[0].combined, allowed[0].combined
        out.append(
            f"the policy costs {100 * (1 - ok.median / best.median):.0f} % of the fastest rate "
            f"({allowed[0].label} vs {combos[0].label})"
        )
    if combos and len(combos) > 1 and combos[0].combined.low <= combos[1].combined.high:
        out.append(f"{combos[0].label} and {combos[1].label} are statistically tied: either is a fine choice")
    if any(c.predicted for c in combos[:3]):
        out.append(
            "predicted combinations (not measured together) are marked; "
            "confirm with `sshbench throughput --cipher C --mac M`"
        )
    out.append("rates are for this machine and link; on a slow link the cipher matters less than the link")
    return out
