"""One stored run on the terminal, laid out by the printer its kind's row names (runkinds.ROWS): a single target, a
sweep, file copies, a tune run, clients, or servers side by side (a fleet's is render/fleet.py's)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from sshbench import hints
from sshbench.records import StoredRun
from sshbench.render.clients import print_clients
from sshbench.render.console import print_results
from sshbench.render.discovery import print_discovery, print_negotiation
from sshbench.render.header import print_page
from sshbench.render.servers import print_servers
from sshbench.render.sweep import print_sweep
from sshbench.render.tools import print_efficiency
from sshbench.render.tune import print_tune
from sshbench.runkinds import entry


def print_run(console: Console, stored: StoredRun, db: Path, discovery_only: bool = False) -> None:
    """Print a stored run as its kind lays it out (`discovery_only`: what the server offers, for `algos`)."""
    entry(stored.run.kind.row.printer)(console, stored, db, discovery_only)


def _negotiation(console: Console, stored: StoredRun) -> None:
    """Print what the client profiles negotiated, when the run has a discovery."""
    if stored.run.discovery:
        print_negotiation(console, stored.run.discovery)


def _results(console: Console, stored: StoredRun) -> None:
    """Print the run's result groups and the claims under them."""
    print_results(console, stored.run, stored.scenarios)


def print_single(console: Console, stored: StoredRun, db: Path, discovery_only: bool = False) -> None:
    """Print a run against one target: what was negotiated (or, for discovery alone, offered), then its results."""
    discovery = stored.run.discovery
    if discovery_only and discovery:
        print_page(console, stored, db, lambda c, s: print_discovery(c, discovery), _results)
    else:
        print_page(console, stored, db, _negotiation, _results)


def print_sweep_run(console: Console, stored: StoredRun, db: Path, discovery_only: bool = False) -> None:
    """Print a sweep: what was negotiated, then its per-dimension tables and recommendation."""
    print_page(console, stored, db, _negotiation, lambda c, s: print_sweep(c, s.run, s.scenarios))


def print_tools_run(console: Console, stored: StoredRun, db: Path, discovery_only: bool = False) -> None:
    """Print a `tools` run: its results, then each copy's efficiency against the baselines."""
    print_page(console, stored, db, _negotiation, _results, lambda c, s: print_efficiency(c, s.run, s.scenarios))


def print_tune_run(console: Console, stored: StoredRun, db: Path, discovery_only: bool = False) -> None:
    """Print a `tune` run: its results, then what bounds the default and what each remedy gained."""
    print_page(console, stored, db, _negotiation, _results, lambda c, s: print_tune(c, s.run, s.scenarios))


def print_clients_run(console: Console, stored: StoredRun, db: Path, discovery_only: bool = False) -> None:
    """Print a `clients` run: the clients found, their results, and how to get the picks as code."""

    def hint(c: Console, s: StoredRun) -> None:
        from sshbench.analyse.claims.clients import setting_effects
        from sshbench.analyse.results import ranked
        from sshbench.render.clients import print_effects

        opts = s.run.options
        print_effects(c, s.run, setting_effects(ranked(s.scenarios, opts.plan.ci_target, opts.margin), opts.margin))
        c.print(
            f"  `{hints.sshbench('recommend', str(s.run.id))}` names the fastest library per job and language, as code",
            highlight=False,
            markup=False,
        )

    print_page(console, stored, db, lambda c, s: print_clients(c, s.run), _results, hint)


def print_side_by_side(console: Console, stored: StoredRun, db: Path, discovery_only: bool = False) -> None:
    """Print servers side by side."""
    print_page(console, stored, db, lambda c, s: print_servers(c, s.run, s.scenarios, s.memory))
