"""Where a login goes after its key exchange, from the timestamped `ssh -v` lines (pure).

The authentication phase runs from the client's `SSH2_MSG_NEWKEYS received` to `Authenticated to`, the session phase
from there to ssh's exit. OpenSSH's client says each step as it happens, so the lines' arrival times split them
(names in authnames.STEPS):

- `auth.service`: -> `SSH2_MSG_SERVICE_ACCEPT received`: the client's NEWKEYS and SERVICE_REQUEST, the server's
  answer (and EXT_INFO): one round trip of small packets;
- `auth.methods`: -> the first `Authentications that can continue`: the `none` request and the server's list;
- `auth.refused`: -> the `Offering public key` the server accepts: every method and key tried and refused before it
  (GSSAPI, keys the server does not accept), counted as `auth.tried`;
- `auth.offer`: -> `Server accepts key`: the key offered, the server's look-up of it;
- `auth.signature`: -> `Authenticated to`: the client's signature, the server's check and its answer;
- `session.channel`: -> `Sending command`: the session channel opened and confirmed;
- `session.command`: -> `exit-status`: the server runs the command (through the user's login shell);
- `session.close`: -> ssh's exit.

A step absent from the lines (a password login, another client) is left out; a login whose lines are out of order
gives none.
"""

from __future__ import annotations

from collections.abc import Sequence

from sshbench.authnames import STEPS, TRIED

ENDS = (  # the line that ends each step (authnames.STEPS); None: the process's exit
    "SSH2_MSG_SERVICE_ACCEPT received",
    "Authentications that can continue",
    "Offering public key",
    "Server accepts key",
    "Authenticated to ",
    "Sending command",
    "exit-status",
    None,
)
START = "SSH2_MSG_NEWKEYS received"


def login_steps(lines: Sequence[tuple[float, str]], end: float) -> tuple[tuple[str, float], ...]:
    """Return the steps after the key exchange (name, seconds) and TRIED, or () when the authentication phase's
    start or end is missing."""
    start = _first(lines, START, 0.0)
    if start is None or _first(lines, "Authenticated to ", start) is None:
        return ()
    accepted = _accepted_offer(lines)
    out: list[tuple[str, float]] = []
    at = start
    for name, marker in zip(STEPS, ENDS, strict=True):
        t = end if marker is None else accepted if name == "auth.refused" else _first(lines, marker, at)
        if t is None or t < at:
            continue
        out.append((name, t - at))
        at = t
    return (*out, (TRIED, float(_refusals(lines))))


def _first(lines: Sequence[tuple[float, str]], marker: str, after: float) -> float | None:
    """Return when the first line holding `marker` at or after `after` arrived."""
    return next((t for t, text in lines if marker in text and t >= after), None)


def _accepted_offer(lines: Sequence[tuple[float, str]]) -> float | None:
    """Return when the key the server accepted was offered (the last `Offering public key` before it)."""
    accepts = _first(lines, "Server accepts key", 0.0)
    offers = [t for t, text in lines if "Offering public key" in text and (accepts is None or t <= accepts)]
    return offers[-1] if offers and accepts is not None else None


def _refusals(lines: Sequence[tuple[float, str]]) -> int:
    """Return how many methods and keys were tried before the one that succeeded: every key offered but the
    accepted one, and every method other than publickey and none the client moved on from."""
    texts = [text for _, text in lines]
    keys = sum(1 for text in texts if "Offering public key" in text)
    accepted = any("Server accepts key" in text for text in texts)
    tried = [t.split("Next authentication method:", 1)[1].strip() for t in texts if "Next authentication method:" in t]
    others = [m for m in tried if m not in ("publickey", "none")]
    used = next((t for t in texts if "Authenticated to " in t), "")
    refused = sum(1 for m in others if f'using "{m}"' not in used)
    return max(0, keys - (1 if accepted else 0)) + refused
