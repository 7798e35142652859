"""Racing (pure): after each round, which rows of a result group still need samples.

Every round is a block: each row still racing is measured once in it, in a fresh order. On the log of the values
the block design is y[row, round] = mu[row] + beta[round] + e, so drift a round shares cancels in any difference
of two rows within it. After round r >= 3 (look j = r - 2) every racing row of a group is compared with the
group's current leader (the best mean log value):

- the difference of their mean logs over the rounds both were measured in, d (sign turned: d < 0 is worse);
- its standard error from the noise e pooled over the group's racing rows and complete rounds (the residual of the
  two-way fit, (k' - 1)(n - 1) degrees of freedom, as Conover's post-hoc test pools after Friedman's), never below
  the pair's own paired standard error, so that one noisy row does not borrow the others' calm;
- Student's t on those degrees of freedom.

A group with an anchor (`tune`'s default copy) is raced against it instead: every other row is compared with the
anchor, never with the best row, so a row stops when it is slower than or equivalent to the anchor, whatever the
other rows do (k - 1 comparisons with one control per look, at the same levels).

Calls: `slower` when the one-sided test that the row is worse than the leader rejects; `equivalent` when both
one-sided tests of the band [1 - m, 1 / (1 - m)] reject (TOST); `open` otherwise. A row called slower stops for
good (its call is kept; later rounds do not reopen it).

Error rate, per group over the whole race. The leader is picked from the data, so each look makes k - 1 tests
against it; by Hsu's argument for multiple comparisons with the best (Hsu 1984, "Constrained simultaneous
confidence intervals for multiple comparisons with the best", Ann. Statist. 12) tests of every row against the
data's best at level a / (k - 1) never call the truly best row slower, with probability >= 1 - a. Looks spend
alpha as a convergent series, a_j = alpha x 6 / (pi^2 j^2) (sum over all looks = alpha; 61 % at the first look,
where a dominated row is clearest), so the whole race, however long the budget lets it run, stops the group's best
row with probability <= alpha = 5 %. Rows that are exactly equal are the hard case for any data-picked leader:
tests/measure/test_racing.py measures by simulation how often one of six equal rows is stopped. The verdicts
printed later come from the 95 % intervals of ratios.py on all samples, not from these calls.
"""

from __future__ import annotations

import enum
import math
import statistics
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

from sshbench.exact import t_sf
from sshbench.stats import MIN_RANKED


class Call(enum.StrEnum):
    """What the race says of one row after a round."""

    LEADER = "leader"
    ANCHOR = "anchor"
    SLOWER = "slower"
    EQUIVALENT = "equivalent"
    OPEN = "open"


@dataclass(frozen=True)
class Arm:
    """One row in the race: its key, its group, its values by round, which way is better, and whether it has
    already been stopped (called slower at an earlier look)."""

    key: str
    group: Hashable
    rounds: Mapping[int, float]
    higher_is_better: bool
    stopped: bool = False

    def logs(self) -> dict[int, float]:
        """Return the log value by round, signed so that higher is better."""
        sign = 1.0 if self.higher_is_better else -1.0
        return {r: sign * math.log(v) for r, v in self.rounds.items() if v > 0}


@dataclass(frozen=True)
class Race:
    """The race's rules: the error rate per group over the whole race and the equivalence margin."""

    margin: float = 0.05
    alpha: float = 0.05

    def level(self, rows: int, look: int) -> float:
        """Return the level of one test at a look (1 = after round 3): alpha spent over the looks as
        6 / (pi^2 j^2), split over the k - 1 comparisons with the leader."""
        spent = self.alpha * 6.0 / (math.pi**2 * max(look, 1) ** 2)
        return spent / max(rows - 1, 1)


@dataclass(frozen=True)
class Noise:
    """The pooled noise of a group's racing rows: the residual variance of the log values and its degrees of
    freedom (None when too few complete rounds to pool)."""

    variance: float
    df: int


def pooled(arms: Sequence[Arm]) -> Noise | None:
    """Return the residual variance of the two-way (row x round) fit on the rounds every arm was measured in."""
    logs = [a.logs() for a in arms]
    shared = sorted(set.intersection(*(set(x) for x in logs))) if logs else []
    k, n = len(arms), len(shared)
    if k < 2 or n < 2:
        return None
    rows = [statistics.fmean(x[r] for r in shared) for x in logs]
    cols = [statistics.fmean(x[r] for x in logs) for r in shared]
    grand = statistics.fmean(rows)
    sse = sum((x[r] - rows[i] - cols[j] + grand) ** 2 for i, x in enumerate(logs) for j, r in enumerate(shared))
    df = (k - 1) * (n - 1)
    return Noise(sse / df, df)


def _mean_log(arm: Arm) -> float:
    """Return an arm's mean log value (higher is better)."""
    return statistics.fmean(arm.logs().values())


def call(arm: Arm, leader: Arm, race: Race, rows: int, look: int, noise: Noise | None) -> Call:
    """Return the call on one row against the leader."""
    mine, lead = arm.logs(), leader.logs()
    d = [mine[r] - lead[r] for r in sorted(set(mine) & set(lead))]
    n = len(d)
    if n < MIN_RANKED:
        return Call.OPEN
    mean = statistics.fmean(d)
    own = statistics.stdev(d) / math.sqrt(n)
    se, df = (own, n - 1) if noise is None else (max(own, math.sqrt(2 * noise.variance / n)), noise.df)
    se = max(se, 1e-9)
    level = race.level(rows, look)
    if t_sf(-mean / se, df) < level:  # P(T >= -mean/se) small: the row is worse than the leader
        return Call.SLOWER
    band = -math.log1p(-race.margin)  # [log(1 - m), -log(1 - m)] in log ratio
    if t_sf((mean + band) / se, df) < level and t_sf((band - mean) / se, df) < level:
        return Call.EQUIVALENT
    return Call.OPEN


def decide(arms: Sequence[Arm], race: Race, look: int, anchors: frozenset[str] = frozenset()) -> dict[str, Call]:
    """Return the call on every arm at a look: per group, the leader among the racing rows (or the group's anchor,
    one of `anchors`) and each other racing row against it; stopped rows stay slower."""
    groups: dict[Hashable, list[Arm]] = {}
    for arm in arms:
        groups.setdefault(arm.group, []).append(arm)
    calls: dict[str, Call] = {}
    for members in groups.values():
        calls |= {a.key: Call.SLOWER for a in members if a.stopped}
        racing = [a for a in members if not a.stopped and a.logs()]
        ranked = [a for a in racing if len(a.logs()) >= MIN_RANKED]
        if not ranked:
            calls |= {a.key: Call.OPEN for a in racing}
            continue
        anchor = next((a for a in racing if a.key in anchors), None)
        if anchor is not None and len(anchor.logs()) < MIN_RANKED:
            calls |= {a.key: Call.OPEN for a in racing if a is not anchor} | {anchor.key: Call.ANCHOR}
            continue
        leader = anchor or max(ranked, key=_mean_log)
        noise = pooled(ranked)
        calls[leader.key] = Call.LEADER if anchor is None else Call.ANCHOR
        for arm in racing:
            if arm is not leader:
                calls[arm.key] = call(arm, leader, race, len(members), look, noise)
    return calls


def resolved(calls: Mapping[str, Call], keys: Sequence[str]) -> bool:
    """Return True when no row among `keys` is still open."""
    return all(calls.get(k) in (Call.LEADER, Call.ANCHOR, Call.SLOWER, Call.EQUIVALENT) for k in keys)
