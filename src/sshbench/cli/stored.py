"""The commands that read stored runs: history, show, export, report, compare, recommend."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click
from click.core import ParameterSource

from sshbench import hints
from sshbench.cli.common import err, open_store, out, rejudged, resolve, show, write_files
from sshbench.cli.decorators import db_only, db_option, json_option, margin_option
from sshbench.cli.measuring import POLICY_HELP
from sshbench.cli.options import parse_fail_if, parse_percent
from sshbench.cli.params import RunRef, RunRefs
from sshbench.cli.reading import gate, named_rows, settled_last
from sshbench.errors import ExitCode, SshbenchError
from sshbench.render.formats import FORMATS

MARGIN_DEFAULT = 0.05  # sshbench.ratios.MARGIN (not imported here: --help stays light)

if TYPE_CHECKING:
    from sshbench.analyse.policy import Policy
    from sshbench.records import StoredRun
    from sshbench.storage.store import Store


@click.command("history")
@db_option
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 10000))
@click.option("--hosts", "with_hosts", is_flag=True, help="Also list the runs of each fleet's hosts.")
def history_cmd(db: Path | None, as_json: bool, limit: int, with_hosts: bool) -> None:
    """List stored runs, newest first (a fleet is one run; --hosts lists its hosts' runs too)."""
    from sshbench.storage.store import default_db_path

    exists = (db or default_db_path()).exists()
    runs = open_store(db, read_only=True).runs(limit, hosts=with_hosts) if exists else []
    if as_json:
        from sshbench.render.export import history_document

        click.echo(json.dumps(history_document(runs), indent=2))
    elif not runs:
        out().print(f"No runs stored yet: run `{hints.sshbench()}` to make one.", highlight=False, markup=False)
    else:
        from sshbench.render.console import print_history

        print_history(out(), runs)


@click.command("show")
@click.argument("run_id", type=RunRef(), default="last", metavar="[RUN]")
@margin_option(stored=True)
@db_option
def show_cmd(run_id: int, margin: str | None, db: Path | None, as_json: bool) -> None:
    """Show a stored run (complete or partial) as tables or JSON. RUN: an id, or `last` (the default)."""
    from sshbench.runkinds import RunKind

    store = open_store(db, read_only=True)
    run_id = resolve(store, run_id)
    show(store, run_id, as_json, discovery_only=store.run(run_id).kind is RunKind.ALGOS, margin=margin)


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
    stored = store.load(resolve(store, run_id))
    files = export.write(stored)
    if export.directory and not files:
        run = stored.run
        raise SshbenchError(
            f"run {run.id} ({run.kind}) has nothing to write as {fmt}: its files hold throughput per cipher and MAC "
            "and connection time per key exchange and host key, and this run measured none",
            place=f"--format {fmt}",
            fix="export every sample with --format csv or json, or give a run of run, latency, throughput, sweep or "
            "servers",
            code=ExitCode.USAGE,
        )
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
@margin_option(stored=True)
@db_only
@json_option
def report_cmd(
    run_ids: tuple[int, ...], output: Path | None, fmt: str, margin: str | None, db: Path | None, as_json: bool
) -> None:
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
    ids = [resolve(store, i) for i in run_ids] if run_ids else [settled_last(store)]
    runs = [rejudged(store.load(i), margin) for i in ids]
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
@click.argument("run_a", type=RunRefs(), metavar="RUN_A[,RUN...]")
@click.argument("run_b", type=RunRefs(), default="last", metavar="[RUN_B[,RUN...]]")
@click.option(
    "--fail-if",
    "fail_if",
    metavar="slower:PCT",
    help="Exit with status 10 when some scenario of B is slower than in A by more than PCT even at its interval's "
    "best end (e.g. slower:5%); when the interval straddles PCT the outcome is INCONCLUSIVE (exit 0, a warning). "
    "For CI pipelines.",
)
@margin_option(stored=False)
@db_option
def compare_cmd(
    run_a: tuple[int, ...], run_b: tuple[int, ...], fail_if: str | None, margin: str | None, db: Path | None,
    as_json: bool,
) -> None:  # fmt: skip
    """Per scenario, the change from A to B (default: `last`) in %, with its interval and verdict.

    \b
    The ratio B/A gets a 95 % interval (Hodges-Lehmann, unpaired) and one word:
      equivalent    the interval lies within +-MARGIN (5 %) of no change
      faster/slower the interval excludes no change
      inconclusive  neither: more samples (or runs) would tell; roughly how many is shown
    No verdict (and no --fail-if) is drawn from fewer than 3 samples on a side. The interval holds the
    noise inside the runs, not the drift between runs (5-28 % on a shared machine): give several runs
    per side (`sshbench compare 3,4 7,8`) to pool them and see their spread. Differences in the
    environment (CPU, crypto flags, versions, emulation, pinning) are printed as warnings.
    """
    from sshbench.analyse.compare import compare, environment_differences
    from sshbench.analyse.compare import fail_if as judge_fail_if
    from sshbench.render.compare import compare_document, print_compare

    threshold = parse_fail_if(fail_if) if fail_if else None
    m = parse_percent(margin, "--margin") if margin else MARGIN_DEFAULT
    store = open_store(db, read_only=True)
    ids_a = [resolve(store, i) for i in run_a]
    ids_b = [resolve(store, i) for i in run_b]
    a, b = [store.run(i) for i in ids_a], [store.run(i) for i in ids_b]
    side_a = [named_rows(store.load(i)) for i in ids_a]  # a fleet: every host, named
    changes = compare(side_a, [named_rows(store.load(i)) for i in ids_b], m)
    diffs = sorted({d for x in a for y in b for d in environment_differences(x.environment, y.environment)})
    judged = judge_fail_if(changes, threshold) if threshold is not None else None
    if as_json:
        click.echo(json.dumps(compare_document(a, b, changes, diffs, judged, m), indent=2))
    else:
        print_compare(out(), a, b, changes, diffs, judged, m)
    if judged is not None:
        gate(fail_if or "", judged, changes, ids_a, ids_b)


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
    from sshbench.analyse.claims.caveats import measured_under
    from sshbench.analyse.claims.collect import run_recommendation
    from sshbench.render.console import print_bounds, print_environment
    from sshbench.render.export import sweep_document
    from sshbench.render.snippets import host_for
    from sshbench.render.sweep import print_recommendation

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
    from sshbench.render.console import print_environment

    run = data.run
    groups = ranked(data.scenarios, run.options.plan.ci_target, run.options.margin)
    languages = languages_of(run.environment.clients)
    chosen = {lang: picks(groups, libs, run.options.margin) for lang, libs in languages.items()}
    if as_json:
        docs = [{"language": lang, "claim": p.claim().to_dict(), "code": code_lines(p.row.scenario, p.group)}
                for lang, ps in chosen.items() for p in ps]  # fmt: skip
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
        raise SshbenchError(f"fleet run {run_id} reached no host", place=f"run {run_id}",
                            fix="measure the fleet again once its hosts answer", code=ExitCode.USAGE)  # fmt: skip
    print_choice(out(), choice, rows)


def _latest_with_throughput(store: Store) -> int:
    """Return the newest run whose throughput results can back a recommendation, or fail."""
    from sshbench.model import Kind
    from sshbench.runkinds import RunKind

    run_id = store.latest_run([k for k in RunKind if k.recommends], Kind.THROUGHPUT)
    if run_id is None:
        raise _no_throughput(store.path)
    return run_id


def _no_throughput(path: Path) -> SshbenchError:
    """Return the error for a database without a run to recommend from."""
    return SshbenchError(
        "no stored run has throughput results",
        place=str(path),
        fix=f"run `{hints.sshbench('sweep')}` (or `{hints.sshbench()}`) first",
        code=ExitCode.USAGE,
    )


COMMANDS = (history_cmd, show_cmd, export_cmd, report_cmd, compare_cmd, recommend_cmd)
