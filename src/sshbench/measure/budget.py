"""Does a plan fit its --max-time budget? Probe what one connection and one transfer cost, then estimate.

The budget covers the whole job: building and checking an emulated link, discovery, the probes, the crypto
ceilings, the warm-ups and the rounds. Before anything is stored, one connection and one calibration-sized
download with the client's default algorithms are timed. From them the warm-ups (a connection; a calibration
transfer) and one round (one sample of every scenario) are estimated. A plan whose set-up and warm-ups alone
exceed the budget, or that leaves fewer rounds than a rank needs, is refused with what would fit. Slow ciphers
(3DES, CBC) take longer than the default cipher the probe used, so the estimate is a lower bound: the run still
ends `incomplete` if the budget runs out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from sshbench.errors import ExitCode, SshbenchError
from sshbench.joboptions import JobOptions
from sshbench.measure.samplers import calibration_size, latency_sample, throughput_sample
from sshbench.measure.steady import MB
from sshbench.model import Direction, Kind, Scenario
from sshbench.payloads import Payload
from sshbench.ssh.destination import Target
from sshbench.stats import MIN_RANKED


@dataclass(frozen=True)
class Probe:
    """What one connection and one transfer cost on a target, measured with the client's defaults."""

    connection: float  # seconds for spawn -> `true` -> exit
    rate: float | None  # MB/s of a whole transfer, handshake excluded (None: not probed or failed)
    steady: float | None  # MB/s steady rate of that transfer (what --size auto sizes samples from)


def probe(ssh: str, target: Target, opts: JobOptions, workdir: Path) -> Probe | None:
    """Time one connection and, when the plan transfers, one calibration download; None when either fails."""
    conn = latency_sample(ssh, target, Scenario(Kind.LATENCY), 0, True)
    if not conn.ok:
        return None
    if not opts.measure_throughput:
        return Probe(conn.wall, None, None)
    size = calibration_size(opts)
    done = throughput_sample(
        ssh, target, Scenario(Kind.THROUGHPUT, direction=Direction.DOWN), size, Payload("zero", workdir), 0, True
    )
    if not done.ok or done.value is None or done.value <= 0:
        return None
    # the copy's own time is its wall less a login's, never shorter than at its steady rate: on a busy machine one
    # login took longer than another login and the copy together (the difference was 0 or less, or gave 6,350 MB/s)
    transfer = max(done.wall - conn.wall, size / MB / done.value)
    return Probe(conn.wall, size / MB / transfer, done.value)


@dataclass(frozen=True)
class Estimate:
    """How long a plan's warm-ups and each round take, and how many rounds the budget leaves."""

    connections: int
    transfers: int
    warmup: float  # seconds for every warm-up sample
    per_round: float  # seconds for one sample of every scenario
    budget: float | None
    setup: float = 0.0  # seconds the job has spent before measuring (link check, discovery, probes) plus its ceilings
    setup_what: str = "discovery, probes"  # what the set-up holds, in words
    rounds_needed: int = MIN_RANKED  # the rounds every row needs (a rank: 3; a `tune` remedy's verdict: 6)
    what: str | None = None  # the scenarios in words, when counting them says less (`tune`: chosen later)
    needs: str | None = None  # what the rounds are needed for, in words, when it is not a rank or a verdict
    fits: str | None = None  # a narrower plan that fits, in words, offered before a larger budget
    narrows: bool = True  # the command's narrowing options (--cipher, --kex, ...) change this plan
    once: bool = False  # a plan run once, not in rounds (`load --job session`'s steps): per_round is all of it
    kept: float = 0.0  # seconds of the set-up the next run does not spend again (drivers built once, then kept)

    @property
    def rounds(self) -> int | None:
        """Return the rounds that fit after the set-up and the warm-ups (None without a budget)."""
        if self.budget is None:
            return None
        left = self.budget - self.setup - self.warmup
        return max(0, math.floor(left / self.per_round)) if self.per_round > 0 else 0

    def describe(self) -> str:
        """Return the plan in one line, for the user to see before measuring."""
        what = self.what or " + ".join(
            f"{n} {word} scenario{'s' if n != 1 else ''}"
            for n, word in ((self.connections, "connection"), (self.transfers, "transfer"))
            if n
        )
        setup = f"set-up ~{_secs(self.setup)} ({self.setup_what}), " if self.setup else ""
        warm = f"warm-ups ~{_secs(self.warmup)}, then " if self.warmup else ""
        line = f"Plan: {what}; {setup}{warm}~{_secs(self.per_round)} {'to run them' if self.once else 'per round'}"
        if self.budget is not None and self.once:
            fits = "fits" if (self.rounds or 0) >= 1 else "does not fit"
            line += f": {fits} the {_secs(self.budget)} budget (--max-time)"
        elif self.budget is not None:
            line += f": ~{self.rounds} rounds fit the {_secs(self.budget)} budget (--max-time)"
        return line

    def problem(self) -> str | None:
        """Return why the plan cannot give every row enough samples within the budget, else None."""
        if self.budget is None or (self.rounds or 0) >= self.rounds_needed:
            return None
        n = self.connections + self.transfers
        they = f"{n} scenario{'s need' if n != 1 else ' needs'}" if self.what is None else f"{self.what} need"
        setup = f"~{_secs(self.setup)} of set-up ({self.setup_what}) and " if self.setup else ""
        warm = f"~{_secs(self.warmup)} of warm-ups" if self.warmup else ""
        if self.setup + self.warmup >= self.budget and not self.once:
            return f"{they} {setup}{warm or 'nothing more'}; the budget is {_secs(self.budget)}"
        if self.once:
            return f"{they} {setup}~{_secs(self.per_round)} to run them; the budget is {_secs(self.budget)}"
        return (
            f"{they} {setup}{warm + ' and ' if warm else ''}~{_secs(self.per_round)} per round; "
            f"the {_secs(self.budget)} budget leaves {self.rounds} round(s) and {self._needs()}"
        )

    def _needs(self) -> str:
        """Return what the rounds are needed for, in words."""
        if self.needs:
            return self.needs
        if self.rounds_needed == MIN_RANKED:
            return f"a rank needs {MIN_RANKED}"
        return f"a verdict on a change needs {self.rounds_needed}"

    def needed(self) -> float:
        """Return the budget that would give every row the samples a rank needs, on the next run (what this one
        built once is kept)."""
        return self.setup - self.kept + self.warmup + self.rounds_needed * self.per_round


