"""The commands that read stored runs: history, show, export, report, compare, recommend."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click
from click.core import ParameterSource

from sshbench.cli.common import db_only, db_option, err, json_option, open_store, out, resolve, show, write_files
from sshbench.cli.completion import LAST, RunRef
from sshbench.cli.measuring import POLICY_HELP
from sshbench.cli.options import parse_fail_if
from sshbench.errors import ExitCode, SshbenchError
from sshbench.render.formats import FORMATS

if TYPE_CHECKING:
    from sshbench.analyse.policy import Policy
    from sshbench.store import Store


@click.command("history")
@db_option
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 10000))
@click.option("--hosts", "with_hosts", is_flag=True, help="Also list the runs of each fleet's hosts.")
def history_cmd(db: Path | None, as_json: bool, limit: int, with_hosts: bool) -> None:
    """List stored runs, newest first (a fleet is one run; --hosts lists its hosts' runs too)."""
    from sshbench.store import default_db_path

    exists = (db or default_db_path()).exists()
    runs = open_store(db, read_only=True).runs(limit, hosts=with_hosts) if exists else []
    if as_json:
        from sshbench.render.export import history_document

        click.echo(json.dumps(history_document(runs), indent=2))
    elif not runs:
        out().print("No runs stored yet: run `sshbench` to make one.")
    else:
        from sshbench.render.console import print_history

        print_history(out(), runs)


@click.command("show")
@click.argument("run_id", type=RunRef(), default="last", metavar="[RUN]")
@db_option
def show_cmd(run_id: int, db: Path | None, as_json: bool) -> None:
    """Show a stored run (complete or partial) as tables or JSON. RUN: an id, or `last` (the default)."""
    from sshbench.model import RunKind

    store = open_store(db, read_only=True)
    run_id = resolve(store, run_id)
    show(store, run_id, as_json, discovery_only=store.run(run_id).kind is RunKind.ALGOS)


@click.command("export")
@click.argument("run_id", type=RunRef(), default="last", metavar="[RUN]")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(list(FORMATS)),
    default="csv",
    show_default=True,
    help="; ".join(f"{f.name}: {f.help}" for f in FORMATS.values()) + ".",
)
@click.option(
    "-o", "--output", type=click.Path(path_type=Path), help="File (directory for shell-csv) [default: stdout]."
)
@db_only
@json_option
def export_cmd(run_id: int, fmt: str, output: Path | None, db: Path | None, as_json: bool) -> None:
    """Export a run: every sample (CSV/JSON), hyperfine's JSON, or the shell-script layout (shell-csv).

    RUN: an id, or `last` (the default). --json is --format json.
    """
    if as_json:
        if click.get_current_context().get_parameter_source("fmt") is ParameterSource.COMMANDLINE and fmt != "json":
            raise SshbenchError(
                f"--json and --format {fmt} ask for two formats", place="--json", fix="give one", code=ExitCode.USAGE
            )
        fmt = "json"
    export = FORMATS[fmt]
    if export.directory and output is None:
        raise SshbenchError(
            f"{fmt} writes several files", place=f"--format {fmt}", fix="give a directory: -o DIR", code=ExitCode.USAGE
        )
    store = open_store(db, read_only=True)
    files = export.write(store.load(resolve(store, run_id)))
    if output is None:
        click.echo(files[""], nl=False)
        return
    write_files(output, files)
    err().print(f"wrote {', '.join(sorted(files))} in {output}" if export.directory else f"wrote {output}")


@click.command("report")
@click.argument("run_ids", nargs=-1, type=RunRef(), metavar="[RUN]...")
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    help="HTML file [default: sshbench-report.html]; for png/svg a directory [default: sshbench-charts].",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["html", "png", "svg"]),
    default="html",
    show_default=True,
    help="html: one self-contained interactive file (offline, light/dark, printable); png/svg: one file per chart.",
)
@db_only
@json_option
def report_cmd(run_ids: tuple[int, ...], output: Path | None, fmt: str, db: Path | None, as_json: bool) -> None:
    """Charts of stored runs: an offline HTML report, or PNG/SVG files.

    \b
    Throughput per cipher (x MAC) both ways with CI error bars, connection time per kex and host
    key with its phases stacked, per-server comparisons (latency, throughput, CPU/GiB, memory), a
    sweep's per-dimension aggregates, the recommendation with its config snippets, and the
    environment. Two runs also get a comparison. RUN: ids, or `last` (the default).
    --json prints what was written (files, sizes, runs) as JSON on stdout.

    \b
    Examples:
      sshbench report -o report.html
      sshbench report 3 7 -o before-after.html
      sshbench report 3 --format svg -o charts/
    """
    from sshbench.render import report  # altair and vl-convert load only when a report is asked for

    store = open_store(db, read_only=True)
    ids = [resolve(store, i) for i in (run_ids or (LAST,))]
    runs = [store.load(i) for i in ids]
    try:
        if fmt == "html":
            path = output or Path("sshbench-report.html")
            path.write_text(report.render_html(runs), encoding="utf-8")
            paths = [path]
            err().print(f"wrote {path} ({path.stat().st_size // 1024} KiB, self-contained: open it from disk)")
        else:
            outdir = output or Path("sshbench-charts")
            paths = report.write_images(report.all_figures(runs), outdir, fmt)
            err().print(f"wrote {len(paths)} {fmt.upper()} file(s) in {outdir}: {', '.join(p.name for p in paths)}")
    except OSError as exc:
        raise SshbenchError(
            f"cannot write the report: {exc.strerror or exc}",
            place=str(output or "."),
            fix="choose a writable path with -o",
            code=ExitCode.STORAGE,
        ) from None
    if as_json:
        files = [{"path": str(p), "bytes": p.stat().st_size} for p in paths]
        click.echo(json.dumps({"runs": ids, "format": fmt, "files": files}, indent=2))


