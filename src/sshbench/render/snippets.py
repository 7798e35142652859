"""Ready-to-paste configuration: an ssh_config `Host` block and sshd_config lines for one recommendation."""

from __future__ import annotations

import re

from sshbench.analyse.recommend import Choice, gain_text
from sshbench.model import is_local
from sshbench.records import RunRecord
from sshbench.units import format_value

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


def _header(choice: Choice, source: str, conditions: str | None) -> list[str]:
    """Return comment lines: what this is, what it is expected to gain, and the conditions it was measured under."""
    lines = [f"# sshbench: {choice.title} - {source}"]
    if conditions:
        lines.append(f"# measured under {conditions}: these lines fit a host like that")
    if choice.rate is not None:
        flag = " (predicted, not measured together)" if choice.predicted else ""
        rate = f"{format_value('MB/s', choice.rate.median)} MB/s{flag}"
        lines.append(f"# throughput {choice.ways} {rate}; {gain_text(choice.gain, 'gain')}")
    if choice.latency is not None:
        lines.append(
            f"# connection {format_value('ms', choice.latency.median, '.0f')} ms; "
            f"{gain_text(choice.latency_gain, 'handshake')}"
        )
    return lines


def ssh_config(choice: Choice, host: str, source: str, conditions: str | None = None) -> str:
    """Return an ssh_config Host block: the client's order decides, so the fastest comes first."""
    if not valid_host(host):
        raise ValueError(f"unsafe Host pattern {host!r}")
    body = [f"    {key} {','.join(choice.lists[key])}" for key in ORDER if choice.lists.get(key)]
    return "\n".join([*_header(choice, source, conditions), f"Host {host}", *body]) + "\n"


def sshd_config(choice: Choice, source: str, conditions: str | None = None) -> str:
    """Return sshd_config lines: a server can only allow, so these restrict it to the chosen algorithms."""
    lines = [
        *_header(choice, source, conditions),
        "# server side: the client's preference order decides; these lines allow only the algorithms listed",
    ]
    lines += [f"{key} {','.join(choice.lists[key])}" for key in ORDER if choice.lists.get(key)]
    return "\n".join(lines) + "\n"
