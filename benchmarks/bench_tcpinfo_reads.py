"""Benchmark: what one reading of a transfer's socket costs in CPU (issues 24 and 40): a sock_diag dump of the
namespace, a read of one socket by its sockid or by its four-tuple, the scan of our processes' sockets that tells
ours apart, borrowing a child's socket (pidfd_getfd) and reading TCP_INFO on the copy, and spawning `ss -tin` (what a
remote session does, and what the reader replaces here).

Run:  .venv/bin/python benchmarks/bench_tcpinfo_reads.py [--reads 500]

Each is repeated `--reads` times against one established loopback connection; CPU is this process's thread time
(the children's for `ss`, from wait4), medians of 5 batches.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from sshbench.measure import grab, sockdiag, witness


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
        diag = sockdiag.diag_socket()
        (known,) = [r for r in sockdiag.read(diag, port) if r.peer_port == port]
        hold = f"import socket, time; s = socket.create_connection(('127.0.0.1', {port})); time.sleep(600)"
        child = subprocess.Popen([sys.executable, "-c", hold])
        server.accept()
        time.sleep(0.5)
        borrowed = grab.borrow(child.pid, port)
        assert borrowed is not None, "the kernel refused pidfd_getfd"
        asked = sockdiag.tuple_request(borrowed.family, borrowed.sockid())
        rows = {
            "sock_diag dump (both address families)": lambda: sockdiag.read(diag, port),
            "one socket by its sockid": lambda: sockdiag.read_one(diag, known),
            "one socket by its four-tuple": lambda: sockdiag.read_tuple(diag, asked),
            "scan of our processes' sockets": lambda: grab.socket_inodes(witness.our_processes()),
            "borrowing a child's socket (pidfd_getfd), once a sample": lambda: _borrow_once(child.pid, port),
            "TCP_INFO on the borrowed copy, parsed": lambda: sockdiag.tcp_info(borrowed.info() or b""),
        }
        print("| reading | CPU ms per reading (median of 5 batches) |")
        print("|---|---:|")
        for name, once in rows.items():
            print(f"| {name} | {statistics.median(batch(args.reads, once) for _ in range(5)):.3f} |")
        spawned = [statistics.mean(spawn_ss(port) for _ in range(args.reads // 10)) for _ in range(5)]
        print(f"| spawning `ss -tinH` | {statistics.median(spawned):.3f} |")
        accepted.close()
        diag.close()
        borrowed.close()
        child.kill()
        child.wait()


def _borrow_once(pid: int, port: int) -> None:
    """Borrow a process's socket to the port and let it go."""
    found = grab.borrow(pid, port)
    if found is not None:
        found.close()


if __name__ == "__main__":
    main()
