"""What a `load` run's stored logins say per step: offered and achieved rate, latency percentiles from each login's
intended start (an HdrHistogram of the stored logins, never hand-made), failures by cause with the 95 % upper bound
of the failure rate, and the generator's CPU per login; per burst setting (`--burst`): how many connections were
dropped with an exact interval, why, and how long until all were served, and two settings compared exactly (Fisher).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from hdrh.histogram import HdrHistogram

from sshbench import loadwords
from sshbench.environment import Environment
from sshbench.exact import interval, upper_bound
from sshbench.loadwords import DIED, HALTED, HOST_CLOSERS, LOGGED, SOURCE, before_banner, burst_of, latest
from sshbench.products import LOST, ROLE_PHASE, ROLES
from sshbench.records import StoredScenario
from sshbench.samples import Sample

LOWEST_US, HIGHEST_US, DIGITS = 1, 3_600_000_000, 3  # 1 us .. 1 h, 3 significant digits
PERCENTILES = (50.0, 90.0, 99.0, 99.9)
FROM_LOG = " (the server's log)"  # how a cause the server's log gave reads


def cause(error: str | None) -> str:
    """Return a failed login's cause: the server's reason where its log gave one, else the client's words with its
    own source address and port written as SOURCE, so that the same failure from different sources counts as one
    cause (the stored words are kept as they were)."""
    words = error or "no reason given"
    if LOGGED in words:
        return f"{words.split(LOGGED, 1)[0]}{FROM_LOG}"
    return SOURCE.sub("SOURCE->", words)


def intended(s: Sample) -> float:
    """Return a login's intended start, seconds from its step's start (stored as its `intended` phase)."""
    return dict(s.phases).get("intended", 0.0)


@dataclass(frozen=True)
class Step:
    """One step's logins, read back."""

    rate: float
    logins: int
    failures: int
    causes: tuple[tuple[str, int], ...]
    achieved: float | None  # successful logins per second, from the step's start to its last login's end
    percentiles: tuple[tuple[float, float], ...]  # (percentile, seconds from the intended start), successful logins
    worst: float | None  # the slowest successful login, seconds
    generator_cpu: float | None  # the generator's CPU seconds per login (the ssh client's, from wait4)
    upper: float  # 95 % upper bound of the failure rate
    late: float | None  # the latest a login started after its intended start, seconds (the generator's own lag)
    generator_share: float | None = None  # of the CPU the generator may use, over the step (None: not known)
    server_cpu: float | None = None  # the server's CPU seconds per login over the step (its cgroup's; None: unknown)
    server_share: float | None = None  # of the CPU the server may use, over the step
    stopped: str | None = None  # why the step broke off (its server died): not read for the knee
    server_cpu_by: str | None = None  # cgroup, or reaped (no cgroup: the listener's and its reaped children's)
    roles: tuple[tuple[str, float], ...] = ()  # the server's CPU seconds per login by process role (root only)
    halted: str | None = None  # why a step against a host of the user's was stopped early (closes before the banner)
    planned: int | None = None  # the logins its schedule planned (None: not known, a merged run's)
    server_cores: int | None = None  # the CPUs the server could use (None: not judged)
    growth: float | None = None  # the median login of the step's last quarter over its first quarter's (a queue)
    kex: str | None = None  # the key exchange its logins were pinned to (None: the client's own choice)
    service: tuple[tuple[float, float], ...] = ()  # (percentile, seconds from the actual start): the server's time,
    # without the generator's lag (the table's percentiles are from the intended start: what users feel)

    @property
    def growing(self) -> bool:
        """Return True for a step whose logins took ever longer: a queue grew, the server did not keep up."""
        return self.growth is not None and self.growth > GROWING

    @property
    def capacity(self) -> float | None:
        """Return the logins a second the server's CPUs could serve at this step's server CPU a login (None: not
        counted)."""
        if not self.server_cpu or not self.server_cores:
            return None
        return self.server_cores / self.server_cpu

    @property
    def cut(self) -> bool:
        """Return True for a step that ended before its planned logins did (the run was stopped in it)."""
        return self.planned is not None and self.logins < self.planned and self.halted is None

    @property
    def generator_bound(self) -> bool:
        """Return True for a step whose generator used GENERATOR_BOUND of its CPU or more: not the server's."""
        return self.generator_share is not None and self.generator_share >= GENERATOR_BOUND

    def at(self, percentile: float) -> float | None:
        """Return the latency at a percentile, or None without successful logins."""
        return dict(self.percentiles).get(percentile)


