"""Racing (pure): after each round, which rows of a result group still need samples.

Every row of a group is compared with the group's current leader (the best median) on the rounds both were
measured in: the paired log ratio d_r = log(row_r / leader_r) (sign turned so that d < 0 means worse), its mean
and standard error, and Student's t with n - 1 degrees of freedom (a "t-race": Birattari et al., "A racing
algorithm for configuring metaheuristics", GECCO 2002, use the same paired test beside Friedman's). Pairing by
round cancels the drift a round shares; the log makes the test one of ratios, as every verdict here is.

- `slower`: the one-sided test that the row is worse than the leader rejects at the adjusted level;
- `equivalent`: both one-sided tests of the equivalence band [1 - m, 1 / (1 - m)] reject (TOST);
- `open`: neither, yet.

The level is alpha / (k (k - 1) x looks) for a group of k rows: Bonferroni over every ordered pair of rows and
every round they may be looked at. Testing a row only against the leader is not enough: the leader is picked from
the data (the best of k noisy medians), and with alpha split over rows alone six equal rows were wrongly called
slower in 7 % of 400 simulated races. Counting every pair covers any comparison the data could pick, so the chance of
calling any row of a group `slower` or `equivalent` wrongly, over the whole race, is at most alpha
(tests/measure/test_racing.py measures the real rate by simulation: 1 %). A row called `slower` stops getting
samples and keeps the ones it has; a group whose rows are all called is resolved. The verdicts printed come from
the 95 % intervals of ratios.py on all samples.
"""

from __future__ import annotations

import enum
import math
import statistics
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

from sshbench.stats import MIN_RANKED
from sshbench.tdist import t_sf


class Call(enum.StrEnum):
    """What the race says of one row after a round."""

    LEADER = "leader"
    SLOWER = "slower"
    EQUIVALENT = "equivalent"
    OPEN = "open"


@dataclass(frozen=True)
class Arm:
    """One row in the race: its key, its group, its values by round, and which way is better."""

    key: str
    group: Hashable
    rounds: Mapping[int, float]
    higher_is_better: bool


@dataclass(frozen=True)
class Race:
    """The race's rules: the error rate per group over the whole race, how many looks it plans, the margin."""

    looks: int  # rounds after which calls are made (at most)
    margin: float = 0.05
    alpha: float = 0.05

    def level(self, rows: int) -> float:
        """Return the level of one test: alpha split over every ordered pair of the group's rows and every look
        (the leader is picked from the data, so a row's test against it stands for its tests against all)."""
        return self.alpha / (max(rows * (rows - 1), 1) * max(self.looks, 1))


def _median(arm: Arm) -> float:
    """Return an arm's median value."""
    return statistics.median(arm.rounds.values())


def _best(arms: Sequence[Arm]) -> Arm:
    """Return the arm with the best median."""
    return max(arms, key=lambda a: _median(a) if a.higher_is_better else -_median(a))


def _log_ratios(arm: Arm, leader: Arm) -> list[float]:
    """Return log(arm / leader) per shared round, negative where the arm is worse."""
    shared = sorted(set(arm.rounds) & set(leader.rounds))
    sign = 1.0 if arm.higher_is_better else -1.0
    return [sign * math.log(arm.rounds[r] / leader.rounds[r]) for r in shared if arm.rounds[r] > 0 < leader.rounds[r]]


def call(arm: Arm, leader: Arm, race: Race, rows: int) -> Call:
    """Return the call on one row against the leader."""
    d = _log_ratios(arm, leader)
    n = len(d)
    if n < MIN_RANKED:
        return Call.OPEN
    mean = statistics.fmean(d)
    se = max(statistics.stdev(d) / math.sqrt(n), 1e-9 * max(abs(mean), 1e-9))
    level, df = race.level(rows), n - 1
    if t_sf(-mean / se, df) < level:  # P(T >= -mean/se) small: the mean log ratio is below 0
        return Call.SLOWER
    band = -math.log1p(-race.margin)  # [log(1 - m), -log(1 - m)] in log ratio
    if t_sf((mean + band) / se, df) < level and t_sf((band - mean) / se, df) < level:
        return Call.EQUIVALENT
    return Call.OPEN


def decide(arms: Sequence[Arm], race: Race) -> dict[str, Call]:
    """Return the call on every arm with values: per group, the leader and each other row against it."""
    groups: dict[Hashable, list[Arm]] = {}
    for arm in arms:
        if len(arm.rounds) >= 1:
            groups.setdefault(arm.group, []).append(arm)
    calls: dict[str, Call] = {}
    for members in groups.values():
        ranked = [a for a in members if len(a.rounds) >= MIN_RANKED]
        if len(ranked) < 2:
            calls |= {a.key: Call.OPEN for a in members}
            continue
        leader = _best(ranked)
        calls[leader.key] = Call.LEADER
        for arm in members:
            if arm is not leader:
                calls[arm.key] = call(arm, leader, race, len(members))
    return calls


def resolved(calls: Mapping[str, Call], keys: Sequence[str]) -> bool:
    """Return True when no row among `keys` is still open."""
    return all(calls.get(k) in (Call.LEADER, Call.SLOWER, Call.EQUIVALENT) for k in keys)
