"""`sshbench recommend`: the fastest configuration of a stored run, within a policy, as config lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from sshbench import hints
from sshbench.cli.common import open_store, out, rejudged, resolve
from sshbench.cli.decorators import db_option, margin_option
from sshbench.cli.measuring import POLICY_HELP
from sshbench.cli.params import RunRef
from sshbench.errors import ExitCode, SshbenchError

if TYPE_CHECKING:
    from sshbench.analyse.policy import Policy
    from sshbench.records import StoredRun
    from sshbench.storage.store import Store


@click.command("recommend")
@click.argument("run_id", type=RunRef(), required=False, metavar="[RUN]")
@click.option("--policy", "policy_spec", help=POLICY_HELP + " [default: the run's, else modern]")
@click.option("--host", help="Host pattern for the ssh_config block [default: the run's remote target].")
@margin_option(stored=True)
@db_option
def recommend_cmd(
    run_id: int | None, policy_spec: str | None, host: str | None, margin: str | None, db: Path | None, as_json: bool
) -> None:
    """Fastest configuration overall, within a policy, and fastest handshake, as config lines.

    Uses a stored run with throughput (default: the newest). The pick is made among the fastest and the
    rows equivalent to it (--margin); gains against what the client negotiates today are in % with a
    95 % interval paired per round, or "equivalent" / "not told apart" where the data cannot tell.
    Every algorithm the policy excludes is listed with its reason.

    \b
    Policy file example (TOML):
      base = "modern"
      [deny.cipher]
      "aes256-ctr" = "we standardise on AES-128"
      [allow.mac]
      "umac-64-etm@openssh.com" = "accepted on the backup network"
    """
    from sshbench.analyse import policy

    store, run_id = _recommend_source(db, run_id)
    _check_host(host)
    data = rejudged(store.load(run_id), margin, policy_spec)
    run = data.run
    pol = policy.resolve(run.options.policy)
    if run.fleet is not None:
        return _recommend_fleet(store, run_id, pol, as_json)
    _refuse_tune(run.kind, run_id)
    if run.kind.value == "clients":
        return _recommend_clients(data, as_json)
    _recommend_run(data, pol, host, as_json)


def _recommend_run(data: StoredRun, pol: Policy, host: str | None, as_json: bool) -> None:
    """Print (or write as JSON) the recommendation of one measured run: its header, picks and bounds."""
    from sshbench.analyse.claims.caveats import measured_under
    from sshbench.analyse.claims.collect import run_recommendation
    from sshbench.render.console import print_bounds
    from sshbench.render.export import sweep_document
    from sshbench.render.header import print_environment
    from sshbench.render.snippets import host_for
    from sshbench.render.sweep import print_recommendation

    run, run_id = data.run, data.run.id
    if as_json:
        click.echo(json.dumps(sweep_document(data), indent=2))
        return
    rec = run_recommendation(run, data.scenarios, pol)
    if rec.overall is None:
        raise SshbenchError(
            f"run {run_id} has no measured throughput or latency to recommend from",
            place=f"run {run_id}",
            fix=f"choose a run listed by `{hints.sshbench('history')}` with throughput results",
            code=ExitCode.USAGE,
        )
    print_environment(out(), run)
    print_recommendation(out(), rec, host or host_for(run), run.source, measured_under(run.environment))
    print_bounds(out(), run, data.scenarios)


def _recommend_clients(data: StoredRun, as_json: bool) -> None:
    """Name the library to use per job from a `clients` run, with the code each pick stands for."""
    from sshbench.analyse.claims.clients import languages_of, picks
    from sshbench.analyse.results import ranked
    from sshbench.render.clients import code_lines, print_picks
    from sshbench.render.header import print_environment

    run = data.run
    groups = ranked(data.scenarios, run.options.plan.ci_target, run.options.margin)
    languages = languages_of(run.environment.clients)
    chosen = {lang: picks(groups, libs, run.options.margin) for lang, libs in languages.items()}
    if as_json:
        docs = [
            {"language": lang, "claim": p.claim().to_dict(), "code": code_lines(p.row.scenario, p.group)}
            for lang, ps in chosen.items()
            for p in ps
        ]
        click.echo(json.dumps({"run": run.id, "picks": docs}, indent=2))
        return
    print_environment(out(), run)
    for lang, ps in chosen.items() or {"Python": []}.items():
        print_picks(out(), run, ps, lang)


def _recommend_source(db: Path | None, run_id: int | None) -> tuple[Store, int]:
    """Open the database and find the run to recommend from: the one given, else the newest with throughput."""
    from sshbench.storage.store import default_db_path

    if not (db or default_db_path()).exists():
        raise _no_throughput(db or default_db_path())
    store = open_store(db, read_only=True)
    return store, resolve(store, run_id) if run_id is not None else _latest_with_throughput(store)


def _refuse_tune(kind: object, run_id: int) -> None:
    """Refuse a `tune` run: its gains are each remedy against the default copy, which `show` prints with the lines
    to paste (a recommendation here would compare them with a default it cannot name)."""
    from sshbench.runkinds import RunKind

    if kind is RunKind.TUNE:
        raise SshbenchError(
            f"run {run_id} is a tune run: each remedy was measured against your default copy, not as a recommendation",
            place=f"run {run_id}",
            fix=f"read its findings and the lines to paste with `{hints.sshbench('show', str(run_id))}`",
            code=ExitCode.USAGE,
        )


def _check_host(host: str | None) -> None:
    """Refuse a --host that is not a safe Host pattern."""
    from sshbench.render.snippets import valid_host

    if host is not None and not valid_host(host):
        raise SshbenchError(
            f"{host!r} is not a valid Host pattern", place="--host", fix="use a host name or alias", code=ExitCode.USAGE
        )


def _recommend_fleet(store: Store, run_id: int, pol: Policy, as_json: bool) -> None:
    """Print a fleet's configuration for all its hosts under a policy."""
    from sshbench.analyse import fleet
    from sshbench.render.fleet import print_choice

    stored = store.load(run_id)
    if as_json:
        click.echo(json.dumps(fleet.to_document(stored, pol), indent=2))
        return
    rows = fleet.host_rows(stored, pol)
    choice = fleet.recommend(rows, pol)
    if choice is None:
        raise SshbenchError(
            f"fleet run {run_id} reached no host",
            place=f"run {run_id}",
            fix="measure the fleet again once its hosts answer",
            code=ExitCode.USAGE,
        )
    print_choice(out(), choice, rows)


