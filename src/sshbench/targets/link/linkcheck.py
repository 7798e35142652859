"""Verify an emulated link before anything is measured across it: RTT and rate within 10 % of what was asked.

- RTT: the median TCP connect time (SYN to SYN-ACK: one round trip) to a listener inside the namespace.
  On a delay line the one-way delay is first calibrated against it (its own processing adds ~0.25 ms per
  round trip, docs/BENCHMARKS.md).
- Rate: plaintext TCP with socat, one direction at a time, with enough parallel streams to fill the
  bandwidth-delay product (one TCP stream's buffers cannot on a long fat link). The rate is read from the
  client end's device counters (bytes the link carried) over the best window once TCP has ramped up.
  Loss is switched on only after this check.

A link that misses is refused with the numbers: sshbench does not measure across a link it cannot vouch for.
"""

from __future__ import annotations

import contextlib
import math
import socket
import statistics
import time
from collections.abc import Iterator
from pathlib import Path

from sshbench.errors import ExitCode, SshbenchError
from sshbench.ssh.proc import require_binary
from sshbench.targets.helpers import processes
from sshbench.targets.link.links import LinkCheck, LinkSpec, fmt_rate, fmt_rtt
from sshbench.targets.link.netns import EmulatedLink

SINK_PORT, SOURCE_PORT = 5201, 5202  # inside our own namespace: nothing else listens there
TOLERANCE = 0.10
RTT_FLOOR = 30e-6  # connect times on an idle machine are not finer than this
CONNECTS = 31  # at most: a sub-ms connect time jitters by ~0.05 ms, so its median needs many
FEWEST_CONNECTS = 9  # at a long RTT that jitter is a small part of it: ~0.25 s of connects suffice
POLL = 0.05
CALIBRATIONS = 6
DAMPING = 0.7  # of each correction: single medians of sub-ms connect times jitter by ~0.05 ms
# each correction is checked with more connects than the last (2, 2, 3, 3, 4, 4 times the count): on a busy
# machine a median of 31 sub-ms connects jumps by 0.05-0.1 ms now and then, and chasing it never settles


def connect_rtt(address: str, port: int, count: int = CONNECTS) -> float:
    """Return the median time of `count` TCP connects (one round trip each)."""
    times = []
    for _ in range(count):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.settimeout(5)
            start = time.perf_counter()
            s.connect((address, port))
            times.append(time.perf_counter() - start)
        time.sleep(0.002)
    return statistics.median(times)


def connects_for(rtt: float) -> int:
    """Return how many connects measure an RTT of `rtt` seconds: all of CONNECTS up to 8 ms, fewer beyond."""
    return CONNECTS if rtt <= 0 else max(FEWEST_CONNECTS, min(CONNECTS, round(0.25 / rtt)))


@contextlib.contextmanager
def listeners(link: EmulatedLink) -> Iterator[str]:
    """Run a plaintext sink and source inside the namespace for as long as the block runs; yield socat's path."""
    socat = require_binary("socat", "socat")
    address = link.server_address
    sink = [socat, "-u", f"TCP-LISTEN:{SINK_PORT},bind={address},reuseaddr,fork", "OPEN:/dev/null"]
    source = [socat, "-u", "OPEN:/dev/zero", f"TCP-LISTEN:{SOURCE_PORT},bind={address},reuseaddr,fork"]
    failure = SshbenchError(
        f"the link check's socat listeners on {address} did not start",
        place="--link",
        fix="check that socat is installed (package socat) and runs as root",
        code=ExitCode.USAGE,
    )
    with processes.serving([sink, source], link, address, (SINK_PORT, SOURCE_PORT), failure):
        yield socat


def rtt_missed(measured: float, asked: float, share: float = TOLERANCE) -> bool:
    """Return whether a measured RTT is further from the asked one than `share` of it (or the floor)."""
    return asked > 0 and abs(measured - asked) > max(share * asked, RTT_FLOOR)


