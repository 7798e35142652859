"""Who is fastest, without overclaiming: one winner only when it is significantly ahead of every other row;
otherwise the statistically tied group, and a pick within it by the security policy.

Within a tie, the pick is the row the policy allows, then the one the client already negotiates (keeping
it costs nothing), then the quickest median. Rows with fewer than `stats.MIN_RANKED` samples are never
ranked, so they never win. When the client's default key exchange is post-quantum and the pick is not,
the pick says what is lost.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from sshbench.analyse.policy import Policy, is_post_quantum
from sshbench.analyse.results import Row
from sshbench.model import Kind
from sshbench.records import Negotiated
from sshbench.stats import MIN_RANKED

if TYPE_CHECKING:
    from sshbench.analyse.sweep import Estimate

T = TypeVar("T")

PQ_LOSS = (
    "your default key exchange {default} is post-quantum and {pick} is not: sessions recorded today could be "
    "decrypted by a future quantum computer"
)


@dataclass(frozen=True)
class Pick:
    """The fastest row of a result group, or the pick within the group statistically tied for fastest."""

    chosen: Row
    tied: tuple[Row, ...]  # every row tied for first (just `chosen` when it wins outright)
    policy: str  # the policy that picked within the tie
    loses: str | None = None  # what the pick gives up against the client's default (post-quantum)

    @property
    def outright(self) -> bool:
        """Return True when the chosen row is significantly ahead of every other ranked row."""
        return len(self.tied) == 1


def _fields(row: Row) -> list[tuple[str, str]]:
    """Return the (kind, algorithm) pairs a row is named by."""
    sc = row.scenario
    names = [("kex", sc.kex), ("hostkey", sc.hostkey)] if sc.kind is Kind.LATENCY else [
        ("cipher", sc.cipher), ("mac", sc.mac)]  # fmt: skip
    return [(k, a) for k, a in names if a is not None]


def _is_default(row: Row, default: Negotiated | None) -> bool:
    """Return True when the row measures what the client negotiates with no options."""
    if default is None:
        return False
    return all(getattr(default, kind) == name for kind, name in _fields(row))


def pick(rows: Sequence[Row], policy: Policy, default: Negotiated | None) -> Pick | None:
    """Return the winner of ranked rows, or the policy's pick within the group tied for first (None: no ranks)."""
    tied = tuple(r for r in rows if r.summary is not None and r.rank == 1)
    if not tied:
        return None

    def preference(r: Row) -> tuple[bool, bool, float]:
        """Sort key: allowed by the policy, the client's default, then the better median."""
        assert r.summary is not None
        allowed = all(policy.check(kind, name).allowed for kind, name in _fields(r))
        better = -r.summary.median if r.scenario.metric.higher_is_better else r.summary.median
        return (not allowed, not _is_default(r, default), better)

    chosen = min(tied, key=preference)
    if preference(chosen)[0]:  # the policy allows none of the tied rows: its pick is the best row it allows
        ranked = [r for r in rows if r.summary is not None and r.rank > 0]
        chosen = min(ranked, key=lambda r: (preference(r)[0], r.rank, preference(r)[1:]))
    return Pick(chosen, tied, policy.name, pq_loss(default, chosen.scenario.kex))


def tie_first(
    items: Sequence[T], interval: Callable[[T], Estimate], preference: Callable[[T], tuple[Any, ...]]
) -> tuple[list[T], tuple[T, ...]]:
    """Put the pick within the group tied with the best item first (items come best first).

    Only items with at least MIN_RANKED samples can win; the tie is every such item whose interval
    overlaps the best one's. Return the reordered items and the tie (empty when none can win).
    """
    ranked = [i for i in items if interval(i).n >= MIN_RANKED]
    if not ranked:
        return list(items), ()
    best = interval(ranked[0])
    tied = tuple(i for i in ranked if interval(i).low <= best.high and best.low <= interval(i).high)
    chosen = min(tied, key=preference)
    return [chosen, *(i for i in items if i is not chosen)], tied


def pq_loss(default: Negotiated | None, kex: str | None) -> str | None:
    """Return what choosing `kex` loses against a post-quantum default key exchange, or None."""
    if default is None or not kex or not default.kex or default.kex == kex:
        return None
    if is_post_quantum(default.kex) and not is_post_quantum(kex):
        return PQ_LOSS.format(default=default.kex, pick=kex)
    return None