def _latest_with_throughput(store: Store) -> int:
    """Return the newest run whose throughput results can back a recommendation, or fail."""
    from sshbench.model import Kind
    from sshbench.runkinds import RunKind

    run_id = store.latest_run([k for k in RunKind if k.recommends], Kind.THROUGHPUT)
    if run_id is None:
        others = store.latest_run([k for k in RunKind if not k.recommends], Kind.THROUGHPUT)
        raise _no_throughput(store.path, others)
    return run_id


def _no_throughput(path: Path, others: int | None = None) -> SshbenchError:
    """Return the error for a database without a run to recommend from (`others`: the newest run with throughput
    results of a kind that cannot back one, named so)."""
    from sshbench.runkinds import RunKind

    kinds = ", ".join(k.value for k in RunKind if k.recommends and k is not RunKind.ALGOS)
    if others is None:
        cause = "no stored run has throughput results"
    else:
        cause = (
            f"no stored run of {kinds} has throughput results (run {others} has, but a run of servers, tools, tune "
            "or clients compares what is not one host's choice of algorithms)"
        )
    return SshbenchError(
        cause,
        place=str(path),
        fix=f"run `{hints.sshbench('sweep')}` (or `{hints.sshbench()}`) first",
        code=ExitCode.USAGE,
    )
