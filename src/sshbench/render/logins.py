"""Print where a login's time goes after its key exchange: its steps (medians over the run's logins) and the waits
that are no one's computing, with what removes them."""

from __future__ import annotations

from rich.console import Console

from sshbench.analyse.logins import REMEDY, SAYS, LoginSplit
from sshbench.render import screen


def login_lines(split: LoginSplit) -> list[str]:
    """Return the lines that say where a login goes after its key exchange."""
    parts = []
    for phase, median in split.phases:
        steps = ", ".join(
            f"{s.name.split('.', 1)[1]} {s.median * 1e3:.1f}" + (" (waited)" if s.waited else "")
            for s in split.steps
            if s.phase == phase and (s.name != "auth.refused" or split.tried >= 1)  # nothing refused: no step
        )
        parts.append(f"{'authentication' if phase == 'auth' else phase} {median * 1e3:.0f} ms: {steps}")
    rtt = f"{split.rtt * 1e3:.1f} ms" if split.rtt >= 5e-5 else "under 0.1 ms"
    out = [
        f"Where a login goes after its key exchange (ms, medians of {split.logins} logins; the path's round trip "
        f"{rtt}): {'; '.join(parts)}"
    ]
    waited = [f"{s.name} +{(s.median - split.rtt) * 1e3:.0f} ms ({SAYS[s.name]})" for s in split.steps if s.waited]
    if waited:
        out.append(
            f"  {split.waits * 1e3:.0f} ms a login waited beyond a round trip with nothing to compute: "
            f"{'; '.join(waited)}: the shape of a delayed-ACK wait (a small packet held by Nagle's algorithm until "
            f"the peer acknowledges the last; Linux delays an ACK 40 ms at least); what removes it: {REMEDY}"
        )
    out += [f"  {words}" for words in split.advice()]
    if split.tried >= 1:
        out.append(
            f"  {split.tried:.0f} method(s) or key(s) tried and refused each login before the one accepted: "
            "`IdentitiesOnly yes` with the one `IdentityFile`, `PreferredAuthentications publickey`, "
            "`GSSAPIAuthentication no` remove them"
        )
    return out


def print_login_split(console: Console, split: LoginSplit | None) -> None:
    """Print the lines, the details dim, under the connection table (nothing without logins that say their steps)."""
    if split is None:
        return
    if screen.brief() and split.waits > 0:
        screen.say(
            console, f"  a login waits {split.waits * 1e3:.0f} ms on delayed ACKs: --details says what removes them"
        )
        return
    for line in login_lines(split):
        screen.say(console, line, style="dim" if line.startswith("  ") else None)
