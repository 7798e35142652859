"""Compare two runs (pure): per scenario the change in %, significant only when the CIs do not overlap.

Scenarios are matched on what they measure (`Scenario.match_key`: kind, server, profile, algorithms and
direction; fields a metric marks as untimed, like the kex a sweep pins for transfers, are ignored).
Environment differences that make a comparison doubtful (CPU, crypto flags, versions, emulation,
pinning) are listed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sshbench.environment import Environment
from sshbench.model import Scenario
from sshbench.records import StoredScenario
from sshbench.stats import Summary, summarize

# What is compared between two runs' environments: (name shown, how to read it).
ENVIRONMENT_FIELDS: tuple[tuple[str, Callable[[Environment], object]], ...] = (
    ("CPU", lambda e: e.cpu_model),
    ("CPU crypto flags", lambda e: ", ".join(e.flags_on()) if e.cpu_flags else None),
    ("CPU count", lambda e: e.cpus),
    ("kernel", lambda e: e.kernel),
    ("OpenSSH client", lambda e: e.openssh_client),
    ("OpenSSL", lambda e: e.openssl),
    ("server software", lambda e: e.server_banner),
    ("emulation", lambda e: e.emulation.name if e.emulation else None),
    ("CPU pinning", lambda e: e.pinning.to_json() if e.pinning else None),
    ("server settings", lambda e: list(e.embedded.settings) if e.embedded else None),
    ("client CPU limit", lambda e: e.client_limit),
    ("emulated link", lambda e: e.link.name if e.link else None),
)


@dataclass(frozen=True)
class Change:
    """One scenario in both runs (or one of them) and what changed."""

    scenario: Scenario
    a: Summary | None
    b: Summary | None
    percent: float | None  # change of the measured value, B against A
    verdict: str  # faster | slower | no change | too few samples | only in A | only in B

    @property
    def slower_by(self) -> float:
        """Return how much slower B is, in % (0 when not slower)."""
        if self.verdict != "slower" or self.percent is None:
            return 0.0
        return -self.percent if self.scenario.metric.higher_is_better else self.percent


def _summary(st: StoredScenario) -> Summary | None:
    """Summarize a scenario's measured values."""
    values = st.values()
    return summarize(values) if values else None


def _verdict(scenario: Scenario, a: Summary, b: Summary) -> str:
    """Return faster/slower/no change for B against A (no verdict from fewer than MIN_RANKED samples)."""
    if not (a.rankable and b.rankable):
        return "too few samples"
    if a.overlaps(b):
        return "no change"
    return "faster" if scenario.metric.better(b.median, a.median) else "slower"


def compare(run_a: Sequence[StoredScenario], run_b: Sequence[StoredScenario]) -> list[Change]:
    """Return one Change per scenario measured in either run, in A's order then B's extras."""
    a_by = {st.scenario.match_key(): st for st in run_a}
    b_by = {st.scenario.match_key(): st for st in run_b}
    changes = []
    for key in [*a_by, *(k for k in b_by if k not in a_by)]:
        sa = _summary(a_by[key]) if key in a_by else None
        sb = _summary(b_by[key]) if key in b_by else None
        scenario = (a_by.get(key) or b_by[key]).scenario
        if sa is None or sb is None:
            if sa is None and sb is None:
                continue
            changes.append(Change(scenario, sa, sb, None, "only in A" if sb is None else "only in B"))
            continue
        percent = 100 * (sb.median / sa.median - 1)
        changes.append(Change(scenario, sa, sb, percent, _verdict(scenario, sa, sb)))
    return changes


def environment_differences(env_a: Environment, env_b: Environment) -> list[str]:
    """Return one line per environment property that differs between the runs."""
    out = []
    for name, read in ENVIRONMENT_FIELDS:
        va, vb = read(env_a), read(env_b)
        if va != vb:
            out.append(f"{name} differs: {_short(va)} -> {_short(vb)}")
    return out


def _short(value: object) -> str:
    """Render an environment value briefly."""
    return "none" if value is None else str(value)


def regressions(changes: Sequence[Change], threshold: float) -> list[Change]:
    """Return significant slow-downs larger than `threshold` percent."""
    return [c for c in changes if c.slower_by > threshold]
