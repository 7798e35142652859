"""Every claim of a stored run, in the order the terminal states them: for `--json` (`claims`), the report and the
tests that hold each claim against its evidence (pure).

The terminal's renderers call the same builders (fastest, bounds, baselines, recommend), so what `--json` carries
is what the terminal prints. A fleet's claims are its own analysis (analyse/fleet.py) and are not listed here.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Mapping, Sequence

from sshbench.analyse.claims import bounds
from sshbench.analyse.claims.baselines import baseline_claims, efficiency, shares_claims
from sshbench.analyse.claims.caveats import conditions_claim
from sshbench.analyse.claims.core import Claim, ClaimKind
from sshbench.analyse.claims.fastest import fastest_claims
from sshbench.analyse.policy import Policy
from sshbench.analyse.recommend import Recommendation, recommend
from sshbench.analyse.results import Row, ranked
from sshbench.model import Kind
from sshbench.records import RunRecord, StoredRun, StoredScenario
from sshbench.runkinds import entry

TOOL_WAYS = (("tool download", "download"), ("tool upload", "upload"))


def unmeasured_claims(groups: Mapping[str, Sequence[Row]]) -> list[Claim]:
    """Return one claim per row that failed or was skipped (what the tables list under them)."""
    out = []
    for group, rows in groups.items():
        for r in rows:
            if r.summary is None and r.failure:
                label = r.scenario.label
                out.append(Claim(ClaimKind.UNMEASURED, label, f"{group}: {label}: {r.failure}", {"failure": r.failure}))
    return out


def bound_claims(run: RunRecord, stored: Sequence[StoredScenario]) -> list[Claim]:
    """Return what bounds a run's rates: per server in a `servers` run (each its own window), else for the run; none
    for a `clients` run (a library's rate is mostly its own work, which the bounds do not model)."""
    if not run.kind.row.judged:
        return []
    if run.kind.side_by_side:
        out = []
        for report in run.servers:
            env = dataclasses.replace(run.environment, embedded=report.embedded)
            if report.remote:  # a host of the user's: not behind the emulated link, and its crypto is not ours
                env = dataclasses.replace(env, link=None, crypto_ceilings={})
            lim = bounds.limits(
                env,
                bounds.has_evidence([st for st in stored if st.scenario.server == report.name]),
            )
            mine = [st for st in stored if st.scenario.server == report.name]
            if lim is not None:
                lim = dataclasses.replace(lim, peers=_fastest_beside(report.name, stored))
            if lim is not None and mine:
                groups = ranked(mine, run.options.plan.ci_target, run.options.margin)
                out += bounds.bound_claims(groups, lim, prefix=f"{report.name} ")
        return out
    lim = bounds.limits(run.environment, bounds.has_evidence(stored))
    if lim is None:
        return []
    return bounds.bound_claims(ranked(stored, run.options.plan.ci_target, run.options.margin), lim)


def tools_claims(run: RunRecord, groups: Mapping[str, Sequence[Row]]) -> list[Claim]:
    """Return a `tools` run's baseline claims per direction: failed baselines first, then each copy's shares."""
    out = []
    for group, way in TOOL_WAYS:
        rows = groups.get(group, [])
        items = efficiency(rows, run.environment.crypto_ceilings)
        out += baseline_claims(way, rows, items) + shares_claims(way, items)
    return out


def run_recommendation(run: RunRecord, stored: Sequence[StoredScenario], policy: Policy) -> Recommendation:
    """Return a run's recommendation under a policy, with its margin and the conditions it was measured under."""
    return recommend(
        stored, run.discovery, policy, run.options.full_latency, run.options.margin, conditions_claim(run.environment)
    )


def recommendation_claims(rec: Recommendation) -> list[Claim]:
    """Return what a recommendation states: each choice's claims, then the caveats."""
    choices = [c for c in (rec.overall, rec.within_policy, rec.handshake) if c is not None]
    return [claim for c in choices for claim in c.claims()] + list(rec.caveats)


def run_claims(stored: StoredRun, policy: Policy) -> list[Claim]:
    """Return every claim the terminal states about a run (none for a fleet)."""
    run = stored.run
    if run.fleet is not None:
        return []
    groups = ranked(stored.scenarios, run.options.plan.ci_target, run.options.margin)
    out = unmeasured_claims(groups) + bound_claims(run, stored.scenarios)
    if run.kind.sweep:
        out += recommendation_claims(run_recommendation(run, stored.scenarios, policy))
    elif run.kind.row.fastest:
        out += fastest_claims(groups, run.discovery, policy, run.options.margin)
    if run.kind.row.claims:
        out += entry(run.kind.row.claims)(run, groups)
    return out


def _fastest_beside(server: str, stored: Sequence[StoredScenario]) -> dict[str, tuple[str, float, str]]:
    """Return, per direction, the fastest transfer of the servers beside `server` in a `servers` run: its server,
    median MB/s and row."""
    best: dict[str, tuple[str, float, str]] = {}
    for st in stored:
        sc, values = st.scenario, st.values()
        if sc.kind is not Kind.THROUGHPUT or sc.server in (None, server) or sc.direction is None or len(values) < 3:
            continue
        rate = statistics.median(values)
        if rate > best.get(sc.direction.value, ("", 0.0, ""))[1]:
            best[sc.direction.value] = (sc.server or "", rate, sc.metric.labels.name(sc))
    return best
