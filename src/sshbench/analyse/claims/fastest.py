"""Who is fastest, without overclaiming: the leader of a result group, the rows equivalent to it, the rows that
cannot be told apart from it yet, and the rows that were not measured (pure).

A row's standing against the leader comes from `results` (the ratio verdicts of `sshbench.ratios`). The pick is
made among the leader and the rows equivalent to it: the row the policy allows, then the one the client already
negotiates (keeping it costs nothing), then the quicker median. When the policy allows none of them, the pick is
the best row it allows, with its standing. Rows with fewer than `stats.MIN_RANKED` samples never win; failed,
skipped and unranked rows are named, so a winner is never claimed over rows that were not measured. When the
client's default key exchange is post-quantum and the pick is not, the claim says what is lost.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sshbench.analyse.claims.core import BRIEF_NAMES, Claim, ClaimKind, margin_text, names
from sshbench.analyse.policy import Policy
from sshbench.analyse.results import Row
from sshbench.discovery import Discovery, Negotiated
from sshbench.kex import is_post_quantum
from sshbench.model import Kind
from sshbench.ratios import MARGIN, Standing
from sshbench.samples import not_measurable
from sshbench.stats import MIN_RANKED

PQ_LOSS = (
    "your default key exchange {default} is post-quantum and {pick} is not: sessions recorded today could be "
    "decrypted by a future quantum computer"
)
STANDING_WORDS = {
    Standing.SLOWER: "significantly slower than the leader",
    Standing.INCONCLUSIVE: "not told apart from the leader yet",
    Standing.EQUIVALENT: "equivalent to the leader",
}
GROUP_WORDS = {"download": "download", "upload": "upload", "latency": "quickest connection"}


@dataclass(frozen=True)
class Pick:
    """The leader of a result group, who stands with it, and the policy's pick."""

    leader: Row
    chosen: Row
    equivalent: tuple[Row, ...]  # equivalent to the leader within the margin
    inconclusive: tuple[Row, ...]  # not told apart from the leader yet
    unmeasured: tuple[Row, ...]  # failed, skipped, pending, or too few samples to rank
    policy: str
    ranked: int  # rows ranked in the group (the leader included)
    margin: float = MARGIN
    loses: str | None = None  # what the pick gives up against the client's default (post-quantum)

    @property
    def outright(self) -> bool:
        """Return True when the leader is significantly ahead of every other ranked row."""
        return not self.equivalent and not self.inconclusive

    @property
    def top(self) -> tuple[Row, ...]:
        """Return the leader and the rows equivalent to it (what the pick is made among)."""
        return (self.leader, *self.equivalent)


def _fields(row: Row) -> list[tuple[str, str]]:
    """Return the (kind, algorithm) pairs a row is named by."""
    sc = row.scenario
    names_ = (
        [("kex", sc.kex), ("hostkey", sc.hostkey)]
        if sc.kind is Kind.LATENCY
        else [("cipher", sc.cipher), ("mac", sc.mac)]
    )
    return [(k, a) for k, a in names_ if a is not None]


def _is_default(row: Row, default: Negotiated | None) -> bool:
    """Return True when the row measures what the client negotiates with no options."""
    if default is None:
        return False
    return all(getattr(default, kind) == name for kind, name in _fields(row))


def pick(rows: Sequence[Row], policy: Policy, default: Negotiated | None, margin: float = MARGIN) -> Pick | None:
    """Return the leader, its equals and the policy's pick among them (None: nothing ranked)."""
    leader = next((r for r in rows if r.standing is Standing.LEADER), None)
    if leader is None:
        return None

    def allowed(r: Row) -> bool:
        """Return True when the policy allows every algorithm of the row."""
        return all(policy.check(kind, name).allowed for kind, name in _fields(r))

    def preference(r: Row) -> tuple[bool, bool, int]:
        """Sort key: allowed by the policy, the client's default, then the better median (rows come best first)."""
        return (not allowed(r), not _is_default(r, default), rows.index(r))

    equivalent = tuple(r for r in rows if r.standing is Standing.EQUIVALENT)
    chosen = min((leader, *equivalent), key=preference)
    if not allowed(chosen):  # the policy's pick is then the best row it allows: one not told apart from the leader
        close = [r for r in rows if r.standing is Standing.INCONCLUSIVE and allowed(r)]  # before a slower one
        chosen = min(close, key=preference) if close else next((r for r in rows if r.standing and allowed(r)), chosen)
    return Pick(
        leader=leader,
        chosen=chosen,
        equivalent=equivalent,
        inconclusive=tuple(r for r in rows if r.standing is Standing.INCONCLUSIVE),
        unmeasured=tuple(r for r in rows if r.standing is None),
        policy=policy.name,
        ranked=sum(1 for r in rows if r.standing is not None),
        margin=margin,
        loses=pq_loss(default, chosen.scenario.kex),
    )


def _named(r: Row) -> str:
    """Return a row's algorithms and its median with unit."""
    metric = r.scenario.metric
    value = metric.format(r.summary.median) if r.summary else "-"
    return f"{metric.labels.name(r.scenario)} ({value} {metric.unit})"


def _why_unmeasured(r: Row) -> str:
    """Return why a row is left out of the ranking."""
    if r.summary is not None:
        return f"{r.summary.n} sample(s), fewer than the {MIN_RANKED} a rank needs"
    if r.failure:
        return r.failure if not_measurable(r.failure) else f"failed: {r.failure}"
    return "not measured yet"


