"""The commands that read stored runs: history, show, export, report, compare (and recommend, cli/recommend.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click
from click.core import ParameterSource

from sshbench import hints
from sshbench.cli.common import err, open_store, out, rejudged, resolve, show
from sshbench.cli.decorators import db_only, db_option, json_option, margin_option
from sshbench.cli.options import parse_fail_if, parse_percent
from sshbench.cli.params import RunRef, RunRefs
from sshbench.cli.reading import gate, named_rows, settled_last
from sshbench.cli.recommend import recommend_cmd
from sshbench.errors import ExitCode, SshbenchError
from sshbench.render.formats import FORMATS

MARGIN_DEFAULT = 0.05  # sshbench.ratios.MARGIN (not imported here: --help stays light)

if TYPE_CHECKING:
    pass


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
    "-o", "--output", type=click.Path(path_type=Path), help="File (directory for shell-csv, hgrm) [default: stdout]."
)
@db_only
@json_option
def export_cmd(run_id: int, fmt: str, output: Path | None, db: Path | None, as_json: bool) -> None:
    """Export a run: every sample (CSV/JSON), hyperfine's JSON, the shell-script layout (shell-csv), or a load
    run's steps as HdrHistogram files (hgrm).

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
            f"run {run.id} ({run.kind}) has nothing to write as {fmt}: its files hold {export.holds}, and this run "
            "measured none",
            place=f"--format {fmt}",
            fix=f"export every sample with --format csv or json, or give a run of {export.kinds}",
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
    run_a: tuple[int, ...],
    run_b: tuple[int, ...],
    fail_if: str | None,
    margin: str | None,
    db: Path | None,
    as_json: bool,
) -> None:
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

    Load runs are compared per step (a rate, a burst, sessions held) at its p50 and p99, each
    side's percentile with its order-statistics interval: a p99 needs 435 logins a side for a
    verdict (at 20/s a --step-time of 22s), so `--fail-if slower:10%` gates a p99 at a rate.
    """
    from sshbench.analyse.compare import compare, environment_differences
    from sshbench.analyse.compare import fail_if as judge_fail_if
    from sshbench.render.compare import compare_document, print_compare
    from sshbench.render.load import capacity_change_document, print_capacity_change

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
    pair = (store.load(ids_a[0]), store.load(ids_b[0])) if len(ids_a) == len(ids_b) == 1 else None
    if as_json:
        doc = compare_document(a, b, changes, diffs, judged, m)
        click.echo(json.dumps(doc | (capacity_change_document(*pair) if pair else {}), indent=2))
    else:
        print_compare(out(), a, b, changes, diffs, judged, m)
        if pair:
            print_capacity_change(out(), *pair)
    if judged is not None:
        gate(fail_if or "", judged, changes, ids_a, ids_b)


COMMANDS = (history_cmd, show_cmd, export_cmd, report_cmd, compare_cmd, recommend_cmd)


def write_files(output: Path, files: dict[str, str]) -> None:
    """Write one file (name '') or several files into a directory, naming the path on failure."""
    try:
        if "" in files:
            output.write_text(files[""])
            return
        output.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (output / name).write_text(text)
    except OSError as exc:
        raise SshbenchError(
            f"cannot write {output}: {exc.strerror}",
            place="--output",
            fix="choose a writable path",
            code=ExitCode.STORAGE,
        ) from None
