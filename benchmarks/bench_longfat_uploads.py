"""Benchmark: single uploads to OpenSSH and Dropbear behind the emulated long fat link (1 Gbit/s, 100 ms), one fresh
connection each, with the server socket's TCP state 3 s into each upload (root: the link needs it).

Run:  sudo .venv/bin/python benchmarks/bench_longfat_uploads.py [--sizes 4,16,4,32,16] [--server dropbear]

Prints, per upload: the server, its size (MiB), sshbench's steady rate (measure.throughput_sample, chacha20-poly1305,
server-timed), how long it took, and from `ss -tinm` inside the server's namespace at 3 s, for the socket that
is receiving: the bytes received so far, its receive buffer (rb) and `rcv_ssthresh` (the window it lets the
client fill).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from sshbench.measure.samplers import throughput_sample
from sshbench.model import Direction, Kind, Scenario
from sshbench.payloads import Payload
from sshbench.samples import Sample
from sshbench.ssh.destination import Target
from sshbench.targets.link import linkcheck, links
from sshbench.targets.link.netns import EmulatedLink
from sshbench.targets.servers.dropbear import DropbearServer
from sshbench.targets.servers.openssh import OpenSSHServer

FIELDS = ("bytes_received", "rb", "rcv_ssthresh")


def sockets(link: EmulatedLink) -> dict[str, dict[str, str]]:
    """Return each established socket in the server's namespace (by its address line): received bytes, receive
    buffer and rcv_ssthresh (ss -tinm)."""
    argv = link.wrap(["ss", "-tinmH", "state", "established"])
    lines = subprocess.run(argv, capture_output=True, text=True).stdout.splitlines()
    found = {}
    for head, info in zip(lines[::2], lines[1::2], strict=False):
        found[head.strip()] = {f: m.group(1) if (m := re.search(rf"\b{f}:?(\d+)", info)) else "?" for f in FIELDS}
    return found


def socket_state(link: EmulatedLink) -> dict[str, str]:
    """Return the state of the socket that is receiving now (bytes_received grows within 0.2 s): an earlier
    connection's socket may still be open."""
    first = sockets(link)
    time.sleep(0.2)
    second = sockets(link)
    growing = [v for k, v in second.items() if k in first and v["bytes_received"] != first[k]["bytes_received"]]
    return growing[0] if growing else dict.fromkeys(FIELDS, "?")


def main() -> None:
    """Print one line per upload."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="4,16,4,32,16", help="MiB per upload, comma-separated")
    parser.add_argument("--server", choices=("openssh", "dropbear", "both"), default="both")
    args = parser.parse_args()
    sc = Scenario(Kind.THROUGHPUT, cipher="chacha20-poly1305@openssh.com", direction=Direction.UP)
    print("| server | MiB | MB/s | seconds | at 3 s: received, rb, rcv_ssthresh |")
    print("|---|---:|---:|---:|---|")
    for name in ("openssh", "dropbear") if args.server == "both" else (args.server,):
        with linkcheck.verified(links.parse("long-fat")) as link:
            server = DropbearServer() if name == "dropbear" else OpenSSHServer()
            server.address = link.server_address
            server.wrappers.append(link.wrap)
            with server as target, tempfile.TemporaryDirectory(prefix="sshbench-bench-") as tmp:
                payload = Payload("zero", Path(tmp))
                for mib in (int(m) for m in args.sizes.split(",")):
                    value, seconds, state = timed_upload(target, sc, mib * 2**20, payload, link)
                    at3 = ", ".join(state[f] for f in FIELDS)
                    print(f"| {name} | {mib} | {value:.2f} | {seconds:.1f} | {at3} |", flush=True)


def timed_upload(
    target: Target, sc: Scenario, size: int, payload: Payload, link: EmulatedLink
) -> tuple[float, float, dict[str, str]]:
    """Upload once; return MB/s, seconds taken and the server socket's state 3 s in."""
    out: list[Sample] = []
    started = time.monotonic()
    worker = threading.Thread(target=lambda: out.append(throughput_sample("ssh", target, sc, size, payload, 1, False)))
    worker.start()
    worker.join(timeout=3)
    state = socket_state(link) if worker.is_alive() else dict.fromkeys(FIELDS, "done")
    worker.join()
    return out[0].value or 0.0, time.monotonic() - started, state


if __name__ == "__main__":
    main()
