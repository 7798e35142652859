"""What a recommendation promises against what the client uses today, and when to keep what it uses (pure).

A gain is a ratio verdict (sshbench.ratios) of the pick against today's default, paired per round within the run.
No gain is claimed for the default against itself ("what your client uses today"), nor for a predicted
combination (not measured: nothing to pair). "Keep it" is said only when every alternative was measured and none
is significantly quicker; alternatives that failed are named and nothing is said about them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sshbench.analyse.claims.core import Claim, ClaimKind, margin_text, names
from sshbench.ratios import MARGIN, Verdict, Word, interval_name, judge, paired_ratio, unpaired_ratio


@dataclass(frozen=True)
class Gain:
    """The pick against today's default: the verdict on their ratio, or why there is none."""

    baseline: str  # what the client uses today
    verdict: Verdict | None
    higher_is_better: bool
    same: bool = False  # the pick is today's default
    predicted: bool = False  # the pick was predicted, not measured

    @property
    def percent(self) -> float | None:
        """Return the change of the measured value in % (MB/s, or time when lower is better)."""
        return None if self.verdict is None else 100 * (self.verdict.ratio.value - 1)

    def text(self, unit: str) -> str:
        """Return the claim in words: `throughput: +67 % vs X (95 % interval +60 % .. +74 %, paired per round)`."""
        if self.same:
            return f"{unit}: this is what your client uses today ({self.baseline}): no change"
        if self.predicted:
            return f"{unit}: predicted, not measured: no gain over {self.baseline} is claimed"
        v = self.verdict
        if v is None:
            return f"{unit}: not measured in the same rounds as {self.baseline}: no gain is claimed"
        r = v.ratio
        interval = f"{interval_name(r)} {100 * (r.low - 1):+.0f} % .. {100 * (r.high - 1):+.0f} %, {r.method}"
        if v.word is Word.EQUIVALENT:
            return f"{unit}: equivalent to {self.baseline} {margin_text(v.margin)} ({interval})"
        if v.word is Word.INCONCLUSIVE:
            more = f"; about {v.more} more sample{'s' if v.more > 1 else ''} each would likely decide" if v.more else ""
            return f"{unit}: not told apart from {self.baseline} ({interval}{more})"
        return f"{unit}: {self.percent or 0:+.0f} % vs {self.baseline} ({v.word}; {interval})"

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return {
            "baseline": self.baseline,
            "same": self.same,
            "predicted": self.predicted,
            "percent": self.percent,
            "verdict": self.verdict.to_dict() if self.verdict else None,
        }


def gain(
    new: Mapping[int, float],
    old: Mapping[int, float],
    baseline: str,
    higher_is_better: bool,
    margin: float = MARGIN,
    same: bool = False,
    predicted: bool = False,
) -> Gain:
    """Return the gain of `new` over `old` (per-round values) against the baseline's name."""
    if same or predicted or min(len(new), len(old)) < 3:
        return Gain(baseline, None, higher_is_better, same, predicted)
    ratio = paired_ratio(old, new) or unpaired_ratio(list(old.values()), list(new.values()))
    verdict = None if ratio is None else judge(ratio, higher_is_better, margin)
    return Gain(baseline, verdict, higher_is_better)


@dataclass(frozen=True)
class Option:
    """One alternative a keep-or-change claim weighs: its name, per-round values, or why it was not measured."""

    name: str
    rounds: Mapping[int, float]
    failure: str | None = None


def keep_or_change(
    kind: str, current: str, options: Sequence[Option], margin: float = MARGIN
) -> tuple[str | None, Claim]:
    """Return (the quicker option to switch to, or None to keep today's) and the claim that says so.

    `options` are the measured and unmeasured alternatives (connection times: lower is better), current among
    them. Switching is advised only to an option significantly quicker than the current one."""
    measured = [o for o in options if o.failure is None and len(o.rounds) >= 3]
    missing = [o for o in options if o not in measured]
    now = next((o for o in measured if o.name == current), None)
    why = [f"{o.name} ({o.failure or 'too few samples'})" for o in missing]
    unmeasured = f"not measured: {names(why)}"
    evidence: dict[str, Any] = {"current": current, "unmeasured": {o.name: o.failure for o in missing}}
    if now is None:
        return None, Claim(
            ClaimKind.KEEP,
            kind,
            f"your current {kind} {current} was not measured: nothing is said about changing it",
            evidence,
        )
    quicker = []
    for o in measured:
        if o is now:
            continue
        ratio = paired_ratio(now.rounds, o.rounds) or unpaired_ratio(list(now.rounds.values()), list(o.rounds.values()))
        verdict = None if ratio is None else judge(ratio, False, margin)
        evidence.setdefault("against_current", {})[o.name] = verdict.to_dict() if verdict else None
        if verdict is not None and verdict.word is Word.FASTER:
            quicker.append((verdict.ratio.value, o.name))
    if quicker:
        best = min(quicker)[1]
        text = (
            f"{best} connects significantly quicker than your current {kind} {current}; switching means verifying "
            f"that host key in known_hosts first"
        )
        return best, Claim(ClaimKind.KEEP, kind, text + (f"; {unmeasured}" if missing else ""), evidence)
    if missing:
        text = (
            f"of the {kind}s measured, none connects significantly quicker than your current {current}: no "
            f"HostKeyAlgorithms line; {unmeasured}, so nothing is said about them"
        )
        return None, Claim(ClaimKind.KEEP, kind, text, evidence)
    text = f"no {kind} connects significantly quicker than your current {current}: keep it (no HostKeyAlgorithms line)"
    return None, Claim(ClaimKind.KEEP, kind, text, evidence)
