"""The answer first: what a measuring run found, in a few lines, on the brief screen (render/screen.py).

It says, from the same analysis the complete screen's sentences come from: each question's leader with its interval
and what bounds it, the policy's pick where it is not the leader (and what it gives up), what post-quantum costs a
login, the waits a login spends on delayed ACKs, and the one thing to do next. The complete screen (`--details`)
says each of these whole, with every caveat; nothing here is not held by the tables or said there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.console import Console

from sshbench import hints
from sshbench.analyse.claims import bounds
from sshbench.analyse.claims.fastest import GROUP_WORDS, pick, rating_note
from sshbench.analyse.kexcost import BASELINE, kex_costs, said
from sshbench.analyse.logins import login_split
from sshbench.analyse.policy import Policy
from sshbench.analyse.results import Row
from sshbench.model import Kind, Scenario
from sshbench.ratios import Standing
from sshbench.records import RunRecord, StoredScenario
from sshbench.render import screen
from sshbench.stats import CONFIDENCE


def _row(r: Row) -> str:
    """Return a row's name, median and interval: `aes128-gcm@openssh.com 1065 MB/s (1023-1109)`, its coverage
    named where it is under 95 % (`(284-362, a 94 % interval)`), as the table labels it."""
    metric, s = r.scenario.metric, r.summary
    assert s is not None
    name = metric.labels.name(r.scenario).strip()
    cover = f", a {s.coverage * 100:.0f} % interval" if s.coverage < CONFIDENCE else ""
    interval = f" ({metric.format(s.ci_low)}-{metric.format(s.ci_high)}{cover})" if s.n >= 2 else ""
    return f"{name} {metric.format(s.median)} {metric.unit}{interval}"


def _bound(r: Row, lim: bounds.Limits | None, rows: Sequence[Row]) -> str:
    """Return `, server-cpu-bound` for a transfer whose bound is known (else nothing)."""
    found = bounds.diagnose(r, lim, rows) if lim is not None and r.scenario.direction is not None else None
    return "" if found is None else f", {found.bound.kind}-bound"


def _against(r: Row) -> str:
    """Return how a pick stands against its group's leader: ` (3 % slower)` (the median of their per-round ratios),
    equivalent, or not told apart yet (nothing where it was not read)."""
    if r.standing is Standing.EQUIVALENT:
        return " (equivalent to the leader)"
    if r.standing is Standing.INCONCLUSIVE:
        return " (not told apart from the leader yet)"
    if r.standing is not Standing.SLOWER or r.against_leader is None:
        return ""
    return f" ({abs(r.against_leader.ratio.value - 1) * 100:.0f} % slower)"


def _picked(sc: Scenario, rows: Sequence[Row]) -> str:
    """Return the pick's name as `recommend` gives it: a connection's key exchange alone where the rows vary in it
    (recommend picks the host key apart, from the rows of the default key exchange), its host key where they share
    one key exchange; a transfer's cipher (+ MAC)."""
    if sc.kind is not Kind.LATENCY or sc.kex is None or sc.hostkey is None:  # a default row: its own label
        return sc.metric.labels.name(sc).strip()
    return sc.kex if len({r.scenario.kex for r in rows}) > 1 else f"host key {sc.hostkey}"


def answer_lines(
    run: RunRecord, stored: Sequence[StoredScenario], by_group: Mapping[str, list[Row]], policy: Policy
) -> list[str]:
    """Return the answer's lines: one a question, then post-quantum's cost, a login's waits and what to do next."""
    default = run.discovery.default() if run.discovery else None
    lim = bounds.limits(run.environment, bounds.has_evidence(stored))
    out = []
    for group, word in GROUP_WORDS.items():
        rows = by_group.get(group, [])
        p = pick(rows, policy, default, run.options.margin)
        if p is None:
            continue
        note = rating_note(run.discovery, "kex", p.leader.scenario.kex)  # ` (ssh-audit: fail)`, as the claim says
        line = f"  {word}: {_row(p.leader)}{note}{_bound(p.leader, lim, rows)}"
        if p.chosen is not p.leader:
            chosen = p.chosen.scenario
            line += f"; {p.policy} picks {_picked(chosen, rows)}{_against(p.chosen)}"
        out.append(line)
        if p.loses and default is not None:
            who = "it" if p.chosen is p.leader else "the pick"  # named on the line above
            out.append(f"  ! {who} is not post-quantum; your default {default.kex} is")
    pq = [c for c in kex_costs(stored) if c.post_quantum and c.extra_time is not None]
    if pq and pq[0].extra_time is not None:
        out.append(f"  post-quantum {pq[0].scenario.kex}: {said(pq[0].extra_time)} a login against {BASELINE}")
    split = login_split(stored)
    if split is not None and split.waits > 0:
        out.append(f"  a login waits {split.waits * 1e3:.0f} ms on delayed ACKs: --details says what removes them")
    return out


def print_answer(
    console: Console,
    run: RunRecord,
    stored: Sequence[StoredScenario],
    by_group: Mapping[str, list[Row]],
    policy: Policy,
) -> None:
    """Print the answer under its title, and the command that turns it into config lines."""
    lines = answer_lines(run, stored, by_group, policy)
    if not lines:
        return
    whole = hints.sshbench("show", str(run.id), "--details")
    screen.say(console, f"The answer ({policy.name}; every caveat and figure: `{whole}`):", style="bold")
    for line in lines:
        screen.say(console, line)
    if run.kind.row.recommends:
        screen.say(console, f"  next: `{hints.sshbench('recommend', str(run.id))}` prints the config lines")
