"""Exports in other tools' layouts: hyperfine's --export-json schema and the common shell scripts' CSV files, each
result named by the command it stands for (the ssh pipe, or a `tools` copy, as measure/ runs it)."""

from __future__ import annotations

import csv
import io
import json
import re
import shlex
import statistics
from collections.abc import Sequence

from sshbench.analyse import sweep
from sshbench.model import LEGACY_SCP, SOCAT_BLOCK, Direction, Kind, Scenario
from sshbench.records import RunRecord, StoredRun, StoredScenario
from sshbench.samples import Sample

SHELL_FILES = {
    "kex.csv": ("kex", None),
    "cipher-send.csv": ("cipher", "up"),
    "cipher-receive.csv": ("cipher", "down"),
    "mac-send.csv": ("mac", "up"),
    "mac-receive.csv": ("mac", "down"),
}


def to_shell_csv(stored: StoredRun) -> dict[str, str]:
    """Return the layout of the common shell benchmark scripts: one `algorithm,time` file per test.

    time is seconds: per connection for kex.csv; to move 1 GiB at the median rate (handshake excluded)
    for the cipher and MAC files. send = client -> server (upload), receive = server -> client. Each value is a
    row `show` prints: a cipher with the reference MAC, a MAC with the reference cipher (aes128-ctr); MAC files are
    written only when the run measured MACs against one cipher (`--macs each`, a sweep), since a MAC measured with
    one cipher alone is that cipher's speed. A run of several servers (or a fleet's hosts) gets one set of files per
    server, named `SERVER-kex.csv` and so on: a value pooled over servers would be no row `show` prints. A `clients`
    run has none: those scripts time ssh's algorithms, and its rows are clients.
    """
    if not stored.run.kind.row.shell_csv:
        return {}
    servers = sorted({st.scenario.server for st in stored.scenarios}, key=lambda s: s or "")
    if servers == [None]:
        return _shell_files(stored.scenarios, stored.run.options.full_latency)
    files: dict[str, str] = {}
    for server in servers:
        mine = [st for st in stored.scenarios if st.scenario.server == server]
        prefix = re.sub(r"[^A-Za-z0-9._-]+", "_", server or "none")
        own = _shell_files(mine, stored.run.options.full_latency)
        files |= {f"{prefix}-{name}": text for name, text in own.items()}
    return files


def _shell_files(scenarios: Sequence[StoredScenario], full: bool) -> dict[str, str]:
    """Return the shell-script files of one server's scenarios."""
    dims = sweep.dimensions(scenarios, full)
    files = {}
    for name, (kind, direction) in SHELL_FILES.items():
        rows = [r for r in dims if r.kind == kind and r.direction == direction and r.estimate is not None]
        if not rows:
            continue
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(("algorithm", "time"))
        for r in rows:
            assert r.estimate is not None
            seconds = r.estimate.median if kind == "kex" else 2**30 / (r.estimate.median * 1_000_000)
            writer.writerow((r.algorithm, f"{seconds:.4f}"))
        files[name] = buf.getvalue()
    return files


def to_hyperfine(stored: StoredRun) -> dict[str, str]:
    """Return the run in hyperfine's --export-json schema, so hyperfine's own scripts read it (one file).

    One result per scenario; times are seconds per connection, or per transfer at the measured steady rate
    (payload / rate: the handshake is excluded, as in sshbench's ranking). user/system are the ssh client's
    CPU seconds per sample (system is null for samples stored before schema 3).
    """
    results = []
    for st in stored.scenarios:
        good = [s for s in st.samples if s.measured]
        if not good:
            continue
        times = [_seconds(s) for s in good]
        system = [s.client_system for s in good]
        known = all(v is not None for v in system)
        cpu = [s.client_cpu or 0.0 for s in good]
        results.append(
            {
                "command": _command(stored.run, st.scenario, good[0].nbytes),
                "mean": statistics.fmean(times),
                "stddev": statistics.stdev(times) if len(times) > 1 else None,
                "median": statistics.median(times),
                "user": statistics.fmean(c - (v or 0.0) for c, v in zip(cpu, system, strict=True)),
                "system": statistics.fmean(v or 0.0 for v in system) if known else None,
                "min": min(times),
                "max": max(times),
                "times": times,
                "exit_codes": [0] * len(times),
                "parameters": {k: v for k, v in st.scenario.to_dict().items() if k != "kind"},
            }
        )
    return {"": json.dumps({"results": results}, indent=2)}


def _seconds(s: Sample) -> float:
    """Return a sample as seconds: the connection time, or the payload over the steady rate."""
    assert s.value is not None
    if s.scenario.kind is Kind.LATENCY:
        return s.value
    return (s.nbytes or 0) / (s.value * 1_000_000)


def _command(run: RunRecord, sc: Scenario, nbytes: int | None) -> str:
    """Return the command line a sample stands for: the ssh pipe, or the file copy of a `tools` row."""
    target = "TARGET" if run.target.startswith("local") else run.target
    if sc.client not in (None, "openssh"):  # a client of `clients`: its registry row and driver are the command
        what = {Kind.LATENCY: "connect", Kind.TOOL: f"sftp {sc.direction}"}.get(sc.kind, f"exec {sc.direction}")
        return f"{sc.metric.labels.name(sc)}: {what} {nbytes or ''}".strip() + f" (sshbench {run.kind.value})"
    if sc.kind is Kind.TOOL:
        return _copy_command(target, sc, f"file-{nbytes}")
    ssh = shlex.join(["ssh", *sc.ssh_options(), target])
    if sc.kind is Kind.LATENCY:
        return f"{ssh} true"
    if sc.direction is Direction.DOWN:
        return f"{ssh} 'head -c {nbytes} /dev/zero' > /dev/null"
    return f"{ssh} 'wc -c' < payload-{nbytes}"


def _copy_command(target: str, sc: Scenario, file: str) -> str:
    """Return the copy a `tools` sample stands for, as measure/tools.py runs it (paths and ports as placeholders;
    the plaintext baselines run no ssh at all)."""
    down, opts = sc.direction is Direction.DOWN, sc.ssh_options()
    ends = [f"{target}:{file}", "."] if down else [file, f"{target}:"]
    if sc.tool in ("scp", LEGACY_SCP):
        return shlex.join(["scp", *(["-O"] if sc.tool == LEGACY_SCP else []), *opts, *ends])
    if sc.tool == "sftp":
        return f"echo {'get' if down else 'put'} {file} | " + shlex.join(["sftp", "-b", "-", *opts, target])
    if sc.tool == "rsync":
        return shlex.join(["rsync", "--whole-file", "--inplace", "-e", shlex.join(["ssh", *opts]), *ends])
    if sc.tool == "tcp":  # socat to or from a socat listener beside the server
        way = ["TCP:SERVER:PORT", f"CREATE:{file}"] if down else [f"OPEN:{file}", "TCP:SERVER:PORT"]
        return shlex.join(["socat", "-u", "-b", str(SOCAT_BLOCK), *way])
    url = "rsync://SERVER:PORT/sshbench/" + (file if down else "inbox/file")
    return shlex.join(["rsync", "--whole-file", "--inplace", *([url, "."] if down else [file, url])])
