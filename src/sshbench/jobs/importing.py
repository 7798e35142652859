"""`sshbench import`: runs measured on other machines (`sshbench COMMAND --json`, e.g. fetched back by
contrib/ansible) become runs of this database, with the machine that measured recorded as the client."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sshbench.environment import Environment
from sshbench.errors import ExitCode, SshbenchError
from sshbench.model import JobOptions, RunStatus, Sample, Scenario
from sshbench.records import SCHEMA_VERSION, read_discovery
from sshbench.store import Store

SAMPLE_FIELDS = ("round", "warmup", "ok", "value", "wall", "nbytes", "client_cpu", "client_system", "error",
                 "server_cpu", "client_rss", "server_rss")  # fmt: skip


def _bad(path: Path, why: str) -> SshbenchError:
    """Return the error for a file that is not an sshbench run document."""
    return SshbenchError(
        f"cannot import {path.name}: {why}",
        place=str(path),
        fix="give the JSON that `sshbench run|latency|throughput|sweep ... --json` printed (one run per file)",
        code=ExitCode.USAGE,
    )


def read_document(path: Path) -> dict[str, Any]:
    """Read and check one run document."""
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
    return doc


def import_document(store: Store, path: Path, client: str | None) -> int:
    """Store one run document as a new run (the measuring host as its client) and return its id."""
    doc = read_document(path)
    run = doc["run"]
    try:
        options = JobOptions.from_dict(run["options"], run["command"])
        env = Environment.from_dict(run["environment"])
        discovery, servers, fleet = read_discovery(doc.get("discovery"))
        status = RunStatus(run.get("status", "complete"))
        entries = [(Scenario.from_dict(e["scenario"]), e) for e in doc["samples"]]
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise _bad(path, f"{type(exc).__name__}: {exc}") from None
    if fleet is not None:
        raise _bad(path, "it is a fleet run: import the hosts' own runs (`sshbench export RUN --format json`)")
    env = dataclasses.replace(env, client_host=client or env.client_host or path.stem)
    run_id = store.create_run(options, str(run.get("target", "")), env, started_at=run.get("started_at"))
    if discovery is not None:
        store.set_discovery(run_id, discovery)
    elif servers:
        store.set_servers(run_id, servers)
    ids = store.add_scenarios(run_id, [sc for sc, _ in entries])
    for sc, entry in entries:
        if entry.get("failure"):
            store.mark_failed(ids[sc.key], str(entry["failure"]))
        for raw in entry.get("samples") or ():
            store.add_sample(ids[sc.key], _sample(sc, raw, path))
    store.set_status(run_id, RunStatus.INTERRUPTED if status is RunStatus.RUNNING else status)
    return run_id


def _sample(sc: Scenario, raw: Mapping[str, Any], path: Path) -> Sample:
    """Rebuild one exported sample."""
    try:
        fields: dict[str, Any] = {k: raw.get(k) for k in SAMPLE_FIELDS}
        phases = tuple((str(k), float(v)) for k, v in (raw.get("phases") or {}).items())
        return Sample(scenario=sc, phases=phases, **fields)
    except (TypeError, ValueError) as exc:
        raise _bad(path, f"a sample of {sc.label}: {exc}") from None