def generator_cpus(env: Environment) -> int | None:
    """Return how many CPUs a run's generator could use: one when pinned apart from the server, else the machine's
    (None: not recorded)."""
    if env.pinning is not None and env.pinning.client_cpu is not None:
        return 1
    return env.cpus


def server_cpus(env: Environment) -> int | None:
    """Return how many CPUs a run's embedded server could use: one when pinned, else the machine's."""
    if env.pinning is not None and env.pinning.server_cpu is not None:
        return 1
    return env.cpus


def histogram(seconds: Sequence[float]) -> HdrHistogram:
    """Return an HdrHistogram of latencies (recorded in microseconds)."""
    h = HdrHistogram(LOWEST_US, HIGHEST_US, DIGITS)
    for v in seconds:
        h.record_value(min(max(int(v * 1e6), LOWEST_US), HIGHEST_US))
    return h


def server_seconds(logins: Sequence[Sample]) -> tuple[float, str] | None:
    """Return the server's CPU seconds over a step or burst, from its start to the last login's end, and how they
    were counted: `cgroup`, or `reaped` (the listener's and its reaped children's; None: not counted)."""
    marks = [dict(s.phases) for s in logins]
    for by, prefix in (("cgroup", "server_cpu"), ("reaped", "reaped_cpu")):
        spans = [(p[f"{prefix}_from"], p[f"{prefix}_to"]) for p in marks if f"{prefix}_to" in p]
        if spans:
            return max(to for _, to in spans) - min(fro for fro, _ in spans), by
    return None


def role_seconds(logins: Sequence[Sample]) -> tuple[tuple[str, float], ...]:
    """Return the server's CPU seconds over a step by process role, in the roles' order (each login carries each
    role's total so far; () where none was counted, or some of the kernel's records were lost)."""
    so_far: dict[str, float] = {}
    for s in logins:
        for name, seconds in s.phases:
            if name.startswith(ROLE_PHASE):
                role = name.removeprefix(ROLE_PHASE)
                so_far[role] = max(so_far.get(role, 0.0), seconds)
    return () if LOST in so_far else tuple((r, so_far[r]) for r in ROLES if r in so_far)


def step(
    st: StoredScenario,
    seconds: float,
    cpus: int | None = None,
    server_cpus: int | None = None,
    planned: int | None = None,
) -> Step:
    """Summarize one step of `seconds` from the stored logins of its latest attempt; `cpus`: how many CPUs the
    generator may use, and `server_cpus` the server (None: the share is not judged); `planned`: the logins its
    schedule planned."""
    logins = latest([s for s in st.samples if not s.warmup])
    ok = [s for s in logins if s.ok and s.value is not None]
    values = [s.value for s in ok if s.value is not None]
    h = histogram(values) if values else None
    ends = [intended(s) + (s.value or 0.0) for s in ok]
    cpu = [s.client_cpu for s in logins if s.client_cpu is not None]
    late = [dict(s.phases).get("late") for s in logins]
    span = max([seconds, *ends, *(intended(s) + s.wall for s in logins)])
    served = server_seconds(logins)
    return Step(
        rate=st.scenario.load.size if st.scenario.load else 0.0,
        logins=len(logins),
        failures=len(logins) - len(ok),
        causes=tuple(Counter(cause(s.error) for s in logins if not s.ok).most_common()),
        achieved=len(ok) / max(seconds, *ends) if ok else None,
        percentiles=tuple((p, h.get_value_at_percentile(p) / 1e6) for p in PERCENTILES) if h else (),
        worst=h.get_max_value() / 1e6 if h else None,
        generator_cpu=statistics.fmean(cpu) if cpu else None,
        upper=upper_bound(len(logins) - len(ok), len(logins)),
        late=max((v for v in late if v is not None), default=None),
        generator_share=sum(cpu) / (span * cpus) if cpus and cpu else None,
        server_cpu=served[0] / len(logins) if served is not None and logins else None,
        server_share=served[0] / (span * server_cpus) if served is not None and server_cpus else None,
        server_cpu_by=served[1] if served is not None else None,
        roles=tuple((r, v / len(logins)) for r, v in role_seconds(logins)),
        stopped=st.failure.removeprefix(DIED) if st.failure and st.failure.startswith(DIED) else None,
        halted=st.failure.removeprefix(HALTED) if st.failure and st.failure.startswith(HALTED) else None,
        planned=planned,
        server_cores=server_cpus,
        growth=_growth(ok),
        kex=st.scenario.kex,
        service=_percentiles([(s.value or 0.0) - dict(s.phases).get("late", 0.0) for s in ok]),
    )


