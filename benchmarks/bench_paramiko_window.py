"""Benchmark: why paramiko's larger window (sshbench's `clients` second setting) makes downloads slower.

Run:  .venv/bin/python benchmarks/bench_paramiko_window.py [--reps 5] [--size 256M]

paramiko's Channel.recv takes each read off the front of a buffer (BufferedPipe) that holds everything received
and not yet read, up to the channel window. Once the reader falls behind (here: it hands each read to a `cat`
process, as the driver hands it to stdout), a 64 MiB window lets that backlog grow to 64 MiB, and every 64 KiB
read copies what is left. One embedded OpenSSH server; `head -c SIZE /dev/zero` read over aes128-gcm with
paramiko's defaults, the 64 MiB window alone, the 256 KiB packets alone, both (the `clients` setting), and both
with 4 MiB reads; the settings alternate round by round. Medians (MB/s) are printed as a Markdown table.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time
from typing import Any

import paramiko

from sshbench.cli.options import parse_size
from sshbench.targets.servers.openssh import OpenSSHServer

CIPHER = "aes128-gcm@openssh.com"
WINDOW, PACKET, BIG_READ, READ = 64 * 2**20, 2**18, 4 * 2**20, 2**16
SETTINGS: dict[str, tuple[dict[str, int], int]] = {
    "defaults (2 MiB window, 32 KiB packets), 64 KiB reads": ({}, READ),
    "64 MiB window, 64 KiB reads": ({"default_window_size": WINDOW}, READ),
    "256 KiB packets, 64 KiB reads": ({"default_max_packet_size": PACKET}, READ),
    "both (sshbench's second setting), 64 KiB reads": (
        {"default_window_size": WINDOW, "default_max_packet_size": PACKET},
        READ,
    ),
    "both, 4 MiB reads": ({"default_window_size": WINDOW, "default_max_packet_size": PACKET}, BIG_READ),
}


def connect(server: OpenSSHServer, transport: dict[str, int]) -> paramiko.SSHClient:
    """Connect to the embedded server with these Transport settings, the cipher pinned."""
    assert server.workdir is not None
    client = paramiko.SSHClient()
    client.load_host_keys(str(server.workdir / "known_hosts"))
    client.set_missing_host_key_policy(paramiko.RejectPolicy())
    others = [c for c in paramiko.Transport._preferred_ciphers if c != CIPHER]
    extra: dict[str, Any] = {}
    if transport:
        extra["transport_factory"] = lambda sock, **kw: paramiko.Transport(sock, **transport, **kw)
    key = str(server.workdir / "client_ed25519")
    client.connect(
        "127.0.0.1",
        server.port,
        server.user,
        key_filename=key,
        look_for_keys=False,
        allow_agent=False,
        disabled_algorithms={"ciphers": others},
        **extra,
    )
    return client


def download(client: paramiko.SSHClient, size: int, read: int) -> float:
    """Read `size` bytes of a command's output in `read`-byte pieces, each handed to `cat`; return MB/s."""
    sink = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    assert sink.stdin is not None
    transport = client.get_transport()
    assert transport is not None
    channel = transport.open_session()
    channel.exec_command(f"head -c {size} /dev/zero")
    got, start = 0, time.monotonic()
    while data := channel.recv(read):
        got += len(data)
        sink.stdin.write(data)
    sink.stdin.close()
    sink.wait()
    assert got == size, f"read {got} of {size} bytes"
    return got / (time.monotonic() - start) / 1e6


def main() -> None:
    """Print MB/s medians per setting."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--size", default="256M")
    args = parser.parse_args()
    size = parse_size(args.size)
    assert size is not None
    rates: dict[str, list[float]] = {name: [] for name in SETTINGS}
    server = OpenSSHServer()
    with server:
        for rnd in range(args.reps + 1):  # the first round is a warm-up
            for name, (transport, read) in SETTINGS.items():
                client = connect(server, transport)
                try:
                    rate = download(client, size, read)
                finally:
                    client.close()
                if rnd:
                    rates[name].append(rate)
    base = statistics.median(rates[next(iter(SETTINGS))])
    print(f"| paramiko {paramiko.__version__}, {CIPHER}, {args.size} download | median MB/s | vs defaults | rounds |")
    print("|---|---:|---:|---|")
    for name, values in rates.items():
        median = statistics.median(values)
        print(f"| {name} | {median:.0f} | {median / base - 1:+.0%} | {', '.join(f'{v:.0f}' for v in values)} |")


if __name__ == "__main__":
    main()
