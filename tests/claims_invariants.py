"""The claim invariants, held against stored runs: every run the test suite produces (conftest's `sshbench()` checks
the database after each command) and runs made up by hypothesis (tests/analyse/test_claims.py).

Each check returns the sentences that break an invariant, so a failure names the run and the claim:
- a bound's limit is never below the rate it bounds (beyond claims.core.TOLERANCE);
- a remedy never names the row's own choice;
- an aggregate ("both ways") only over directions that were measured;
- every failed or skipped scenario is listed where its result group is summarised; a winner or "keep it" is never
  claimed over rows that were not measured;
- a baseline or ceiling below the SSH rate it caps is a failed baseline, never a share above 100 %;
- a gain is never stated for a choice against itself;
- exported files agree with what `show` prints for the same run (shell-csv against the result rows);
- the run document validates against docs/schema/run-document.schema.json.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import re
from pathlib import Path

import jsonschema

from sshbench.analyse import policy as policies
from sshbench.analyse.claims import bounds
from sshbench.analyse.claims.baselines import efficiency
from sshbench.analyse.claims.collect import run_claims, run_recommendation
from sshbench.analyse.claims.core import TOLERANCE, Claim, ClaimKind
from sshbench.analyse.results import Row, ranked
from sshbench.analyse.sweep import dimensions, measured_directions
from sshbench.errors import SshbenchError
from sshbench.model import Kind
from sshbench.records import StoredRun
from sshbench.render.export import run_document
from sshbench.render.layouts import SHELL_FILES, to_shell_csv
from sshbench.runkinds import RunKind
from sshbench.storage.store import Store

SCHEMA = Path(__file__).parent.parent / "docs" / "schema" / "run-document.schema.json"


@functools.cache
def _validator() -> jsonschema.Draft202012Validator:
    """Return the validator of the run document's schema."""
    return jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))


def check_store(db: Path) -> list[str]:
    """Return every invariant broken by any run stored in a database (none when it is not sshbench's)."""
    if not db.exists():
        return []
    try:
        store = Store(db, read_only=True)
        runs = [r for r, _ in store.runs(10_000, hosts=True)]
        loaded = [store.load(r.id) for r in runs]
    except SshbenchError:
        return []
    return [f"run {s.run.id} in {db}: {why}" for s in loaded for why in check_run(s)]


def check_run(stored: StoredRun) -> list[str]:
    """Return every invariant a stored run's claims break."""
    run = stored.run
    problems = [
        f"schema: {e.message} at {list(e.absolute_path)}"
        for e in _validator().iter_errors(json.loads(json.dumps(run_document(stored))))
    ]
    if run.fleet is not None:
        return problems
    pol = _policy(stored)
    claims = run_claims(stored, pol)
    groups = ranked(stored.scenarios, run.options.plan.ci_target, run.options.margin)
    problems += _bounds(stored, groups)
    problems += _unmeasured(groups, claims)
    problems += _directions(stored, claims)
    problems += _keep_and_gains(stored, claims)
    if run.kind is RunKind.TOOLS:
        problems += _baselines(stored, groups, claims)
    problems += _exports(stored, groups)
    return problems


def _policy(stored: StoredRun) -> policies.Policy:
    """Return the run's policy (modern when its file is gone)."""
    try:
        return policies.resolve(stored.run.options.policy)
    except SshbenchError:
        return policies.builtin("modern")


def _bounds(stored: StoredRun, groups: dict[str, list[Row]]) -> list[str]:
    """A limit is never below the rate it bounds; a remedy never names the row's own choice."""
    lim = bounds.limits(stored.run.environment)
    if lim is None:
        return []
    out = []
    for rows in groups.values():
        for row in rows:
            found = bounds.diagnose(row, lim, rows)
            if found is None or row.summary is None:
                continue
            b, label = found.bound, row.scenario.metric.labels.name(row.scenario)
            if b.unit == "MB/s" and b.limit is not None and b.limit * (1 + TOLERANCE) < row.summary.median:
                out.append(f"{label}: {b.kind} limit {b.limit:.3g} MB/s below its rate {row.summary.median:.3g}")
            named = re.findall(r"helps: (.+?) \(", b.remedy)
            if label in named:
                out.append(f"{label}: its remedy names its own choice: {b.remedy}")
    return out


def _unmeasured(groups: dict[str, list[Row]], claims: list[Claim]) -> list[str]:
    """Every failed row is listed; a fastest claim names every row of its group that has no rank."""
    out = []
    listed = {c.subject for c in claims if c.kind is ClaimKind.UNMEASURED}
    for rows in groups.values():
        for r in rows:
            if r.summary is None and r.failure and r.scenario.label not in listed:
                out.append(f"failed row {r.scenario.label} is not listed")
    for c in claims:
        if c.kind is ClaimKind.FASTEST and "unmeasured" in c.evidence and "leader" in c.evidence:
            group = {"download": "download", "upload": "upload", "quickest connection": "latency"}[c.subject]
            unranked = {r.scenario.metric.labels.name(r.scenario) for r in groups.get(group, []) if r.standing is None}
            named = {u["row"] for u in c.evidence["unmeasured"]}
            if unranked - named:
                out.append(f"{c.subject}: a winner is claimed without naming unmeasured {sorted(unranked - named)}")
    return out


