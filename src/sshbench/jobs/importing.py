"""`sshbench import`: runs measured on other machines (`sshbench COMMAND --json`, e.g. fetched back by
contrib/ansible) become runs of this database, with the machine that measured recorded as the client."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sshbench.discovery import Discovery
from sshbench.environment import Environment
from sshbench.errors import ExitCode, SshbenchError
from sshbench.joboptions import JobOptions, LoadOptions
from sshbench.loadsteps import StepKey
from sshbench.model import Scenario
from sshbench.records import SCHEMA_VERSION, ServerReport, read_discovery
from sshbench.samples import RunStatus, Sample
from sshbench.storage.store import Store

SAMPLE_FIELDS = (
    "round",
    "warmup",
    "ok",
    "value",
    "wall",
    "nbytes",
    "client_cpu",
    "client_system",
    "error",
    "server_cpu",
    "client_rss",
    "server_rss",
    "tcp",
    "client_cpu_setup",
    "server_cpu_setup",
    "wire",
)


def _bad(path: Path, why: str) -> SshbenchError:
    """Return the error for a file that is not an sshbench run document."""
    return SshbenchError(
        f"cannot import {path.name}: {why}",
        place=str(path),
        fix="give the JSON that `sshbench run|latency|throughput|sweep ... --json` printed (one run per file)",
        code=ExitCode.USAGE,
    )


@dataclass(frozen=True)
class Document:
    """A run measured elsewhere, decoded whole before anything is stored."""

    path: Path
    options: JobOptions
    target: str
    started_at: str | None
    environment: Environment
    discovery: Discovery | None
    servers: tuple[ServerReport, ...]
    status: RunStatus
    scenarios: tuple[tuple[Scenario, str | None, tuple[Sample, ...]], ...]  # each with its failure and samples


def read_document(path: Path) -> Document:
    """Read and decode one run document, or fail naming the file and what is wrong with it."""
    try:
        doc = json.loads(path.read_text())
    except OSError as exc:
        raise _bad(path, exc.strerror or str(exc)) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise _bad(path, f"not JSON ({exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("run"), dict) or not isinstance(doc.get("samples"), list):
        raise _bad(path, "it has no `run` and `samples` (not an sshbench run document)")
    version = doc.get("schema_version")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise _bad(path, f"schema {version} is newer than this sshbench reads ({SCHEMA_VERSION}): upgrade sshbench")
    try:
        return _decode(path, doc)
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise _bad(path, f"{type(exc).__name__}: {exc}") from None


def _decode(path: Path, doc: dict[str, Any]) -> Document:
    """Decode a checked document's run, discovery, scenarios and samples."""
    run = doc["run"]
    discovery, servers, fleet = read_discovery(doc.get("discovery"))
    if fleet is not None:
        raise _bad(path, "it is a fleet run: import the hosts' own runs (`sshbench export RUN --format json`)")
    scenarios = []
    for entry in doc["samples"]:
        sc = Scenario.from_dict(entry["scenario"])
        samples = tuple(_sample(sc, raw) for raw in entry.get("samples") or ())
        scenarios.append((sc, str(entry["failure"]) if entry.get("failure") else None, samples))
    return Document(
        path=path,
        options=JobOptions.from_dict(run["options"], run["command"]),
        target=str(run.get("target", "")),
        started_at=run.get("started_at"),
        environment=Environment.from_dict(run["environment"]),
        discovery=discovery,
        servers=servers,
        status=RunStatus(run.get("status", "complete")),
        scenarios=tuple(scenarios),
    )


def import_document(store: Store, doc: Document, client: str | None) -> int:
    """Store one decoded run document as a new run (the measuring host as its client) and return its id."""
    env = dataclasses.replace(doc.environment, client_host=client or doc.environment.client_host or doc.path.stem)
    run_id = store.create_run(doc.options, doc.target, env, started_at=doc.started_at)
    if doc.discovery is not None:
        store.set_discovery(run_id, doc.discovery)
    elif doc.servers:
        store.set_servers(run_id, doc.servers)
    ids = store.add_scenarios(run_id, [sc for sc, _, _ in doc.scenarios])
    for sc, failure, samples in doc.scenarios:
        if failure:
            store.mark_failed(ids[sc.key], failure)
        for sample in samples:
            store.add_sample(ids[sc.key], sample)
    store.set_status(run_id, RunStatus.INTERRUPTED if doc.status is RunStatus.RUNNING else doc.status)
    return run_id


