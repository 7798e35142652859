"""What an emulated link is: `--link RATE,RTT[,LOSS]` or a named preset, parsed and described.

RATE is tc's spelling (`100mbit`, `1gbit`, `512kbit`), RTT the round trip (`0.3ms`, `20ms`, `1s`; half of
it each way), LOSS a percentage of packets dropped each way (`0.1%`). Presets name the links the published
benchmarks ran on. `netns.py` builds the link, `linkcheck.py` verifies it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sshbench.errors import ExitCode, SshbenchError

PRESETS: dict[str, tuple[str, str]] = {
    "gbe": ("1gbit,0.5ms", "gigabit Ethernet between two hosts on one switch"),
    "fast-ethernet": ("100mbit,0.5ms", "100 Mbit Ethernet (a Raspberry Pi 3's port)"),
    "wan": ("100mbit,20ms", "a 100 Mbit line to another city"),
    "lte": ("30mbit,50ms,0.1%", "a mobile link"),
    "long-fat": ("1gbit,100ms", "a gigabit path across an ocean: OpenSSH's 2 MiB window caps it at ~21 MB/s"),
}
_RATE = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(kbit|mbit|gbit)$")
_RTT = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(us|ms|s)$")
_LOSS = re.compile(r"^([0-9]+(?:\.[0-9]+)?)%$")
_RATE_UNITS = {"kbit": 1e3, "mbit": 1e6, "gbit": 1e9}
_RTT_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0}
MIN_RATE, MAX_RATE = 1e6, 2e9  # bits/s this machine's delay line and tbf emulate faithfully
MAX_RTT, MAX_LOSS = 2.0, 0.1


@dataclass(frozen=True)
class LinkSpec:
    """An emulated link: rate in bits/s each way, round-trip time in seconds, loss probability each way."""

    rate: float
    rtt: float
    loss: float = 0.0
    name: str = ""  # the preset, or the text given

    @property
    def rate_bytes(self) -> float:
        """Return the rate in bytes/s."""
        return self.rate / 8

    @property
    def bdp(self) -> float:
        """Return the bandwidth-delay product in bytes (what must be in flight to fill the link)."""
        return self.rate_bytes * self.rtt

    def describe(self) -> str:
        """Return e.g. `100 Mbit/s, 20 ms RTT, 0.1 % loss (wan)`."""
        loss = f", {self.loss * 100:g} % loss" if self.loss else ""
        named = f" ({self.name})" if self.name in PRESETS else ""
        return f"{fmt_rate(self.rate)}, {fmt_rtt(self.rtt)} RTT{loss}{named}"


def fmt_rate(bits: float) -> str:
    """Return a rate in bits/s as `100 Mbit/s` or `1 Gbit/s`."""
    for unit, scale in (("Gbit/s", 1e9), ("Mbit/s", 1e6)):
        if bits >= scale:
            return f"{bits / scale:g} {unit}"
    return f"{bits / 1e3:g} kbit/s"


def fmt_rtt(seconds: float) -> str:
    """Return a round-trip time as `20 ms` or `0.3 ms`."""
    return f"{seconds * 1e3:.3g} ms"


def _bad(text: str, why: str) -> SshbenchError:
    """Return the usage error for a link that cannot be parsed."""
    presets = ", ".join(PRESETS)
    return SshbenchError(
        f"bad link {text!r}: {why}",
        place="--link",
        fix=f"give RATE,RTT[,LOSS] such as 100mbit,20ms or 50mbit,80ms,0.1%, or a preset: {presets}",
        code=ExitCode.USAGE,
    )


def parse(text: str) -> LinkSpec:
    """Parse a preset name or RATE,RTT[,LOSS]; fail naming what is wrong and the accepted forms."""
    name = text.strip().lower()
    spec = PRESETS[name][0] if name in PRESETS else name
    parts = spec.split(",")
    if len(parts) not in (2, 3):
        raise _bad(text, "expected a preset or RATE,RTT[,LOSS]")
    rate_m, rtt_m = _RATE.match(parts[0].strip()), _RTT.match(parts[1].strip())
    if rate_m is None:
        raise _bad(text, f"rate {parts[0]!r} is not like 100mbit or 1gbit")
    if rtt_m is None:
        raise _bad(text, f"round-trip time {parts[1]!r} is not like 20ms or 0.3ms")
    rate = float(rate_m.group(1)) * _RATE_UNITS[rate_m.group(2)]
    rtt = float(rtt_m.group(1)) * _RTT_UNITS[rtt_m.group(2)]
    loss = 0.0
    if len(parts) == 3:
        loss_m = _LOSS.match(parts[2].strip())
        if loss_m is None:
            raise _bad(text, f"loss {parts[2]!r} is not a percentage like 0.1%")
        loss = float(loss_m.group(1)) / 100
    if not MIN_RATE <= rate <= MAX_RATE:
        raise _bad(text, f"rate {fmt_rate(rate)} is outside {fmt_rate(MIN_RATE)}..{fmt_rate(MAX_RATE)}")
    if rtt > MAX_RTT:
        raise _bad(text, f"round-trip time {fmt_rtt(rtt)} is above {fmt_rtt(MAX_RTT)}")
    if loss > MAX_LOSS:
        raise _bad(text, f"loss {loss * 100:g} % is above {MAX_LOSS * 100:g} %")
    return LinkSpec(rate=rate, rtt=rtt, loss=loss, name=name)


def sample_seconds(spec: LinkSpec, default: float) -> float:
    """Return how long a throughput sample should last on this link: long enough to leave TCP's ramp behind."""
    return max(default, 1.0 + 20 * spec.rtt)


@dataclass(frozen=True)
class LinkCheck:
    """What the link measured before use."""

    rtt: float  # seconds
    up: float  # bytes/s client -> server
    down: float  # bytes/s server -> client
    streams: int
