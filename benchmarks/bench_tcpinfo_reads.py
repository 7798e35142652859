"""Benchmark: what one reading of a transfer's socket costs in CPU (issue 24): a sock_diag dump of the namespace,
a read of one socket by its sockid, the scan of our processes' sockets that tells ours apart, and spawning `ss -tin`
(what a remote session does, and what the reader replaces here).

Run:  .venv/bin/python benchmarks/bench_tcpinfo_reads.py [--reads 500]

Each is repeated `--reads` times against one established loopback connection; CPU is this process's thread time
(the children's for `ss`, from wait4), medians of 5 batches.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import time
from collections.abc import Callable

from sshbench.measure import tcpinfo, witness


def batch(reads: int, once: Callable[[], object]) -> float:
    """Return the thread CPU milliseconds per call of `once` over `reads` calls."""
    start = time.thread_time()
    for _ in range(reads):
        once()
    return (time.thread_time() - start) / reads * 1e3


def spawn_ss(port: int) -> float:
    """Return the CPU milliseconds (user + system, from wait4) of one `ss -tinH` for the port."""
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.execvp("ss", ["ss", "-tinH", "state", "established", f"( sport = :{port} )"])
    _, _, usage = os.wait4(pid, 0)
    return (usage.ru_utime + usage.ru_stime) * 1e3


def main() -> None:
    """Print the median CPU per reading of each kind."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--reads", type=int, default=500)
    args = parser.parse_args()
    with socket.create_server(("127.0.0.1", 0)) as server, socket.create_connection(server.getsockname()):
        accepted, _ = server.accept()
        port = server.getsockname()[1]
        diag = tcpinfo.diag_socket()
        (known,) = [r for r in tcpinfo.read(diag, port) if r.peer_port == port]
        rows = {
            "sock_diag dump (both address families)": lambda: tcpinfo.read(diag, port),
            "one socket by its sockid": lambda: tcpinfo.read_one(diag, known),
            "scan of our processes' sockets": lambda: tcpinfo.socket_inodes(witness.our_processes()),
        }
        print("| reading | CPU ms per reading (median of 5 batches) |")
        print("|---|---:|")
        for name, once in rows.items():
            print(f"| {name} | {statistics.median(batch(args.reads, once) for _ in range(5)):.3f} |")
        spawned = [statistics.mean(spawn_ss(port) for _ in range(args.reads // 10)) for _ in range(5)]
        print(f"| spawning `ss -tinH` | {statistics.median(spawned):.3f} |")
        accepted.close()
        diag.close()


if __name__ == "__main__":
    main()
