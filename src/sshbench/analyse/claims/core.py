"""The claim type and the vocabulary every claim uses (pure)."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sshbench.units import format_value

TOLERANCE = 0.10  # a limit may sit this far below the rate it bounds (noise) before it is called broken
NEAR_LIMIT = 0.8  # a rate at 80 % or more of a limit is bound by it


class ClaimKind(enum.StrEnum):
    """What a claim says."""

    FASTEST = "fastest"  # who leads a result group, and who is equivalent or cannot be told apart
    UNMEASURED = "unmeasured"  # rows a summary leaves out: failed, skipped, too few samples
    BOUND = "bound"  # what bounds a rate, with the remedy
    CEILING = "ceiling"  # a crypto ceiling or link rate below the rate it should cap: a broken limit
    BASELINE = "baseline"  # a copy's share of the plaintext baseline, or a failed baseline
    GAIN = "gain"  # a recommendation's change against today's default
    KEEP = "keep"  # keep what you use today
    CAVEAT = "caveat"  # what to know about a recommendation
    VERDICT = "verdict"  # B against A in a comparison


@dataclass(frozen=True)
class Claim:
    """One sentence sshbench states, what it is about, and the numbers it rests on."""

    kind: ClaimKind
    subject: str  # a result group (download), a row, a recommendation or a comparison
    text: str
    evidence: Mapping[str, Any] = field(default_factory=dict)
    brief: str | None = None  # the same, shorter, for a terminal's first screen (lines; names counted past 3)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return {"kind": self.kind.value, "subject": self.subject, "text": self.text, "evidence": dict(self.evidence)}


BRIEF_NAMES = 3  # names a brief sentence lists inline, at most: more are counted


def names(items: Sequence[str], most: int = 6) -> str:
    """Return names joined by commas, the rest counted (`a, b, c and 4 more`)."""
    shown = list(items[:most])
    rest = len(items) - len(shown)
    return ", ".join(shown) + (f" and {rest} more" if rest > 0 else "")


def share(value: float) -> str:
    """Format a fraction as a whole percentage."""
    return format_value("share", value)


def margin_text(margin: float) -> str:
    """Return the equivalence margin in words: `within +-5 %`."""
    return f"within +-{margin * 100:g} %"
