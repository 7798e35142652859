"""Ready-to-paste configuration: an ssh_config `Host` block and sshd_config lines for one recommendation."""

from __future__ import annotations

import re

from sshbench.analyse.sweep import Choice, Gain
from sshbench.model import is_local
from sshbench.records import RunRecord

ORDER = ("Ciphers", "MACs", "KexAlgorithms", "HostKeyAlgorithms")
_HOST = re.compile(r"^[A-Za-z0-9_.*?!%@\[\]:-]{1,255}$")


def valid_host(host: str) -> bool:
    """Return True for a Host pattern that is safe to write into ssh_config."""
    return bool(_HOST.match(host))


def host_for(run: RunRecord) -> str:
    """Return the Host pattern for snippets: the remote target, or a placeholder for an embedded server."""
    if is_local(run.target) or not valid_host(run.target):
        return "your-server"
    return run.target


def gain_text(g: Gain | None, unit: str) -> str:
    """Describe a gain with its conservative interval."""
    if g is None:
        return f"{unit}: no baseline measured"
    interval = f"conservative interval {g.low:+.0f} % .. {g.high:+.0f} %"
    if g.low <= 0 <= g.high:
        return f"{unit}: no significant change vs {g.baseline} ({interval})"
    return f"{unit}: {g.percent:+.0f} % vs {g.baseline} ({interval})"


def _header(choice: Choice, source: str) -> list[str]:
    """Return comment lines: what this is and what it is expected to gain."""
    lines = [f"# sshbench: {choice.title} - {source}"]
    if choice.rate is not None:
        flag = " (predicted, not measured together)" if choice.predicted else ""
        lines.append(f"# throughput both ways {choice.rate.median:.0f} MB/s{flag}; {gain_text(choice.gain, 'gain')}")
    if choice.latency is not None:
        lines.append(
            f"# connection {choice.latency.median * 1000:.0f} ms; {gain_text(choice.latency_gain, 'handshake')}"
        )
    return lines


def ssh_config(choice: Choice, host: str, source: str) -> str:
    """Return an ssh_config Host block: the client's order decides, so the fastest comes first."""
    if not valid_host(host):
        raise ValueError(f"unsafe Host pattern {host!r}")
    body = [f"    {key} {','.join(choice.lists[key])}" for key in ORDER if choice.lists.get(key)]
    return "\n".join([*_header(choice, source), f"Host {host}", *body]) + "\n"


def sshd_config(choice: Choice, source: str) -> str:
    """Return sshd_config lines: a server can only allow, so these restrict it to the chosen algorithms."""
    lines = [
        *_header(choice, source),
        "# server side: the client's preference order decides; these lines allow only the algorithms listed",
    ]
    lines += [f"{key} {','.join(choice.lists[key])}" for key in ORDER if choice.lists.get(key)]
    return "\n".join(lines) + "\n"
