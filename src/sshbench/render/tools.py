"""A `tools` run's efficiency tables: each copy tool as a share of the plaintext copies and of the crypto alone."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console

from sshbench.analyse.efficiency import Efficiency, efficiency
from sshbench.analyse.results import ranked
from sshbench.records import RunRecord, StoredScenario
from sshbench.render.console import hidden_note, print_table
from sshbench.render.layout import Column, build, fit

_BOTH_SHARES = "the same copy without SSH and of the crypto"
_NO_BASELINE = (
    "no plaintext baseline: this run's server is a remote host, and sshbench starts no listeners on hosts it "
    "does not own (run `sshbench tools` for an embedded server with them)"
)


def _share(value: float | None) -> str:
    """Format a share as a percentage ('-' when unknown)."""
    return "-" if value is None else f"{value:.0%}"


def efficiency_columns(items: Sequence[Efficiency]) -> list[Column]:
    """Return the efficiency table's columns (a share no row has is left out)."""
    shares = [
        ("of plain TCP", [e.of_tcp for e in items]),
        ("of rsync daemon", [e.of_rsyncd for e in items]),
        ("of crypto ceiling", [e.of_crypto for e in items]),
    ]
    return [
        Column("tool", tuple(e.row.scenario.tool or "" for e in items)),
        Column("cipher [+ MAC]", tuple(e.row.scenario.algorithms or "" for e in items), fold=True),
        Column("MB/s", tuple(f"{e.row.summary.median:.0f}" if e.row.summary else "-" for e in items), right=True),
        *(Column(name, tuple(_share(v) for v in values), right=True) for name, values in shares if any(values)),
    ]


def print_efficiency(console: Console, run: RunRecord, stored: Sequence[StoredScenario]) -> None:
    """Print, per direction, each SSH tool's rate as a share of the plaintext baselines and of the crypto ceiling."""
    groups = ranked(stored, run.options.plan.ci_target)
    for group, way in (("tool download", "download"), ("tool upload", "upload")):
        items = efficiency(groups.get(group, []), run.environment.crypto_ceilings)
        if items:
            columns = efficiency_columns(items)
            shown, shed = fit(columns, console.width)
            title = f"Efficiency, {way}: each tool's median as a share of " + (
                "the crypto ceiling"
                if run.environment.embedded is None
                else "the same copy without SSH and of the crypto"
            )
            print_table(console, title, build(shown), hidden_note(shed, columns))
    if run.environment.embedded is None and (groups.get("tool download") or groups.get("tool upload")):
        console.print(f"  {_NO_BASELINE}", highlight=False, markup=False)
    versions = run.environment.tool_versions
    if versions:
        console.print("  tools: " + "; ".join(f"{k}: {v}" for k, v in versions.items()), highlight=False, markup=False)