def _directions(stored: StoredRun, claims: list[Claim]) -> list[str]:
    """'Both ways' only when both directions were measured."""
    ways = measured_directions(stored.scenarios)
    if len(ways) > 1:
        return []
    return [f"claims both ways over {ways}: {c.text}" for c in claims if "both ways" in c.text]


def _keep_and_gains(stored: StoredRun, claims: list[Claim]) -> list[str]:
    """'Keep it' only over rows all measured; no gain of a choice over itself."""
    out = []
    for c in claims:
        if c.kind is ClaimKind.KEEP and "keep it" in c.text and c.evidence.get("unmeasured"):
            out.append(f"keep it claimed over unmeasured rows: {c.text}")
        if c.kind is ClaimKind.GAIN and c.evidence.get("same") and c.evidence.get("verdict"):
            out.append(f"a gain of a choice over itself: {c.text}")
    if stored.run.kind.recommends and any(st.scenario.kind is Kind.THROUGHPUT for st in stored.scenarios):
        rec = run_recommendation(stored.run, stored.scenarios, _policy(stored))
        for choice in (rec.overall, rec.within_policy):
            g = choice.gain if choice else None
            if (
                choice
                and g
                and g.baseline == (choice.cipher if choice.mac is None else f"{choice.cipher} + {choice.mac}")
                and not g.same
            ):
                out.append(f"{choice.title}: a gain over itself ({g.baseline})")
    return out


def _baselines(stored: StoredRun, groups: dict[str, list[Row]], claims: list[Claim]) -> list[str]:
    """A baseline or ceiling below the copy it caps is a failed baseline, never a share above 100 %."""
    out = []
    for group, way in (("tool download", "download"), ("tool upload", "upload")):
        for e in efficiency(groups.get(group, []), stored.run.environment.crypto_ceilings):
            for name, share in (("tcp", e.of_tcp), ("rsyncd", e.of_rsyncd), ("crypto", e.of_crypto)):
                if share is not None and share > 1:
                    out.append(f"{way}: a share of {share:.0%} of {name}")
            for name in e.failed:
                said = [c for c in claims if c.kind is ClaimKind.BASELINE and c.subject == f"{way} {name}"]
                if not any("failed baseline" in c.text for c in said):
                    out.append(f"{way}: {name} below {e.row.scenario.label} is not reported as a failed baseline")
    return out


def _exports(stored: StoredRun, groups: dict[str, list[Row]]) -> list[str]:
    """The shell-csv files hold numbers `show` prints: for a sweep its per-dimension rows, otherwise the result row
    measured with the reference partner the file's value rests on (1 GiB at its median, or its connection time)."""
    out = []
    rows = [r for g in groups.values() for r in g if r.summary is not None]
    for name, text in to_shell_csv(stored).items():
        base = next(f for f in SHELL_FILES if name == f or name.endswith("-" + f))
        server = name[: -len(base) - 1]  # SERVER-kex.csv for a run of several servers, else ""
        kind, direction = SHELL_FILES[base]
        mine = [st for st in stored.scenarios if not server or _file_name(st.scenario.server) == server]
        dims = {(d.kind, d.algorithm, d.direction): d for d in dimensions(mine, stored.run.options.full_latency)}
        shown_rows = [r for r in rows if not server or r.scenario in {st.scenario for st in mine}]
        for algorithm, time in list(csv.reader(io.StringIO(text)))[1:]:
            d = dims[(kind, algorithm, direction)]
            partner = d.basis.removeprefix("with ") if d.basis.startswith("with ") else None
            if stored.run.kind.sweep:
                shown = [d.estimate.median] if d.estimate else []
            else:
                shown = [
                    r.summary.median for r in shown_rows if r.summary and _names(r, kind, algorithm, direction, partner)
                ]
            as_time = [f"{m:.4f}" if kind == "kex" else f"{2**30 / (m * 1e6):.4f}" for m in shown]
            if time not in as_time:
                out.append(f"{name}: {algorithm} {time} s is not what show prints ({partner or 'no partner'})")
    return out


def _file_name(server: str | None) -> str:
    """Return a server's name as the export writes it into a file name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", server or "none")


def _names(r: Row, kind: str, algorithm: str, direction: str | None, partner: str | None) -> bool:
    """Return True when a result row is the one a dimension value rests on."""
    sc = r.scenario
    if getattr(sc, kind) != algorithm or (sc.direction is not None and sc.direction.value != direction):
        return False
    return partner is None or partner in (sc.kex, sc.hostkey, sc.cipher, sc.mac)
