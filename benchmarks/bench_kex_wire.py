"""Benchmark: the key exchange's bytes sshbench stores (its counting relay, measure/wire.py) against a tcpdump
capture of the same run's logins.

Run (root: tcpdump captures on lo; `apt-get install tcpdump`; OpenSSH 10 from scripts/openssh10):
    .venv/bin/python benchmarks/bench_kex_wire.py [--prefix ~/.cache/sshbench/openssh-10] [--rounds 5]

One `sshbench latency` run of mlkem768x25519, sntrup761x25519 and curve25519 against the embedded OpenSSH 10 with
its own client, while tcpdump writes every TCP segment on lo to a file. Each captured connection is reassembled
from its sequence numbers and walked here with a parser of its own (not sshbench's): its kex is the first name of
the client's KEXINIT, its bytes each way are the TCP payload up to and including each side's NEWKEYS. The relay's
stored count (one warm-up login per row, through ssh's ProxyCommand) is set against every captured login of the same
kex: the timed ones (ssh straight to sshd) and the counted one (the relay's own socket to sshd).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

KEXES = ("mlkem768x25519-sha256", "sntrup761x25519-sha512", "curve25519-sha256")
Flow = tuple[str, int, str, int]  # source address, port, destination address, port


def segments(pcap: Path) -> list[tuple[Flow, int, int, bytes]]:
    """Return (flow, flags, seq, payload) of every IPv4 TCP segment of a classic pcap file (Ethernet or raw)."""
    data = pcap.read_bytes()
    magic, _, _, _, _, _, linktype = struct.unpack("<IHHiIII", data[:24])
    assert magic == 0xA1B2C3D4, "a little-endian microsecond pcap was expected"
    link = {1: 14, 101: 0}[linktype]  # Ethernet (tcpdump -i lo) or raw IP
    out, at = [], 24
    while at + 16 <= len(data):
        _, _, caplen, _ = struct.unpack("<IIII", data[at : at + 16])
        frame = data[at + 16 : at + 16 + caplen]
        at += 16 + caplen
        ip = frame[link:]
        if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 6:
            continue
        ihl, total = (ip[0] & 15) * 4, struct.unpack(">H", ip[2:4])[0]
        tcp = ip[ihl:total]
        sport, dport, seq = struct.unpack(">HHI", tcp[:8])
        offset, flags = (tcp[12] >> 4) * 4, tcp[13]
        src, dst = ".".join(map(str, ip[12:16])), ".".join(map(str, ip[16:20]))
        out.append(((src, sport, dst, dport), flags, seq, tcp[offset:]))
    return out


def streams(segs: list[tuple[Flow, int, int, bytes]]) -> tuple[dict[Flow, bytes], set[Flow]]:
    """Return each direction's bytes in sequence order, from its SYN's sequence number (duplicates dropped), and the
    directions that opened their connection (a SYN without ACK: client to server)."""
    start: dict[Flow, int] = {}
    clients: set[Flow] = set()
    parts: dict[Flow, dict[int, bytes]] = defaultdict(dict)
    for flow, flags, seq, payload in segs:
        if flags & 0x02:  # SYN
            start[flow] = seq + 1
            if not flags & 0x10:
                clients.add(flow)
        elif payload:
            parts[flow][seq] = payload
    out = {}
    for flow, first in start.items():
        buf = bytearray()
        for rel, chunk in sorted(((seq - first) % 2**32, chunk) for seq, chunk in parts[flow].items()):
            if rel > len(buf):
                break  # a gap: nothing after it is in order
            buf += chunk[len(buf) - rel :]
        out[flow] = bytes(buf)
    return out, clients


def to_newkeys(stream: bytes) -> tuple[int, bytes] | None:
    """Return the bytes up to and including NEWKEYS (21) and the first KEXINIT's payload, or None."""
    at = stream.find(b"SSH-")
    if at < 0:
        return None
    at = stream.index(b"\n", at) + 1
    kexinit = b""
    while at + 6 <= len(stream):
        length = struct.unpack(">I", stream[at : at + 4])[0]
        payload = stream[at + 5 : at + 4 + length]
        at += 4 + length
        if payload[:1] == b"\x14" and not kexinit:
            kexinit = payload
        if payload[:1] == b"\x15":
            return at, kexinit
    return None


