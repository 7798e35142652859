"""A `tools` run's efficiency tables: each copy tool as a share of the plaintext copies and of the crypto alone, and
the baselines that failed (claims/baselines.py)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console

from sshbench import hints
from sshbench.analyse.claims.baselines import Efficiency, baseline_claims, efficiency
from sshbench.analyse.results import ranked
from sshbench.records import RunRecord, StoredScenario
from sshbench.render import screen
from sshbench.render.console import print_claims, print_table
from sshbench.render.layout import Column, build, fit, hidden_note
from sshbench.units import format_value, symbol

_NO_BASELINE = (
    "no plaintext baseline: this run's server is a remote host, and sshbench starts no listeners on hosts it "
    "does not own (`{}` measures an embedded server with them)"
)
SHARES = (("of plain TCP", "tcp"), ("of rsync daemon", "rsyncd"), ("of crypto ceiling", "crypto"))


def _share(e: Efficiency, name: str) -> str:
    """Format one share as a percentage: `failed` where that baseline lies below the copy, '-' where unknown."""
    if name in e.failed:
        return "failed"
    value = {"tcp": e.of_tcp, "rsyncd": e.of_rsyncd, "crypto": e.of_crypto}[name]
    return format_value("share", value)


def _rate(e: Efficiency) -> str:
    """Return a copy's median rate ('-' when it has none)."""
    return format_value("MB/s", e.row.summary.median if e.row.summary else None)


def efficiency_columns(items: Sequence[Efficiency]) -> list[Column]:
    """Return the efficiency table's columns (a share no row has is left out)."""
    shares = [(title, tuple(_share(e, name) for e in items)) for title, name in SHARES]
    return [
        Column("tool", tuple(e.row.scenario.tool or "" for e in items)),
        Column("cipher [+ MAC]", tuple(e.row.scenario.algorithms or "" for e in items), fold=True),
        Column(symbol("MB/s"), tuple(_rate(e) for e in items), right=True),
        *(Column(title, cells, right=True) for title, cells in shares if any(c != "-" for c in cells)),
    ]


def print_efficiency(console: Console, run: RunRecord, stored: Sequence[StoredScenario]) -> None:
    """Print, per direction, each SSH tool's rate as a share of the plaintext baselines and of the crypto ceiling,
    and every baseline that failed (below the SSH copies it caps, or not run)."""
    groups = ranked(stored, run.options.plan.ci_target, run.options.margin)
    for group, way in (("tool download", "download"), ("tool upload", "upload")):
        rows = groups.get(group, [])
        items = efficiency(rows, run.environment.crypto_ceilings)
        if items:
            columns = efficiency_columns(items)
            shown, shed = fit(columns, console.width)
            plain = "the same copy without SSH (plain TCP for every tool, the rsync daemon for rsync) and of the crypto"
            title = f"Efficiency, {way}: each tool's median as a share of " + (
                "the crypto ceiling" if run.environment.embedded is None else plain
            )
            print_table(console, title, build(shown), hidden_note(shed, columns))
            print_claims(console, "", baseline_claims(way, rows, items))
    if run.environment.embedded is None and (groups.get("tool download") or groups.get("tool upload")):
        screen.say(console, f"  {_NO_BASELINE.format(hints.sshbench('tools'))}")
    versions = run.environment.tool_versions
    if versions:
        screen.say(console, "  tools: " + "; ".join(f"{k}: {v}" for k, v in versions.items()))
