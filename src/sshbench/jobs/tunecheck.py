"""`tune`'s step 5: the gains predicted for another copy size checked by copies of that size (analyse/sizes.py).

After the remedies, the default and each direction's best remedy are copied at CHECK_SIZE (10 MB) for
DECIDING_PAIRS paired rounds, where the copies measured are CHECK_FACTOR times larger; the check's time is kept out
of the remedies' budget, and when the budget left cannot hold it, it is skipped (the printout says so).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from sshbench.analyse.sizes import CHECK_FACTOR, CHECK_SIZE, checked, to_check
from sshbench.joboptions import Plan
from sshbench.jobs.recording import Job, Recording
from sshbench.measure.remedies import Sizing, baseline, rounds_seconds, warmup_seconds
from sshbench.measure.scheduler import Sampler
from sshbench.measure.steady import MB
from sshbench.model import Direction
from sshbench.ratios import DECIDING_PAIRS

KEPT = 0.75  # of the check's time: what must be left of the budget after the race for the check to run


@dataclass(frozen=True)
class Checking:
    """The check of the predicted gains after the remedies (analyse/sizes.py): the copies measured per direction,
    and what sizes the check's own copies' time."""

    copies: Mapping[Direction | None, int]
    sizing: Sizing
    overhead: float | None
    least: float

    def seconds(self) -> float:
        """Return what the check copies take (warm-ups and DECIDING_PAIRS rounds of two one-connection copies a
        direction at the slowest default rate; 0 when no direction's copies are large enough to check)."""
        ways = [d for d, size in self.copies.items() if size >= CHECK_FACTOR * CHECK_SIZE]
        rates = [r for d, r in self.sizing.rates.items() if d in ways and r > 0]
        if not rates:
            return 0.0
        rows = [checked(baseline(d)) for d in ways] * 2
        login = self.sizing.login
        each = CHECK_SIZE / (min(rates) * MB)
        return warmup_seconds(rows, login, self.overhead) + rounds_seconds(login, rows, self.least, each, self.overhead)

    def race_plan(self, left: Plan) -> Plan:
        """Return the remedies' plan: DECIDING_PAIRS rounds at least, the check's time kept out of the budget."""
        plan = dataclasses.replace(
            left, min_rounds=max(left.min_rounds, DECIDING_PAIRS), max_rounds=max(left.max_rounds, DECIDING_PAIRS)
        )
        if plan.max_time is None:
            return plan
        return dataclasses.replace(plan, max_time=max(plan.max_time - self.seconds(), 0.0))

    def run(self, rec: Recording, job: Job, take: Sampler) -> None:
        """Copy the default and the best remedy each way at CHECK_SIZE, DECIDING_PAIRS paired rounds, when the
        budget left holds the time kept for them (a race that ran to its own budget leaves about that time, a
        little less: the check has the time kept, at least), else the printout says they were not checked."""
        rows = to_check(job.store.scenarios(rec.run_id), self.copies)
        left, need = rec.remaining(), self.seconds()
        begun = any(sc.key in rec.stored for sc in rows)  # a resumed run ends what it began
        if not rows or (left.max_time is not None and left.max_time < KEPT * need and not begun):
            return
        rec.register(rows)
        most = None if left.max_time is None else max(left.max_time, need)
        plan = dataclasses.replace(
            left, min_rounds=DECIDING_PAIRS, max_rounds=DECIDING_PAIRS, racing=False, max_time=most
        )
        rec.schedule(rows, take, job.progress, "check copies", plan=plan)
