"""A burst run (`load --burst N`, kind `bursts`) as a row per setting, its drops by cause, the settings compared
with the sshd_config lines to paste, and its part of the JSON document (analyse/load.py reads the bursts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from sshbench.analyse.load import FROM_LOG, Bursts, bursts
from sshbench.exact import fisher
from sshbench.joboptions import LoadOptions
from sshbench.loadwords import DIED, before_banner
from sshbench.records import StoredRun
from sshbench.render import screen
from sshbench.render.header import print_page, print_unfinished
from sshbench.render.layout import Column, ms_cell, print_fitted
from sshbench.render.load import GENERATORS, closers, job_words, loading


def settings(stored: StoredRun) -> list[Bursts]:
    """Return a burst run's settings read back (the server as started first)."""
    return sorted((bursts(st) for st in stored.scenarios), key=lambda b: b.setting is not None)


def _pct(p: float) -> str:
    """Return a proportion as a percentage with one decimal."""
    return f"{p * 100:.1f} %"


def _burst_columns(rows: list[Bursts]) -> list[Column]:
    """Return the burst table's columns."""
    return [
        Column("setting", tuple(b.label for b in rows), fold=True),
        Column("bursts", tuple(str(b.bursts) for b in rows), right=True),
        Column("connections", tuple(str(b.logins) for b in rows), right=True),
        Column("dropped", tuple(f"[red]{b.dropped}[/red]" if b.dropped else "0" for b in rows), right=True),
        Column(
            "dropped, 95 % exact",
            tuple(f"{_pct(b.dropped / b.logins)} ({_pct(b.interval[0])}-{_pct(b.interval[1])})" for b in rows),
            right=True,
        ),
        Column("all served after ms", tuple(ms_cell(b.served) for b in rows), right=True, shed=1),
        *(Column(f"p{p:g} ms", tuple(ms_cell(b.at(p)) for b in rows), right=True, shed=0) for p in (50.0, 99.0)),
    ]


def compared(base: Bursts, other: Bursts) -> str:
    """Return the two settings' drops compared (Fisher's exact test), with the line to paste where the setting
    dropped significantly fewer."""
    p = fisher(other.dropped, other.logins, base.dropped, base.logins)
    effect = (
        f"{other.dropped} of {other.logins} connections dropped ({_pct(other.dropped / other.logins)}) "
        f"{other.label}, {base.dropped} of {base.logins} as started"
    )
    lines = "\n".join(f"    {o.replace('=', ' ', 1)}" for o in other.setting or ())
    if p >= 0.05:
        verdict = f"not told apart (Fisher's exact p = {p:.2g}): burst more (--repeats) before changing anything"
    elif other.dropped / other.logins < base.dropped / base.logins:
        verdict = f"fewer dropped (Fisher's exact p = {p:.2g}): worth a change"
    else:
        verdict = f"more dropped (Fisher's exact p = {p:.2g}): not worth a change; keep the setting as started"
    if not verdict.startswith("fewer"):
        return f"  {effect}: {verdict}"  # no line to paste for a setting that did not drop fewer
    return f"  {effect}: {verdict}\n  sshd_config (measured here: fewer dropped):\n{lines}"


def print_bursts(console: Console, stored: StoredRun) -> None:
    """Print a burst run: a row per setting, the drops by cause, and the settings compared."""
    own = stored.run.options.own_as(LoadOptions)
    rows = [b for b in settings(stored) if b.logins]
    generator = GENERATORS.get(own.generator, own.generator)
    title = (
        f"Bursts: {own.burst} connections started at one instant, {own.repeats} times per setting (each once the "
        f"server was idle; settings interleaved), {generator} from {own.sources} loopback source addresses; "
        f"{job_words(own)}; latency from the instant"
    )
    print_fitted(console, title, _burst_columns(rows))
    for b in rows:
        for words, n in b.causes[:3]:
            screen.say(console, f"  ! {b.label}: {n} x {words}")
        if any(before_banner(w) and not w.endswith(FROM_LOG) for w, _ in b.causes):
            screen.say(
                console,
                f"  {b.label}: closed before the banner, seen from the client only; what can do this here: "
                f"{closers(stored)}",
            )
    for st in stored.scenarios:
        if st.failure:
            screen.say(console, f"  ! {st.failure.removeprefix(DIED)}")
    if len(rows) == 2:
        screen.say(console, compared(rows[0], rows[1]))
    screen.say(
        console,
        "  The interval is over connections, exact (Clopper-Pearson): 0 dropped of N is a result. A burst's "
        "connections are not independent of one another: more bursts, not bigger ones, narrow it honestly.",
        style="dim",
    )


def print_bursts_run(console: Console, stored: StoredRun, db: Path, discovery_only: bool = False) -> None:
    """Print a burst run: its header, the settings, then where it is stored."""
    print_page(console, stored, db, print_bursts, lambda c, s: print_unfinished(c, s.run))


def bursts_document(stored: StoredRun) -> dict[str, Any]:
    """Return a burst run's part of the JSON document."""
    own = stored.run.options.own_as(LoadOptions)
    rows = settings(stored)
    return {
        **loading(own),
        "burst": own.burst,
        "repeats": own.repeats,
        "settings": [
            {
                "server_options": None if b.setting is None else list(b.setting),
                "bursts": b.bursts,
                "connections": b.logins,
                "dropped": b.dropped,
                "dropped_interval": list(b.interval),
                "all_served_after": b.served,
                "percentiles": {f"p{p:g}": v for p, v in b.percentiles},
                "causes": [{"message": m, "count": n} for m, n in b.causes],
            }
            for b in rows
        ],
        "fisher_p": fisher(rows[1].dropped, rows[1].logins, rows[0].dropped, rows[0].logins)
        if len(rows) == 2
        else None,
    }