def _more(r: Row) -> str:
    """Return how many more samples would likely decide an inconclusive row, in words."""
    more = r.against_leader.more if r.against_leader else None
    if not more:
        return "more than 50 times as many samples would be needed to decide"
    return f"about {more} more sample{'s' if more > 1 else ''} each would likely decide"


def sentence(p: Pick, rating_note: str = "", most: int = 6) -> str:
    """Return the claim about a result group's leader, its equals, its pick and what was not measured (`most`
    names of a list inline, the rest counted)."""
    label = p.leader.scenario.metric.labels.name
    if p.outright:
        text = (
            _named(p.leader)
            + rating_note
            + (", the only row measured" if p.ranked == 1 else ", significantly ahead of every other row measured")
        )
    else:
        text = f"{_named(p.leader)}{rating_note} leads"
    if p.equivalent:
        text += f"; equivalent to it {margin_text(p.margin)}: {names([_named(r) for r in p.equivalent], most)}"
    if p.inconclusive:
        each = [f"{_named(r)}: {_more(r)}" for r in p.inconclusive]
        text += f"; not told apart from it yet: {names(each, most)}"
    if p.chosen is not p.leader or p.equivalent:
        if p.chosen in p.top:
            text += f"; {p.policy} picks {label(p.chosen.scenario)}"
        else:
            standing = STANDING_WORDS.get(p.chosen.standing, "unranked") if p.chosen.standing else "unranked"
            text += f"; {p.policy} {_refused(p)} and picks {_named(p.chosen)}, {standing}"
    if p.unmeasured:
        text += f"; not measured: {names([f'{label(r.scenario)} ({_why_unmeasured(r)})' for r in p.unmeasured], most)}"
    return text


def _refused(p: Pick) -> str:
    """Return what a policy's pick passed over, in words: the leader, what is equivalent to it, and what is not told
    apart from it (unless the pick is one of those)."""
    parts = ["the leader", *(["what is equivalent to it"] if p.equivalent else [])]
    if p.inconclusive and p.chosen not in p.inconclusive:
        parts.append("what is not told apart from it")
    if len(parts) == 1:
        return "does not allow the leader"
    return f"allows neither {', '.join(parts[:-1])} nor {parts[-1]}"


def evidence(p: Pick) -> dict[str, Any]:
    """Return the numbers a pick rests on."""

    def one(r: Row) -> dict[str, Any]:
        """Return one row's median and its verdict against the leader."""
        s = r.summary
        return {
            "row": r.scenario.metric.labels.name(r.scenario),
            "median": s.median if s else None,
            "n": s.n if s else 0,
            "standing": r.standing.value if r.standing else None,
            "against_leader": r.against_leader.to_dict() if r.against_leader else None,
        }

    return {
        "leader": one(p.leader),
        "chosen": one(p.chosen),
        "equivalent": [one(r) for r in p.equivalent],
        "inconclusive": [one(r) for r in p.inconclusive],
        "unmeasured": [
            {"row": r.scenario.metric.labels.name(r.scenario), "why": _why_unmeasured(r)} for r in p.unmeasured
        ],
        "policy": p.policy,
        "margin": p.margin,
        "unit": p.leader.scenario.metric.stored_unit,
    }


def fastest_claims(
    by_group: dict[str, list[Row]], discovery: Discovery | None, policy: Policy, margin: float = MARGIN
) -> list[Claim]:
    """Return the 'fastest here' claims of a run's result groups (download, upload, quickest connection), and what
    a non-post-quantum pick loses."""
    default = discovery.default() if discovery else None
    out = []
    for group, word in GROUP_WORDS.items():
        rows = by_group.get(group, [])
        p = pick(rows, policy, default, margin)
        if p is None:
            if rows:
                why = [f"{r.scenario.metric.labels.name(r.scenario)} ({_why_unmeasured(r)})" for r in rows]
                out.append(
                    Claim(
                        ClaimKind.UNMEASURED,
                        word,
                        f"{word}: nothing ranked, so no fastest: {names(why)}",
                        {"unmeasured": why},
                    )
                )
            continue
        note = rating_note(discovery, "kex", p.leader.scenario.kex)
        text, short = f"{word}: {sentence(p, note)}", f"{word}: {sentence(p, note, BRIEF_NAMES)}"
        out.append(Claim(ClaimKind.FASTEST, word, text, evidence(p), None if short == text else short))
        if p.loses:
            out.append(Claim(ClaimKind.CAVEAT, word, p.loses, {"default_kex": default.kex if default else None}))
    return out


def rating_note(discovery: Discovery | None, kind: str, name: str | None) -> str:
    """Return ' (ssh-audit: fail)' when the algorithm is rated fail or warn, else ''."""
    rating = discovery.rating(kind, name) if discovery and name else None
    return f" (ssh-audit: {rating})" if rating in ("fail", "warn") else ""


def pq_loss(default: Negotiated | None, kex: str | None) -> str | None:
    """Return what choosing `kex` loses against a post-quantum default key exchange, or None."""
    if default is None or not kex or not default.kex or default.kex == kex:
        return None
    if is_post_quantum(default.kex) and not is_post_quantum(kex):
        return PQ_LOSS.format(default=default.kex, pick=kex)
    return None
