"""One stored run on the terminal, laid out by its kind: a single target, a sweep, or servers side by side."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from sshbench import hints
from sshbench.model import RunKind
from sshbench.records import StoredRun
from sshbench.render.clients import print_clients
from sshbench.render.console import print_environment, print_results
from sshbench.render.discovery import print_discovery, print_negotiation
from sshbench.render.fleet import print_fleet
from sshbench.render.servers import print_servers
from sshbench.render.sweep import print_sweep
from sshbench.render.tools import print_efficiency
from sshbench.render.tune import print_tune


def print_run(console: Console, stored: StoredRun, db: Path, discovery_only: bool = False) -> None:
    """Print a stored run: its environment, then discovery (or negotiation) and results, then where it is stored."""
    run = stored.run
    if run.fleet is not None:
        return print_fleet(console, stored, db)
    print_environment(console, run)
    if run.kind is RunKind.CLIENTS:
        print_clients(console, run)
        print_results(console, run, stored.scenarios)
        console.print(f"  `{hints.sshbench('recommend', str(run.id))}` names the fastest library per job and "
                      "language, as code", highlight=False, markup=False)  # fmt: skip
    elif run.kind.side_by_side:
        print_servers(console, run, stored.scenarios, stored.memory)
    elif discovery_only and run.discovery:
        print_discovery(console, run.discovery)
        print_results(console, run, stored.scenarios)
    else:
        if run.discovery:
            print_negotiation(console, run.discovery)
        if run.kind.sweep:
            print_sweep(console, run, stored.scenarios)
        else:
            print_results(console, run, stored.scenarios)
        if run.kind is RunKind.TOOLS:
            print_efficiency(console, run, stored.scenarios)
        if run.kind is RunKind.TUNE:
            print_tune(console, run, stored.scenarios)
    console.print(f"Stored as run {run.id} in {db}", highlight=False, style="dim")