def calibrate(link: EmulatedLink) -> float:
    """Bring the measured RTT to the asked one (delay line: adjust its delay from where it is); return the last
    measurement."""
    asked = link.spec.rtt
    count = connects_for(asked)
    measured = connect_rtt(link.server_address, SINK_PORT, count)
    if link.delay_line is None:
        return measured
    delay = asked / 2 if link.one_way is None else link.one_way
    for attempt in range(CALIBRATIONS):
        if not rtt_missed(measured, asked, TOLERANCE / 2):
            break
        delay = max(0.0, delay + DAMPING * (asked - measured) / 2)
        link.set_delay(delay)
        time.sleep(0.05)
        measured = connect_rtt(link.server_address, SINK_PORT, count * (2 + attempt // 2))
    return measured


def _counter(device: str, name: str) -> int:
    """Return one byte counter of a network device of this process's namespace (/proc/net/dev: /sys/class/net
    shows the namespace sysfs was mounted in, not a normal user's own)."""
    for line in Path("/proc/net/dev").read_text().splitlines():
        dev, colon, fields = line.partition(":")
        if colon and dev.strip() == device:
            return int(fields.split()[0 if name == "rx_bytes" else 8])
    raise KeyError(f"no device {device} in /proc/net/dev")


def streams_for(link: EmulatedLink) -> int:
    """Return how many parallel TCP streams fill this link (each holds a few MB in flight at most)."""
    return min(16, max(2, math.ceil(link.spec.bdp / 2**20) + 1))


def measure_rates(link: EmulatedLink, socat: str) -> tuple[float, float, int]:
    """Return (up, down) bytes/s carried by the link with plaintext TCP, one direction at a time, and the streams.
    A direction that misses is measured once more: parallel TCP streams on a long fat link sometimes lose
    packets together and take seconds to recover."""
    address, streams = link.server_address, streams_for(link)
    up = [socat, "-u", "OPEN:/dev/zero", f"TCP:{address}:{SINK_PORT}"]
    down = [socat, "-u", f"TCP:{address}:{SOURCE_PORT}", "OPEN:/dev/null"]
    rates = []
    for argv, counter in ((up, "tx_bytes"), (down, "rx_bytes")):
        rate = _rate(link, argv, streams, counter)
        if abs(rate - link.spec.rate_bytes) > TOLERANCE * link.spec.rate_bytes:
            rate = max(rate, _rate(link, argv, streams, counter))
        rates.append(rate)
    return rates[0], rates[1], streams


def _rate(link: EmulatedLink, argv: list[str], streams: int, counter: str) -> float:
    """Run `streams` copies of a plaintext transfer; return the best windowed rate of the client end's counter."""
    window = max(0.5, 4 * link.spec.rtt)
    longest, enough = min(15.0, 3 + 60 * link.spec.rtt), 1.5 + 10 * link.spec.rtt
    marks: list[tuple[float, int]] = []
    procs = [processes.spawn(argv) for _ in range(streams)]
    best = 0.0
    try:
        start = time.monotonic()
        while (now := time.monotonic()) - start < longest:
            marks.append((now, _counter(link.client_dev, counter)))
            best = _best_window(marks, window)
            if now - start >= enough and best >= (1 - TOLERANCE / 2) * link.spec.rate_bytes:
                break
            time.sleep(POLL)
    finally:
        processes.stop(procs)
    return best


def _best_window(marks: list[tuple[float, int]], window: float) -> float:
    """Return the highest rate over any stretch of about `window` seconds of the counter marks."""
    best, first = 0.0, 0
    for last in range(len(marks)):
        while marks[last][0] - marks[first][0] > window:
            first += 1
        span = marks[last][0] - marks[first][0]
        if span >= window * 0.9:
            best = max(best, (marks[last][1] - marks[first][1]) / span)
    return best


def verify(link: EmulatedLink) -> LinkCheck:
    """Measure the link's RTT and rate; fail with the numbers when either is more than 10 % off.
    An RTT that misses is calibrated once more, as a rate that misses is measured once more: a delay line's
    sub-ms RTT moves with the machine's load, and one unlucky stretch is not the link."""
    with listeners(link) as socat:
        rtt = calibrate(link)
        if rtt_missed(rtt, link.spec.rtt) and link.delay_line is not None:
            rtt = calibrate(link)
        up, down, streams = measure_rates(link, socat)
    spec, problems = link.spec, []
    if rtt_missed(rtt, spec.rtt):
        problems.append(f"RTT {fmt_rtt(rtt)} for {fmt_rtt(spec.rtt)} asked")
    for name, rate in (("upload", up), ("download", down)):
        if abs(rate - spec.rate_bytes) > TOLERANCE * spec.rate_bytes:
            problems.append(f"{name} {fmt_rate(rate * 8)} for {fmt_rate(spec.rate)} asked")
    if problems:
        raise SshbenchError(
            f"the emulated link is not what was asked: {'; '.join(problems)} (checked with {streams} plaintext "
            "TCP streams each way and TCP connect times)",
            place=f"--link {spec.name} ({link.method})",
            fix="ask for a slower rate or a longer RTT (this machine's delay line adds ~0.25 ms and carries about "
            "1 Gbit/s), or retry on a quieter machine",
            code=ExitCode.USAGE,
        )
    return LinkCheck(rtt=rtt, up=up, down=down, streams=streams)


@contextlib.contextmanager
def verified(spec: LinkSpec) -> Iterator[EmulatedLink]:
    """Build an emulated link, verify it (or fail with the numbers), then switch its loss on; remove it after."""
    with EmulatedLink(spec) as link:
        link.checked(verify(link))
        yield link