def _percentiles(seconds: Sequence[float]) -> tuple[tuple[float, float], ...]:
    """Return PERCENTILES of `seconds` from an HdrHistogram (() for none)."""
    if not seconds:
        return ()
    h = histogram(seconds)
    return tuple((p, h.get_value_at_percentile(p) / 1e6) for p in PERCENTILES)


def _growth(ok: Sequence[Sample]) -> float | None:
    """Return the median login time of a step's last quarter of arrivals over its first quarter's (None: fewer than
    QUARTERS_FROM logins, or the last quarter not surely slower: a noisy second is not a queue)."""
    if len(ok) < QUARTERS_FROM:
        return None
    from scipy.stats import mannwhitneyu  # slow to import, needed only here

    times = [s.value or 0.0 for s in sorted(ok, key=intended)]
    quarter = len(times) // 4
    first, last = times[:quarter], times[-quarter:]
    if statistics.median(first) <= 0 or mannwhitneyu(last, first, alternative="greater").pvalue >= GROWTH_P:
        return None
    return statistics.median(last) / statistics.median(first)


RARE_FAILURES = 0.001  # a step whose logins fail this often or more is past the knee
GENERATOR_BOUND = 0.85  # a step whose generator used this share of its CPU or more says nothing of the server


GROWING = 1.5  # a step whose last logins took this many times its first ones' built a queue: not sustained
QUARTERS_FROM = 32  # fewest logins a step's growth is read from (quarters of 8: enough for GROWTH_P)
GROWTH_P = 0.001  # the last quarter's logins must be slower than the first's at this one-sided Mann-Whitney p


def within(s: Step, slo: float) -> bool:
    """Return True for a step whose p99 stays under the SLO, whose logins failed less than 0.1 % of the time, and
    whose logins did not take ever longer (a queue that grows breaks any SLO given a longer step)."""
    p99 = s.at(99.0)
    kept = s.logins > 0 and p99 is not None and p99 <= slo and s.failures / s.logins < RARE_FAILURES
    return kept and not s.growing