def pinned_kex(kexinit: bytes) -> str | None:
    """Return the one kex a client's KEXINIT offers (besides the ext-info and strict-kex markers), or None when it
    offers several (sshbench's discovery logins, not the measured ones)."""
    n = struct.unpack(">I", kexinit[17:21])[0]
    names = [k for k in kexinit[21 : 21 + n].decode().split(",") if not k.startswith(("ext-info-", "kex-strict-"))]
    return names[0] if len(names) == 1 else None


def captured(pcap: Path, banner: bytes) -> tuple[dict[str, list[tuple[int, int]]], int]:
    """Return per kex the (client to server, server to client) bytes to NEWKEYS of the captured logins to the server
    whose version line starts with `banner` that offered that kex alone with the same proposal as most of them (the
    measured ones; sshbench's discovery logins offer several, or fewer ciphers for the strict profile), and how many
    other logins were left out."""
    by, clients = streams(segments(pcap))
    groups: dict[tuple[str, bytes], list[tuple[int, int]]] = defaultdict(list)
    left = 0
    for src, sport, dst, dport in clients:
        c2s, s2c = by.get((src, sport, dst, dport), b""), by.get((dst, dport, src, sport), b"")
        if not s2c.startswith(banner):
            continue
        up, down = to_newkeys(c2s), to_newkeys(s2c)
        kex = pinned_kex(up[1]) if up and up[1] else None
        if up and down and kex:
            groups[(kex, up[1][17:])].append((up[0], down[0]))  # the proposal without its random cookie
        else:
            left += 1
    out: dict[str, list[tuple[int, int]]] = {}
    for (kex, _), logins in sorted(groups.items(), key=lambda g: -len(g[1])):
        if kex in out:
            left += len(logins)
        else:
            out[kex] = logins
    return out, left


def main() -> None:
    """Run the benchmark and print its table."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prefix", type=Path, default=cache / "sshbench" / "openssh-10")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    sshd, ssh = args.prefix / "usr/sbin/sshd", args.prefix / "usr/bin/ssh"
    with tempfile.TemporaryDirectory(prefix="sshbench-kexwire-") as tmp:
        pcap = Path(tmp) / "lo.pcap"
        dump = subprocess.Popen(
            ["tcpdump", "-i", "lo", "-U", "-s", "0", "-w", str(pcap), "tcp"],
            stderr=subprocess.PIPE,
            text=True,
        )
        assert dump.stderr is not None
        dump.stderr.readline()  # "listening on lo ...": capturing from here
        run = [sys.executable, "-m", "sshbench", "latency", f"local:sshd={sshd}", "--ssh", str(ssh)]
        run += ["--kex", ",".join(KEXES), "--hostkey", "ssh-ed25519", "--json", "--db", f"{tmp}/runs.db"]
        run += ["--rounds", str(args.rounds), "--max-rounds", str(args.rounds), "--no-race"]
        done = subprocess.run(run, capture_output=True, text=True, check=False)
        time.sleep(0.5)
        os.kill(dump.pid, signal.SIGINT)  # our own tcpdump, by its PID
        dump.wait(timeout=10)
        if done.returncode != 0:
            sys.exit(done.stderr)
        doc = json.loads(done.stdout)
        wire = {st["scenario"]["kex"]: s["wire"] for st in doc["samples"] for s in st["samples"] if s.get("wire")}
        seen, left = captured(pcap, doc["discovery"]["server"]["banner"].encode())
    print(
        "| kex | stored by the relay (out/in B) | tcpdump: logins | tcpdump out/in B (min-max) | largest difference |"
    )
    print("|---|---:|---:|---:|---:|")
    for kex in KEXES:
        w, logins = wire[kex], seen.get(kex, [])
        outs, ins = [u for u, _ in logins], [d for _, d in logins]
        worst = max((max(abs(u - w["kex_sent"]), abs(d - w["kex_received"])) for u, d in logins), default=None)
        print(
            f"| {kex} | {w['kex_sent']}/{w['kex_received']} | {len(logins)} | "
            f"{min(outs)}-{max(outs)}/{min(ins)}-{max(ins)} | {worst} B |"
        )
    print(f"\n{left} other captured logins (discovery and probes, with other proposals): left out")


if __name__ == "__main__":
    main()
