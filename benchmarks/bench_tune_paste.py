"""Benchmark: does the config `sshbench tune` pastes give the rate it promised? (issue 24)

Run (root, /dev/net/tun, socat):  .venv/bin/python benchmarks/bench_tune_paste.py [--rounds 5] [--only loopback]
(`--only loopback`, the plain loopback alias, needs no root: a normal user can run it.)

Per case, an OpenSSH server behind a shaped link in a network namespace made here (or on loopback at a CPU quota),
reached as a remote host through an ssh_config alias, as in bench_tune_paths.py:
1. `sshbench tune testhost --direction down` with the default budget, and its pasted ssh_config lines;
2. those lines put in front of the alias (a `Host testhost` block first: ssh takes the first value it reads), with
   the ControlPath moved to a scratch directory (the pasted `~/.ssh/cm-%C` is the user's; this benchmark never
   writes there);
3. plain `ssh` timed from spawn to exit, alternating before and after in each round:
   - the same download as tune's default copy (its size and payload: zeros, or the text corpus from a file), with
     the transfer lines only (no ControlMaster: tune measured the cipher or compression on fresh logins);
   - `ssh testhost true` with every pasted line (a master kept by ControlPersist: the first login opens it and is
     not timed).
Prints, per check, tune's promised change with its interval, and the median change plain ssh got (with its min-max
over rounds). Nothing of sshbench is in the timed path.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).parent.parent / "tests" / "jobs"))

from test_tune import shaped_host  # the tests' own shaped host, so both measure the same thing

from sshbench.payloads import text_block

CASES = (  # (name, link, CPU quota, payload)
    ("10 Mbit/s, 10 ms, text", "10mbit,10ms", None, "text"),
    ("loopback, server at 15 % of a CPU", None, 0.15, "zero"),
    ("loopback", None, None, "zero"),
)


def tune(config: Path, db: Path, payload: str) -> dict[str, Any]:
    """Run `sshbench tune testhost --direction down` and return its document."""
    argv = [
        sys.executable,
        "-m",
        "sshbench",
        "tune",
        "testhost",
        "--ssh-config",
        str(config),
        "--db",
        str(db),
        "--direction",
        "down",
        "--payload",
        payload,
        "--json",
    ]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 9):
        raise SystemExit(f"tune failed ({done.returncode}): {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout))


def promised(doc: dict[str, Any], group: str, pick: str) -> str:
    """Return the pasted remedy's gain in a group as tune printed it (`pick`: transfer, master or kex)."""
    for f in doc["tune"]["findings"]:
        if f["group"] != group:
            continue
        for r in f["remedies"]:
            sc, v = r["scenario"], r["verdict"]
            kind = "master" if sc.get("remedy") == "master" else "kex" if sc.get("kex") else "transfer"
            if kind == pick and r["helps"] and v and v["verdict"] == "faster":
                pct = [(v[k] - 1) * 100 for k in ("ratio", "low", "high")]
                return f"{' '.join(r['config'][:1])}: {pct[0]:+.0f} % ({pct[1]:+.0f} .. {pct[2]:+.0f})"
    return "nothing pasted"


def timed(argv: list[str]) -> float:
    """Return the seconds from spawn to exit of one plain ssh command (its output to /dev/null)."""
    start = time.perf_counter()
    subprocess.run(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, check=True, timeout=600
    )
    return time.perf_counter() - start


def alternate(before: list[str], after: list[str], rounds: int) -> tuple[float, float, float]:
    """Return the median, min and max of after/before seconds over rounds (order alternated)."""
    ratios = []
    for i in range(rounds):
        first, second = (before, after) if i % 2 == 0 else (after, before)
        a, b = timed(first), timed(second)
        t_before, t_after = (a, b) if i % 2 == 0 else (b, a)
        ratios.append(t_after / t_before)
    return statistics.median(ratios), min(ratios), max(ratios)


def configs(original: Path, lines: list[str], scratch: Path) -> tuple[Path, Path]:
    """Return two ssh_configs with the pasted lines in front of the alias: the transfer lines only, and all."""
    moved = [f"ControlPath {scratch}/cm-%C" if line.startswith("ControlPath ") else line for line in lines]
    transfer = [line for line in moved if not line.startswith("Control")]
    out = []
    for name, chosen in (("transfer", transfer), ("all", moved)):
        path = scratch / f"ssh_config.{name}"
        path.write_text("Host testhost\n" + "".join(f"  {line}\n" for line in chosen) + "\n" + original.read_text())
        out.append(path)
    return out[0], out[1]


def check(name: str, config: Path, doc: dict[str, Any], payload: str, rounds: int, scratch: Path) -> list[str]:
    """Time plain ssh before and after the pasted lines; return table rows."""
    lines = list(doc["tune"]["paste"]["ssh_config"])
    size = next(f["copy_bytes"] for f in doc["tune"]["findings"] if f["group"] == "download")
    transfer_cfg, all_cfg = configs(config, lines, scratch)
    if payload == "text":
        source = scratch / "text.bin"
        block = text_block()
        with source.open("wb") as f:
            for _ in range(size // len(block) + 1):
                f.write(block)
        command = f"head -c {size} {source}"
    else:
        command = f"head -c {size} /dev/zero"
    rows = [f"| {name} | pasted | {'; '.join(lines) or '-'} | | |"]
    med, low, high = alternate(
        ["ssh", "-F", str(config), "testhost", command], ["ssh", "-F", str(transfer_cfg), "testhost", command], rounds
    )
    rows.append(
        f"| {name} | download of {size / 1e6:.0f} MB ({payload}), fresh login | "
        f"{promised(doc, 'download', 'transfer')} | {(1 / med - 1) * 100:+.0f} % | "
        f"{(1 / high - 1) * 100:+.0f} .. {(1 / low - 1) * 100:+.0f} % |"
    )
    if any(line.startswith("ControlMaster") for line in lines):
        subprocess.run(["ssh", "-F", str(all_cfg), "testhost", "true"], check=True, timeout=60)  # opens the master
        med, low, high = alternate(
            ["ssh", "-F", str(config), "testhost", "true"], ["ssh", "-F", str(all_cfg), "testhost", "true"], rounds
        )
        subprocess.run(["ssh", "-F", str(all_cfg), "-O", "exit", "testhost"], capture_output=True, check=False)
        rows.append(
            f"| {name} | `ssh testhost true` | {promised(doc, 'latency', 'master')} | "
            f"{(med - 1) * 100:+.0f} % | {(low - 1) * 100:+.0f} .. {(high - 1) * 100:+.0f} % |"
        )
    return rows


def main() -> None:
    """Run every case; print the table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", default="", help="run only the cases whose name starts with this")
    args = parser.parse_args()
    rows: list[str] = []
    with tempfile.TemporaryDirectory(prefix="sbbench-") as tmp:
        for i, (name, link, quota, payload) in enumerate(CASES):
            if not name.startswith(args.only):
                continue
            case = Path(tmp) / str(i)
            case.mkdir()
            os.chmod(case, 0o755)
            with shaped_host(case, link, cpu_share=quota) as config:
                doc = tune(config, Path(tmp) / "runs.db", payload)
                rows += check(name, config, doc, payload, args.rounds, case)
            print(f"{name}: done", file=sys.stderr, flush=True)
    print("| case | plain ssh | tune's promise (95 % interval) | change plain ssh got (median) | min .. max |")
    print("|---|---|---|---:|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