@dataclass(frozen=True)
class Knee:
    """The highest offered rate of a run's steps that stayed within the SLO (None: none did), the first that did not
    (None: none broke it), and the steps not read (the generator was the bottleneck, or their server died)."""

    rate: float | None
    broken: Step | None
    slo: float
    unread: tuple[Step, ...] = ()
    kept: Step | None = None  # the step at the knee's rate
    busiest: Step | None = None  # the read step whose server used the largest share of its CPUs (its capacity said)

    def sentence(self, silent: str = "", host: bool = False) -> str:
        """Return the knee in words; `silent`: the limits of this server that log nothing (named where the evidence
        does not say what bounds a step); `host`: a host of the user's, whose log and CPU are not read."""
        slo = f"p99 under {self.slo * 1000:g} ms, no queue growing and fewer than 0.1 % of its logins failing"
        unread = "; ".join(f"{s.rate:g}/s not read: {why_unread(s)}" for s in self.unread)
        shown = f"; {failures_shown(self.kept)}" if self.kept is not None else ""
        if self.broken is None:
            top = f"up to {self.rate:g}/s" if self.rate is not None else "no step"
            if unread:
                least = f"at least {self.rate:g}/s" if self.rate is not None else "not known"
                return f"every step read kept {slo}, {top}; {unread}: the knee is {least}{shown}"
            return f"every step kept {slo}, {top}: the knee is higher than the rates tried{shown}"
        b = self.broken
        why = _broke(b, self.slo)
        tail = f" ({unread})" if unread else ""
        if self.rate is None:
            return f"no step kept {slo}: the lowest, {b.rate:g}/s, had {why}{tail}; {bounded_by(b, silent, host)}"
        bound = bounded_by(b, silent, host)
        said = f"the knee: {self.rate:g}/s kept {slo}; {b.rate:g}/s did not ({why}){tail}; {bound}{shown}"
        return said + self.predicted()

    def predicted(self) -> str:
        """Return the knee beside what the server's CPU predicts (its busiest step's CPU a login), or ''."""
        s = self.busiest
        if s is None or s.capacity is None or self.rate is None or s.server_cores is None or s.server_cpu is None:
            return ""
        cpus = "one CPU" if s.server_cores == 1 else f"{s.server_cores} CPUs"
        verb = "serves" if s.server_cores == 1 else "serve"
        return (
            f"; {cpus} at {s.server_cpu * 1000:.1f} ms of server CPU a login (at {s.rate:g}/s) {verb} at most "
            f"{s.capacity:.0f}/s: the knee is {self.rate / s.capacity * 100:.0f} % of that"
        )


def _broke(s: Step, slo: float) -> str:
    """Return how a step broke the SLO: its p99, its failures, or a queue that grew through it."""
    p99 = s.at(99.0)
    if p99 is not None and p99 > slo:
        return f"p99 {p99 * 1000:.0f} ms"
    if s.failures / max(s.logins, 1) >= RARE_FAILURES:
        return f"{s.failures} of {s.logins} failed"
    return (
        f"p99 {(p99 or 0) * 1000:.0f} ms, but a queue grew: its last logins took {s.growth or 0:.1f} times its first "
        f"ones, {s.achieved or 0:.1f} served a second"
    )


def logins_to_show(rate: float) -> int:
    """Return the logins a step needs without a failure for its 95 % bound of the failure rate to fall under `rate`."""
    return math.ceil(math.log(0.05) / math.log1p(-rate))


def failures_shown(s: Step) -> str:
    """Return what a step's logins show of its failure rate: its count and 95 % upper bound, and, where that bound
    is above the SLO's 0.1 %, how many logins a step needs to show it."""
    pct = s.upper * 100
    said = f"{s.failures} of {s.logins} failed at {s.rate:g}/s, so its failure rate is at most "
    said += f"{pct:.1f} %" if pct >= 1 else f"{pct:.2g} %"
    if s.upper <= RARE_FAILURES:
        return said + " at 95 % confidence: under the SLO's 0.1 % as far as logins can show"
    need = logins_to_show(RARE_FAILURES)
    return said + f" at 95 % confidence: too few logins to show 0.1 %, which takes {need:,} a step without a failure"


def bounded_by(s: Step, silent: str = "", host: bool = False) -> str:
    """Return what held a step past the SLO: a limit its log named, the server's words for its drops, or its CPU;
    else not said, with the limits that log nothing (`silent`; a host of the user's: what can close connections)."""
    if s.halted is not None:
        return "what bounds it: the host closed connections before the banner (a limit or penalty of the host's)"
    said = next((said for words, _ in s.causes if (said := loadwords.server_said(words))), None)
    refused = f'the server refused connections, writing "{said}" before closing them ({loadwords.refusal(said or "")})'
    logged = [(words, n) for words, n in s.causes if words.endswith(FROM_LOG)]
    if host and said is None:
        closed = any(before_banner(words) for words, _ in s.causes)
        why = f"; what can close connections before the banner there: {HOST_CLOSERS}" if closed else ""
        return f"what bounds it is not said: a host of yours, whose log and CPU sshbench does not read{why}"
    if logged and not host:
        words, n = logged[0]
        return f"what bounds it: a limit of the server's ({n} {words.removesuffix(FROM_LOG)})"
    if said is not None:  # its own words for its drops: all a host of the user's tells, and a log that named none
        return f"what bounds it: {refused}"
    if s.server_share is not None and s.server_share >= GENERATOR_BOUND:
        return f"what bounds it: the server's CPU ({s.server_share * 100:.0f} % of what it may use)"
    share = f"its CPU {s.server_share * 100:.0f} %" if s.server_share is not None else "its CPU not counted"
    hint = f" (this server has limits that log nothing: {silent})" if silent else ""
    return f"what bounds it is not said: no limit in the server's log, {share}{hint}"


