"""Which library to use from a program, per job, in a `clients` run (pure): the fastest library row of each result
group, against its own default settings (when the pick is tuned), the next library and OpenSSH's best row of the
group, each paired per round.

A pick is a row that was ranked (at least `stats.MIN_RANKED` samples); "fastest" here is the best median among the
libraries, and the gains say whether the data tells it apart from the others (equivalent, not told apart, or a
change with its interval). Which clients are libraries comes from the run's environment (`clients`: `kind`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sshbench.analyse.claims.core import Claim, ClaimKind
from sshbench.analyse.claims.gains import Gain, gain
from sshbench.analyse.results import Row, ratio_of
from sshbench.model import OPENSSH_CLIENT
from sshbench.ratios import MIN_PAIRS, Verdict, Word, judge
from sshbench.units import format_value

JOBS = {  # result group -> the job it stands for, in words
    "latency": "a whole run of a script or program (its process starts, connects, runs one command)",
    "latency in-process": "a new connection from a running program",
    "download": "reading a command's output (exec channel, server -> client)",
    "upload": "feeding a command's input (exec channel, client -> server)",
    "tool download": "SFTP get (server -> client)",
    "tool upload": "SFTP put (client -> server)",
}


@dataclass(frozen=True)
class Pick:
    """The library to use for one job: its row, and its gains over the next library and over OpenSSH."""

    group: str
    row: Row
    against: tuple[tuple[str, Gain], ...]  # (`next library` or `OpenSSH`, the pick's gain over that row)

    def claim(self) -> Claim:
        """Return the sentence: job, pick and value, then each gain."""
        sc, s = self.row.scenario, self.row.summary
        assert s is not None
        unit = sc.metric.unit
        value = f"{format_value(unit, s.median)} {unit}"
        text = f"{JOBS[self.group]}: {sc.metric.labels.name(sc)}, {value}"
        text += "".join(f"; {g.text(role)}" for role, g in self.against)
        return Claim(
            ClaimKind.FASTEST,
            self.group,
            text,
            {
                "row": sc.metric.labels.name(sc),
                "median": s.median,
                "unit": unit,
                "against": {role: g.to_dict() for role, g in self.against},
            },
        )


def _rounds(row: Row) -> dict[int, float]:
    """Return a row's values by round."""
    return dict(row.rounds)


def _best(rows: Sequence[Row]) -> Row | None:
    """Return the row with the best median among ranked rows (None when none is ranked)."""
    ranked = [r for r in rows if r.summary is not None and r.summary.rankable]
    if not ranked:
        return None
    better = ranked[0].scenario.metric.higher_is_better
    return sorted(ranked, key=lambda r: r.summary.median if r.summary else 0.0, reverse=better)[0]


def picks(groups: Mapping[str, Sequence[Row]], libraries: Sequence[str], margin: float) -> list[Pick]:
    """Return the library to use for each job the run measured (none where no library row was ranked)."""
    out = []
    for group, rows in groups.items():
        if group not in JOBS:
            continue
        libs = [r for r in rows if r.scenario.client in libraries]
        best = _best(libs)
        if best is None:
            continue
        better = best.scenario.metric.higher_is_better
        own = [r for r in libs if r.scenario.client == best.scenario.client and r.scenario.mode is None]
        others = [
            _best(own) if best.scenario.mode == "tuned" else None,
            _best([r for r in libs if r.scenario.client != best.scenario.client]),
            _best([r for r in rows if (r.scenario.client or OPENSSH_CLIENT) == OPENSSH_CLIENT]),
        ]
        roles = ("its default settings", "next library", "OpenSSH")
        against = tuple(
            (role, gain(_rounds(best), _rounds(o), o.scenario.metric.labels.name(o.scenario), better, margin))
            for role, o in zip(roles, others, strict=True)
            if o is not None
        )
        out.append(Pick(group, best, against))
    return out


SETTING_JOBS = {  # result group -> the job a setting's effect is named by
    "latency": "a whole run",
    "latency in-process": "a new connection",
    "download": "download",
    "upload": "upload",
    "tool download": "SFTP get",
    "tool upload": "SFTP put",
}


@dataclass(frozen=True)
class Effect:
    """What a client's second setting did to one job against its default setting, paired per round."""

    client: str
    group: str
    verdict: Verdict | None  # None: too few rounds in common
    cipher: str | None = None  # the row's pinned cipher (None: the client's own choice)
    server: str | None = None  # the server it ran against, where the run had several

    @property
    def hurts(self) -> bool:
        """Return True when the setting made the job significantly slower."""
        return self.verdict is not None and self.verdict.word is Word.SLOWER


def setting_effects(groups: Mapping[str, Sequence[Row]], margin: float) -> list[Effect]:
    """Return, per client and job, its second setting's row against its default row of the same job (same cipher,
    server and direction), paired per round: a setting that hurts is shown as such, never called tuned."""
    out = []
    for group, rows in groups.items():
        for row in rows:
            sc = row.scenario
            if sc.client is None or sc.mode != "tuned" or row.summary is None:
                continue
            default = next(
                (
                    r
                    for r in rows
                    if r.summary is not None
                    and r.scenario.client == sc.client
                    and r.scenario.mode is None
                    and r.scenario.cipher == sc.cipher
                    and r.scenario.server == sc.server
                ),
                None,
            )
            ratio = ratio_of(row, default) if default is not None else None
            ok = ratio is not None and ratio.paired and ratio.n >= MIN_PAIRS
            verdict = judge(ratio, sc.metric.higher_is_better, margin) if ratio is not None and ok else None
            out.append(Effect(sc.client, group, verdict, sc.cipher, sc.server))
    return out


def libraries_of(clients: Mapping[str, Mapping[str, str]], language: str | None = None) -> list[str]:
    """Return the clients a run's environment names as libraries (the first runs said so only by a start time), of
    one language when one is given (runs before Go's driver name none: Python)."""
    return [
        name
        for name, about in clients.items()
        if about.get("kind", "library" if "start_s" in about else "") == "library"
        and language in (None, about.get("language", "Python"))
    ]


def languages_of(clients: Mapping[str, Mapping[str, str]]) -> dict[str, list[str]]:
    """Return each language's libraries in a run's environment (a library is picked against its own language's)."""
    out: dict[str, list[str]] = {}
    for name in libraries_of(clients):
        out.setdefault(clients[name].get("language", "Python"), []).append(name)
    return out