@click.command("compare")
@click.argument("run_a", type=RunRef(), metavar="RUN_A")
@click.argument("run_b", type=RunRef(), default="last", metavar="[RUN_B]")
@click.option(
    "--fail-if",
    "fail_if",
    metavar="slower:PCT",
    help="Exit with status 10 when any scenario of RUN_B is significantly slower than in RUN_A by more "
    "than PCT (e.g. slower:5%). For CI pipelines.",
)
@db_option
def compare_cmd(run_a: int, run_b: int, fail_if: str | None, db: Path | None, as_json: bool) -> None:
    """Per scenario, the change from RUN_A to RUN_B (default: `last`) in %, with significance.

    Overlapping 95% confidence intervals of the medians mean "no change"; no verdict (and no
    --fail-if) is drawn from a scenario with fewer than 3 samples in either run. Differences in the
    environment (CPU, crypto flags, versions, emulation, pinning) are printed as warnings.
    """
    from sshbench.analyse.compare import compare, environment_differences, regressions
    from sshbench.render.compare import compare_document, print_compare

    threshold = parse_fail_if(fail_if) if fail_if else None
    store = open_store(db, read_only=True)
    run_a, run_b = resolve(store, run_a), resolve(store, run_b)
    a, b = store.run(run_a), store.run(run_b)
    changes = compare(store.load(run_a).scenarios, store.load(run_b).scenarios)  # a fleet: every host, named
    diffs = environment_differences(a.environment, b.environment)
    failing = regressions(changes, threshold) if threshold is not None else None
    if as_json:
        click.echo(json.dumps(compare_document(a, b, changes, diffs, failing), indent=2))
    else:
        print_compare(out(), a, b, changes, diffs, failing, threshold)
    if failing:
        raise SshbenchError(
            f"{len(failing)} scenario(s) of run {run_b} are slower than run {run_a} by more than {threshold:g}%",
            place="--fail-if",
            fix="see the table above; rerun both to rule out noise (`sshbench show`)",
            code=ExitCode.REGRESSION,
        )


@click.command("recommend")
@click.argument("run_id", type=RunRef(), required=False, metavar="[RUN]")
@click.option("--policy", "policy_spec", help=POLICY_HELP + " [default: the run's, else modern]")
@click.option("--host", help="Host pattern for the ssh_config block [default: the run's remote target].")
@db_option
def recommend_cmd(
    run_id: int | None, policy_spec: str | None, host: str | None, db: Path | None, as_json: bool
) -> None:
    """Fastest configuration overall, within a policy, and fastest handshake, as config lines.

    Uses a stored run with throughput (default: the newest). Gains are against what the plain client
    negotiates today, in % with a conservative interval. Every algorithm the policy excludes is listed
    with its reason.

    \b
    Policy file example (TOML):
      base = "modern"
      [deny.cipher]
      "aes256-ctr" = "we standardise on AES-128"
      [allow.mac]
      "umac-64-etm@openssh.com" = "accepted on the backup network"
    """
    from sshbench.analyse import policy, sweep
    from sshbench.render.console import print_bounds, print_environment
    from sshbench.render.snippets import host_for, valid_host
    from sshbench.render.sweep import print_recommendation
    from sshbench.store import default_db_path

    if not (db or default_db_path()).exists():
        raise _no_throughput(db or default_db_path())
    store = open_store(db, read_only=True)
    run_id = resolve(store, run_id) if run_id is not None else _latest_with_throughput(store)
    run, stored = store.run(run_id), store.scenarios(run_id)
    if host is not None and not valid_host(host):
        raise SshbenchError(
            f"{host!r} is not a valid Host pattern", place="--host", fix="use a host name or alias", code=ExitCode.USAGE
        )
    pol = policy.resolve(policy_spec or run.options.policy)
    if run.fleet is not None:
        return _recommend_fleet(store, run_id, pol, as_json)
    full = run.options.full_latency
    rec = sweep.recommend(stored, run.discovery, pol, full)
    if as_json:
        click.echo(json.dumps(sweep.to_document(stored, run.discovery, pol, full), indent=2))
        return
    if rec.overall is None:
        raise SshbenchError(
            f"run {run_id} has no measured throughput or latency to recommend from",
            place=f"run {run_id}",
            fix="choose a run listed by `sshbench history` with throughput results",
            code=ExitCode.USAGE,
        )
    print_environment(out(), run)
    print_recommendation(out(), rec, host or host_for(run), run.source)
    print_bounds(out(), run, stored)


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
        raise SshbenchError(f"fleet run {run_id} reached no host", place=f"run {run_id}",
                            fix="measure the fleet again once its hosts answer", code=ExitCode.USAGE)  # fmt: skip
    print_choice(out(), choice, rows)


def _latest_with_throughput(store: Store) -> int:
    """Return the newest run whose throughput results can back a recommendation, or fail."""
    from sshbench.model import Kind, RunKind

    run_id = store.latest_run([k for k in RunKind if k.recommends], Kind.THROUGHPUT)
    if run_id is None:
        raise _no_throughput(store.path)
    return run_id


def _no_throughput(path: Path) -> SshbenchError:
    """Return the error for a database without a run to recommend from."""
    return SshbenchError(
        "no stored run has throughput results",
        place=str(path),
        fix="run `sshbench sweep` (or `sshbench`) first",
        code=ExitCode.USAGE,
    )


COMMANDS = (history_cmd, show_cmd, export_cmd, report_cmd, compare_cmd, recommend_cmd)