def why_unread(s: Step) -> str:
    """Return why a step says nothing of the server: its server died during it, it was cut short, or the generator
    was the bottleneck."""
    if s.stopped is not None:
        return "its server died during it"
    if s.cut:
        return f"cut short, {s.logins} of its {s.planned} logins (the run was stopped in it)"
    return f"the generator used {(s.generator_share or 0) * 100:.0f} % of its CPU (generator-bound)"


def knee(steps: Sequence[Step], slo: float) -> Knee:
    """Return the knee of steps run in rising order: the last step within the SLO before the first that is not;
    a generator-bound step, one its server died in, or one cut short is read as neither."""
    ordered = sorted((s for s in steps if s.logins), key=lambda s: s.rate)
    unread = tuple(s for s in ordered if s.generator_bound or s.stopped is not None or s.cut)
    read = [s for s in ordered if s not in unread]
    broken = next((s for s in read if not within(s, slo)), None)
    kept = [s.rate for s in read if within(s, slo) and (broken is None or s.rate < broken.rate)]
    at = next((s for s in read if kept and s.rate == kept[-1]), None)
    busy = [s for s in read if s.capacity is not None and s.server_share is not None]
    busiest = max(busy, key=lambda s: s.server_share or 0.0, default=None)
    return Knee(kept[-1] if kept else None, broken, slo, unread, at, busiest)


@dataclass(frozen=True)
class Bursts:
    """One setting's bursts, read back: N connections started at one instant, repeated."""

    size: int
    setting: tuple[str, ...] | None  # this arm's sshd_config options (`MaxStartups=10:30:60`), None: as started
    bursts: int
    logins: int
    dropped: int
    causes: tuple[tuple[str, int], ...]
    interval: tuple[float, float]  # exact 95 % interval of the proportion dropped
    served: float | None  # median over the bursts of the time until the last of its served logins ended, seconds
    percentiles: tuple[tuple[float, float], ...]  # latency of the served logins from the burst's instant

    @property
    def label(self) -> str:
        """Return how the arm reads: `as started` or `with MaxStartups=10:30:60`."""
        return "as started" if self.setting is None else f"with {', '.join(self.setting)}"

    def at(self, percentile: float) -> float | None:
        """Return the latency at a percentile, or None without served logins."""
        return dict(self.percentiles).get(percentile)


def bursts(st: StoredScenario) -> Bursts:
    """Summarize one setting's stored bursts."""
    logins = [s for s in st.samples if not s.warmup]
    ok = [s for s in logins if s.ok and s.value is not None]
    values = [s.value for s in ok if s.value is not None]
    h = histogram(values) if values else None
    last: dict[int, float] = {}
    for s in ok:
        last[burst_of(s)] = max(last.get(burst_of(s), 0.0), s.value or 0.0)
    dropped = len(logins) - len(ok)
    return Bursts(
        size=st.scenario.load.count if st.scenario.load else 0,
        setting=st.scenario.remedy.options if st.scenario.remedy else None,
        bursts=len({burst_of(s) for s in logins}),
        logins=len(logins),
        dropped=dropped,
        causes=tuple(Counter(cause(s.error) for s in logins if not s.ok).most_common()),
        interval=interval(dropped, len(logins)),
        served=statistics.median(last.values()) if last else None,
        percentiles=tuple((p, h.get_value_at_percentile(p) / 1e6) for p in PERCENTILES) if h else (),
    )
