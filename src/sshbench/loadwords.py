"""The words a `load` run's failures are stored with: what the taking side writes into a failed login or a step
and the reading side reads back. Both sides import them from here, so neither parses the other's text."""

from __future__ import annotations

import re
from collections.abc import Sequence

from sshbench.samples import SKIPPED, Sample

IDLE = "idle"  # the state of a sessions run's memory snapshot taken before the first session
BURST = "burst"  # the phase a burst's login carries: which burst of its setting it belonged to (1, 2, ...)
ATTEMPT = "attempt"  # the phase of a step's login run again by --resume (2, 3, ...; none: the first attempt)

# How a failed login the server's log explains is stored: `dropped by the server ...{LOGGED}<line>{SAID}<words>`.
LOGGED, SAID = ", said its log: ", "; the client said: "
# A step or burst its server died in: kept and marked, no failure of the run once --resume ran the rest.
DIED = f"{SKIPPED}its server died: "
HALTED = f"{SKIPPED}stopped: "  # a step against a host of the user's, stopped at a run of closes before the banner
# A client's own source address and port in its words (Go's `read tcp 127.0.0.6:40181->127.0.0.1:22`).
SOURCE = re.compile(r"\b(\d{1,3}(?:\.\d{1,3}){3}):(\d+)->")
# What closes a connection before its banner on a host of the user's (no log of it is read there).
HOST_CLOSERS = (
    "MaxStartups (OpenSSH drops unauthenticated connections past start:rate:full), PerSourcePenalties (OpenSSH 9.8+ "
    "refuses an address for a while after failed or unauthenticated connections), a per-address limit (Dropbear: 5 "
    "unauthenticated connections per address), a firewall's rate limit"
)
# What a server wrote before it closed a connection it dropped, as a failed login keeps it (after the client's words),
# and which servers write each line, with the settings that make them drop (a host of the user's: no log is read).
SERVER_SAID = "; before closing, the server said: "
REFUSALS = {
    "Not allowed at this time": "OpenSSH writes it when MaxStartups (start:rate:full) or PerSourcePenalties drops a "
    "connection (measured: 10.0p2, 10.3p1; PerSourcePenaltyExemptList exempts an address)",
    "Exceeded MaxStartups": "older OpenSSH writes it when MaxStartups (start:rate:full) drops a connection "
    "(measured: 9.2p1)",
}
# A connection closed before (or at) the server's banner, as each generator words it (ssh's last line: `Connection
# closed by 127.0.0.1 port 2222` or `Connection reset by ...` after `kex_exchange_identification: ...`).
BEFORE_BANNER = ("kex_exchange_identification", "handshake failed: EOF", "connection reset by", "connection closed by")


def before_banner(words: str) -> bool:
    """Return True for a client's words that say the connection was closed before the server's banner."""
    low = words.lower()
    return any(w.lower() in low for w in BEFORE_BANNER)


def server_said(words: str) -> str | None:
    """Return what the server wrote before closing, as a failed login's words keep it, or None."""
    _, found, said = words.partition(SERVER_SAID)
    if not found:
        return None
    return said.strip() or None


def refusal(said: str) -> str:
    """Return which servers write this line before closing, and why, or that it is the server's own."""
    return REFUSALS.get(said, "the server's own words")


def burst_of(s: Sample) -> int:
    """Return the burst a login belonged to (its `burst` phase; 0 for a step's login)."""
    return int(dict(s.phases).get(BURST, 0))


def attempt_of(s: Sample) -> int:
    """Return which attempt at its step a login belonged to (1: the first; --resume runs a step cut short again)."""
    return int(dict(s.phases).get(ATTEMPT, 1))


def latest(samples: Sequence[Sample]) -> list[Sample]:
    """Return the logins of a step's latest attempt (an attempt cut short is kept, not read)."""
    last = max((attempt_of(s) for s in samples), default=1)
    return [s for s in samples if attempt_of(s) == last]