def _sample(sc: Scenario, raw: Mapping[str, Any]) -> Sample:
    """Rebuild one exported sample."""
    fields: dict[str, Any] = {k: raw.get(k) for k in SAMPLE_FIELDS}
    phases = tuple((str(k), float(v)) for k, v in (raw.get("phases") or {}).items())
    return Sample(scenario=sc, phases=phases, **fields)


def _merge_key(doc: Document) -> tuple[Any, ...]:
    """Return what runs merged as one must share: the command, target, steps, job and agreed start."""
    own = doc.options.own_as(LoadOptions)
    return (doc.options.command, doc.target, own.rates, own.step_time, own.job, own.up, own.down, own.start_at)


def _refuse_merge(doc: Document, first: Document) -> None:
    """Fail saying why this document cannot be merged with the first."""
    if not doc.options.command.row.merges:
        raise _bad(doc.path, "--merge joins `sshbench load` runs of rate steps (not bursts or sessions)")
    if doc.options.own_as(LoadOptions).start_at is None:
        raise _bad(doc.path, "it has no agreed start (--start-at): its steps did not run with the others'")
    if _merge_key(doc) != _merge_key(first):
        raise _bad(
            doc.path,
            f"its target, steps, job or agreed start differ from {first.path.name}'s: they did not load one "
            "target together",
        )


def merge_documents(docs: Sequence[Document]) -> Document:
    """Return the load runs of several generators that started their steps together as one run: each step's logins
    pooled (renumbered, each with its generator as a phase), its rate the sum of theirs; fail naming a file that
    does not belong."""
    first = docs[0]
    for doc in docs:
        _refuse_merge(doc, first)
    own = first.options.own_as(LoadOptions)
    n = sum(d.options.own_as(LoadOptions).generators for d in docs)
    merged_own = dataclasses.replace(own, rates=tuple(r * len(docs) for r in own.rates), generators=n)
    scenarios = []
    for i, (sc, _, _) in enumerate(first.scenarios):
        rate = own.rates[i] * len(docs) if i < len(own.rates) else None
        merged = dataclasses.replace(sc, load=StepKey.rate(rate) if rate is not None else sc.load)
        pooled: list[Sample] = []
        failures = []
        for g, doc in enumerate(docs, start=1):
            _, failure, samples = doc.scenarios[i]
            failures += [f"{failure} ({_client(doc)})"] if failure else []
            pooled += [
                dataclasses.replace(s, scenario=merged, round=len(pooled) + k + 1, phases=(*s.phases, ("generator", g)))
                for k, s in enumerate(samples)
            ]
        scenarios.append((merged, "; ".join(failures) or None, tuple(pooled)))
    statuses = {d.status for d in docs}
    return dataclasses.replace(
        first,
        options=dataclasses.replace(first.options, own=merged_own),
        started_at=min((d.started_at for d in docs if d.started_at), default=None),
        environment=dataclasses.replace(first.environment, client_host=_clients(docs)),
        status=RunStatus.COMPLETE if statuses == {RunStatus.COMPLETE} else RunStatus.INCOMPLETE,
        scenarios=tuple(scenarios),
    )


def _client(doc: Document) -> str:
    """Return the machine that measured a document."""
    return doc.environment.client_host or doc.path.stem


def _clients(docs: Sequence[Document]) -> str:
    """Return the machines that measured the documents, each with its file's name where two share a name."""
    names = [_client(d) for d in docs]
    return ", ".join(n if names.count(n) == 1 else f"{n} ({d.path.stem})" for n, d in zip(names, docs, strict=True))
