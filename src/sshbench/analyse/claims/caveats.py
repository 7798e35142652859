"""What a user should know about a recommendation: what the policy excluded and what it costs, predictions, the
directions measured (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sshbench.analyse.claims.core import Claim, ClaimKind
from sshbench.analyse.claims.gains import gain
from sshbench.environment import Environment
from sshbench.units import format_value

if TYPE_CHECKING:
    from sshbench.analyse.sweep import Combo

WAYS = {"down": "download", "up": "upload"}


def caveats(
    excluded: Sequence[tuple[str, str, str]],
    combos: Sequence[Combo],
    allowed: Sequence[Combo],
    directions: Sequence[str],
    margin: float,
) -> list[Claim]:
    """Return what the user should know about these recommendations."""
    out = []
    cbc = [a for k, a, _ in excluded if k == "cipher" and a.endswith("-cbc")]
    if cbc:
        out.append(_caveat("policy", f"CBC excluded by policy ({', '.join(cbc)})", {"excluded": cbc}))
    if combos and allowed and combos[0] is not allowed[0]:
        best, ok = combos[0], allowed[0]
        cost = gain(
            ok.combined_rounds(),
            best.combined_rounds(),
            best.label,
            True,
            margin,
            predicted=ok.predicted or best.predicted,
        )
        text = f"what the policy costs: its fastest, {ok.label}, against the fastest of all: " + cost.text("rate")
        out.append(_caveat("policy", text, cost.to_dict()))
    if any(c.predicted for c in combos[:3]):
        out.append(
            _caveat(
                "predictions",
                "predicted combinations (not measured together) are marked and no gain is "
                "claimed for them; confirm with `sshbench throughput --cipher C --mac M`",
            )
        )
    if len(directions) == 1:
        only = WAYS.get(directions[0], directions[0])
        out.append(
            _caveat(
                "directions",
                f"only {only} was measured: every rate and gain here is a {only} rate",
                {"directions": list(directions)},
            )
        )
    out.append(
        _caveat("scope", "rates are for this machine and link; on a slow link the cipher matters less than the link")
    )
    return out


def _caveat(subject: str, text: str, evidence: dict[str, object] | None = None) -> Claim:
    """Return one caveat claim."""
    return Claim(ClaimKind.CAVEAT, subject, text, evidence or {})


def measured_under(env: Environment) -> str | None:
    """Return the emulated conditions a run was measured under, in words (None: this machine as it is)."""
    parts = []
    if env.emulation:
        parts.append(f"emulated hardware {env.emulation.name} (in {' and '.join(env.emulation.applies_to)})")
    if env.link:
        parts.append(
            f"an emulated link {env.link.name} ({env.link.rate_bits / 1e6:g} Mbit/s, {env.link.rtt_s * 1e3:g} ms RTT)"
        )
    share = env.embedded.cpu_share if env.embedded else None
    if share:
        parts.append(f"a server CPU limit of {format_value('share', share)} of one CPU")
    if env.client_limit:
        parts.append(f"an ssh client CPU limit of {env.client_limit}")
    return "; ".join(parts) or None


def conditions_claim(env: Environment) -> list[Claim]:
    """Return the caveat that recommendations measured under emulation fit such a host, not this one."""
    under = measured_under(env)
    if under is None:
        return []
    text = f"measured under {under}: these recommendations fit a host like that, not necessarily this machine"
    return [_caveat("conditions", text, {"conditions": under})]
