"""Where a login's time goes after its key exchange (pure): the steps `ssh -v` says inside the authentication and
session phases (authnames.STEPS), their medians over a run's logins, and the waits that are no one's computing.

A step that takes 35 to 210 ms beyond the path's round trip (the login's `tcp` phase: one round trip) while what it
does is a few small packets is named a delayed-ACK wait: OpenSSH's non-interactive connections run without
TCP_NODELAY, so Nagle's algorithm holds a small packet until the peer acknowledges the one before, and Linux delays
that acknowledgement 40 ms at least (a packet capture of the embedded server's logins shows the same two pauses a
login: docs/BENCHMARKS.md). The steps that compute or run something (a refused method, the signature, the command)
are not named so. Each wait is said with what removes it.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sshbench.authnames import STEPS, TRIED
from sshbench.model import Kind
from sshbench.records import StoredScenario

DELAYED_ACK = (0.035, 0.210)  # a step this much longer than a round trip, with little to compute, waited for an
# ACK: Linux delays one 40 ms at least, 200 ms at most
SLOW_ANSWER = DELAYED_ACK[1]  # the server's list of methods later than any ACK's wait: a look-up
SLOW_COMMAND = 0.020  # the command step this long: the login shell's start-up files, not the command
SMALL = ("auth.service", "auth.methods", "auth.offer", "session.channel")  # a few small packets, nothing to compute
SAYS = {
    "auth.service": "the client's NEWKEYS and service request, the server's answer",
    "auth.methods": "the `none` request and the server's list of methods",
    "auth.offer": "the key offered and the server's look-up of it",
    "session.channel": "the session channel opened and confirmed",
}
REMEDY = (
    "`ip route change ROUTE quickack 1` on the host whose ACK is late (root; both hosts' routes to each other "
    "remove both waits), or a client that sets TCP_NODELAY"
)


@dataclass(frozen=True)
class Step:
    """One step after the key exchange: its name, its median over the logins, and whether it waited."""

    name: str  # authnames.STEPS
    median: float  # seconds
    waited: bool  # within DELAYED_ACK beyond the path's round trip with little to compute: a delayed-ACK wait

    @property
    def phase(self) -> str:
        """Return the phase the step splits: auth or session."""
        return self.name.split(".", 1)[0]


@dataclass(frozen=True)
class LoginSplit:
    """A run's logins after their key exchange, step by step (medians), with the path's round trip."""

    logins: int
    phases: tuple[tuple[str, float], ...]  # (auth, median), (session, median)
    rtt: float  # the `tcp` phase's median: one round trip of the path
    steps: tuple[Step, ...]
    tried: float  # methods and keys tried and refused before the one accepted, median a login

    def advice(self) -> list[str]:
        """Return what the slow steps that are no packet's wait point to, with what removes it (said, not
        measured)."""
        out = []
        at = {s.name: s.median for s in self.steps}
        if at.get("auth.methods", 0.0) - self.rtt >= SLOW_ANSWER:
            out.append(
                f"the server took {at['auth.methods'] * 1e3:.0f} ms to list its methods: a reverse DNS look-up of "
                "the client's address (`UseDNS no` in sshd_config) or a slow PAM account check, on the server"
            )
        if at.get("session.command", 0.0) - self.rtt >= SLOW_COMMAND:
            out.append(
                f"the command took {at['session.command'] * 1e3:.0f} ms on the server: the login shell runs its "
                "start-up files for every command (/etc/bash.bashrc, ~/.bashrc, /etc/profile.d); keep them quick "
                "for non-interactive shells"
            )
        return out

    @property
    def waits(self) -> float:
        """Return the seconds of the waited steps beyond a round trip each."""
        return sum(s.median - self.rtt for s in self.steps if s.waited)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form (seconds)."""
        return {
            "logins": self.logins,
            "phases_median_s": dict(self.phases),
            "rtt_s": self.rtt,
            "steps": [{"step": s.name, "median_s": s.median, "delayed_ack_wait": s.waited} for s in self.steps],
            "waited_s": self.waits,
            "tried_and_refused": self.tried,
            "advice": self.advice(),
        }


def login_split(stored: Sequence[StoredScenario]) -> LoginSplit | None:
    """Return the steps over every measured login of a run that has them (None: no login does)."""
    logins = [
        dict(s.phases)
        for st in stored
        if st.scenario.kind is Kind.LATENCY
        for s in st.samples
        if s.measured and s.ok and STEPS[0] in dict(s.phases)
    ]
    if not logins:
        return None
    rtt = statistics.median(p.get("tcp", 0.0) for p in logins)
    steps = []
    for name in STEPS:
        values = [p[name] for p in logins if name in p]
        if len(values) * 2 >= len(logins):  # a step most logins have
            median = statistics.median(values)
            steps.append(Step(name, median, name in SMALL and DELAYED_ACK[0] <= median - rtt <= DELAYED_ACK[1]))
    phases = tuple((p, statistics.median(x.get(p, 0.0) for x in logins)) for p in ("auth", "session"))
    return LoginSplit(len(logins), phases, rtt, tuple(steps), statistics.median(p.get(TRIED, 0.0) for p in logins))
