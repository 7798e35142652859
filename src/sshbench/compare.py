"""Compare two runs (pure): per scenario the change in %, significant only when the CIs do not overlap.

Scenarios are matched on what they measure: kind, server, profile, host key, cipher, MAC, direction, and
the kex of connection scenarios (the untimed kex a sweep pins for transfers is ignored). Environment
differences that make a comparison doubtful (CPU, crypto flags, versions, emulation, pinning) are listed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sshbench.errors import ExitCode, SshbenchError
from sshbench.model import Kind, Scenario
from sshbench.options import parse_percent
from sshbench.stats import Summary, summarize
from sshbench.store import StoredScenario

ENV_KEYS = {
    "cpu_model": "CPU",
    "cpu_flags": "CPU crypto flags",
    "cpus": "CPU count",
    "kernel": "kernel",
    "openssh_client": "OpenSSH client",
    "openssl": "OpenSSL",
    "server_banner": "server software",
    "emulation": "emulation",
    "pinning": "CPU pinning",
    "server_settings": "server settings",
}


@dataclass(frozen=True)
class Change:
    """One scenario in both runs (or one of them) and what changed."""

    scenario: Scenario
    a: Summary | None
    b: Summary | None
    percent: float | None  # change of the measured value, B against A
    verdict: str  # faster | slower | no change | only in A | only in B

    @property
    def slower_by(self) -> float:
        """Return how much slower B is, in % (0 when not slower)."""
        if self.verdict != "slower" or self.percent is None:
            return 0.0
        return -self.percent if self.scenario.kind is Kind.THROUGHPUT else self.percent


def match_key(sc: Scenario) -> tuple[Any, ...]:
    """Return what a scenario measures, for matching across runs."""
    kex = sc.kex if sc.kind is Kind.LATENCY else None
    return (sc.kind, sc.server, sc.profile, kex, sc.hostkey, sc.cipher, sc.mac, sc.direction)


def _summary(st: StoredScenario) -> Summary | None:
    """Summarize a scenario's measured values."""
    values = [s.value for s in st.samples if s.ok and not s.warmup and s.value is not None]
    return summarize(values) if values else None


def _verdict(kind: Kind, a: Summary, b: Summary) -> str:
    """Return faster/slower/no change for B against A."""
    if a.overlaps(b):
        return "no change"
    better = b.median > a.median if kind is Kind.THROUGHPUT else b.median < a.median
    return "faster" if better else "slower"


def compare(run_a: Sequence[StoredScenario], run_b: Sequence[StoredScenario]) -> list[Change]:
    """Return one Change per scenario measured in either run, in A's order then B's extras."""
    a_by = {match_key(st.scenario): st for st in run_a}
    b_by = {match_key(st.scenario): st for st in run_b}
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
        changes.append(Change(scenario, sa, sb, percent, _verdict(scenario.kind, sa, sb)))
    return changes


def environment_differences(env_a: dict[str, Any], env_b: dict[str, Any]) -> list[str]:
    """Return one line per environment property that differs between the runs."""
    out = []
    for key, name in ENV_KEYS.items():
        va, vb = env_a.get(key), env_b.get(key)
        if key == "emulation":
            va, vb = (va or {}).get("name"), (vb or {}).get("name")
        if va != vb:
            out.append(f"{name} differs: {_short(va)} -> {_short(vb)}")
    return out


def _short(value: Any) -> str:
    """Render an environment value briefly."""
    if isinstance(value, dict):
        on = [k for k, v in value.items() if v is True]
        return ", ".join(on) if on and len(on) == sum(isinstance(v, bool) for v in value.values()) else str(value)
    return "none" if value is None else str(value)


def parse_fail_if(spec: str) -> float:
    """Parse `slower:5%` into 5.0 (percent)."""
    kind, _, amount = spec.partition(":")
    if kind != "slower" or not amount:
        raise SshbenchError(
            f"bad --fail-if {spec!r}",
            place="--fail-if",
            fix="use slower:PERCENT, e.g. --fail-if slower:5%",
            code=ExitCode.USAGE,
        )
    return parse_percent(amount, "--fail-if") * 100


def regressions(changes: Sequence[Change], threshold: float) -> list[Change]:
    """Return significant slow-downs larger than `threshold` percent."""
    return [c for c in changes if c.slower_by > threshold]