def _secs(seconds: float) -> str:
    """Format a duration for people: 0.5 s, 40 s, 3 min 20 s."""
    if seconds < 9.95:
        return f"{max(seconds, 0.1):.1f} s"
    whole = round(seconds)
    return f"{whole} s" if whole < 120 else f"{whole // 60} min {whole % 60:02d} s"


def estimate(
    scenarios: Sequence[Scenario],
    opts: JobOptions,
    probe_for: Callable[[Scenario], Probe | None],
    setup: float = 0.0,
    setup_what: str = "discovery, probes",
) -> Estimate | None:
    """Estimate a plan's time from probed costs (None when there is nothing to measure or no probe); `setup`: what
    the job spent before measuring and will spend on its crypto ceilings, inside the same budget."""
    if not scenarios:
        return None
    warmup = per_round = 0.0
    for sc in scenarios:
        p = probe_for(sc)
        if p is None or (sc.kind is not Kind.LATENCY and (p.rate is None or p.steady is None)):
            return None
        if sc.kind is Kind.LATENCY:
            warmup += p.connection * opts.plan.warmup
            per_round += p.connection
            continue
        assert p.rate is not None and p.steady is not None
        size = opts.size or p.steady * MB * opts.sample_seconds
        calibration = opts.size or calibration_size(opts)
        warmup += (p.connection + calibration / MB / p.rate) * opts.plan.warmup
        per_round += p.connection + size / MB / p.rate
    lat = sum(1 for sc in scenarios if sc.kind is Kind.LATENCY)
    return Estimate(lat, len(scenarios) - lat, warmup, per_round, opts.plan.max_time, setup, setup_what)


def check(est: Estimate | None, narrowing: Sequence[str] = ()) -> None:
    """Refuse, before anything is stored, a plan the budget cannot give enough samples to rank (`narrowing`: the
    options of the command that narrow its plan, offered in the fix)."""
    why = None if est is None else est.problem()
    if est is None or why is None:
        return
    ways = [est.fits] if est.fits else []
    ways += [f"narrow the plan ({', '.join(narrowing)})"] if narrowing else []
    kept = f" (the {_secs(est.kept)} it took to build drivers is not spent again: they are kept)" if est.kept else ""
    ways += [f"raise --max-time to at least {math.ceil(est.needed())}s{kept}"]
    raise SshbenchError(
        why,
        place="--max-time",
        fix=", ".join(ways[:-1]) + (" or " if len(ways) > 1 else "") + ways[-1],
        code=ExitCode.USAGE,
    )
