"""What a `load` run's rows are: a step's key (an offered rate, a burst's size, or sessions held), a scenario's
`load` field, with its one text form and its one parse (`loadwords.py` holds the words its failures are stored
with)."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class StepKind(enum.StrEnum):
    """What a `load` row varies."""

    RATE = "rate"  # logins (or execs) a second, open loop: `20/s`
    BURST = "burst"  # connections started at one instant: `burst 60`
    SESSIONS = "sessions"  # sessions held open at once: `100 sessions`


@dataclass(frozen=True)
class StepKey:
    """A `load` row's identity: its kind and its size (a rate in logins a second, else a count)."""

    kind: StepKind
    size: float

    @classmethod
    def rate(cls, per_second: float) -> StepKey:
        """Return a step of logins offered at `per_second`."""
        return cls(StepKind.RATE, float(per_second))

    @classmethod
    def burst(cls, connections: int) -> StepKey:
        """Return a burst of `connections` started at one instant."""
        return cls(StepKind.BURST, float(connections))

    @classmethod
    def sessions(cls, held: int) -> StepKey:
        """Return a step of `held` sessions open at once."""
        return cls(StepKind.SESSIONS, float(held))

    @property
    def count(self) -> int:
        """Return a burst's connections or a step's sessions (a rate's whole part)."""
        return int(self.size)

    @property
    def text(self) -> str:
        """Return the stored and printed form: `20/s`, `burst 60`, `100 sessions`."""
        if self.kind is StepKind.RATE:
            return f"{self.size:g}/s"
        if self.kind is StepKind.BURST:
            return f"burst {self.count}"
        return f"{self.count} sessions"

    def __str__(self) -> str:
        """Return the text form (a scenario's key and labels print it)."""
        return self.text

    @classmethod
    def parse(cls, text: str) -> StepKey:
        """Return the key a `text` form names; ValueError for any other text."""
        words = text.strip()
        if words.endswith("/s"):
            return cls.rate(float(words.removesuffix("/s")))
        if words.startswith("burst "):
            return cls.burst(int(words.removeprefix("burst ")))
        if words.endswith(" sessions"):
            return cls.sessions(int(words.removesuffix(" sessions")))
        raise ValueError(f"not a load step: {text!r}")
