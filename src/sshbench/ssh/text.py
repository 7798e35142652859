"""Pure parsers for what ssh prints: `ssh -Q`, `ssh -G`, and `ssh -v` debug lines."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from sshbench.discovery import Negotiated
from sshbench.model import PHASES
from sshbench.samples import SKIPPED

ALGORITHM_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9@._+-]{0,99}$")
_TRANSFERRED = re.compile(r"Transferred: sent (\d+), received (\d+) bytes")
_KEX = re.compile(r"kex: algorithm: (\S+)")
_HOSTKEY = re.compile(r"kex: host key algorithm: (\S+)")
_CIPHER = re.compile(r"kex: server->client cipher: (\S+) MAC: (\S+) compression: (\S+)")
_REMOTE_VERSION = re.compile(r"remote software version (.+)$")
_EXIT_STATUS = re.compile(r"Exit status (-?\d+)")
_PRE_BANNER = re.compile(r"kex_exchange_identification.*?banner line \d+: (.+)$")  # -v's or LogVerbose's
_WHERE_LOGGED = re.compile(r"^\S+\.c:\S+\(\):\d+ \(pid=\d+\): ")  # LogVerbose's `kex.c:f():1388 (pid=25039): `
CONNINFO_FIELDS = ("kexalgorithm", "hostkeyalgorithm", "cipher", "mac", "compression", "rekey", "traffic")

# Phase boundaries: each phase starts at the first line containing its marker.
PHASE_MARKERS = (
    ("tcp", "Connecting to "),
    ("version", "Connection established."),
    ("kex", "Remote protocol version"),
    ("auth", "SSH2_MSG_NEWKEYS received"),
    ("session", "Authenticated to "),
)


def parse_query(text: str) -> tuple[str, ...]:
    """Parse `ssh -Q KIND` output into algorithm names, in the client's order, without duplicates."""
    names: list[str] = []
    for line in text.splitlines():
        name = line.strip()
        if name and ALGORITHM_NAME.match(name) and name not in names:
            names.append(name)
    return tuple(names)


def parse_config_dump(text: str) -> dict[str, str]:
    """Parse `ssh -G` output (`keyword value` lines) into a dict; repeated keywords keep the first value."""
    options: dict[str, str] = {}
    for line in text.splitlines():
        keyword, _, value = line.strip().partition(" ")
        if keyword and keyword.lower() not in options:
            options[keyword.lower()] = value.strip()
    return options


def is_valid_algorithm(name: str) -> bool:
    """Return True when a name is shaped like an SSH algorithm name (safe to pass to ssh)."""
    return bool(ALGORITHM_NAME.match(name))


def parse_negotiated(lines: Iterable[str]) -> Negotiated:
    """Extract the negotiated kex, host key, server->client cipher and MAC from `ssh -v` lines."""
    kex = hostkey = cipher = mac = version = None
    for line in lines:
        if m := _KEX.search(line):
            kex = kex or m.group(1)
        elif m := _HOSTKEY.search(line):
            hostkey = hostkey or m.group(1)
        elif m := _CIPHER.search(line):
            cipher, mac = cipher or m.group(1), mac or m.group(2)
        elif m := _REMOTE_VERSION.search(line):
            version = version or m.group(1).strip()
    if mac == "<implicit>":
        mac = None
    return Negotiated(kex, hostkey, cipher, mac, version)


def parse_conninfo(text: str) -> dict[str, str]:
    """Parse `ssh -O conninfo` (OpenSSH 10.3+: a master connection's own account) into its fields by name (an AEAD
    cipher's MAC, `<implicit>`, as empty); empty when the text has none of them."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        name, _, value = line.strip().partition(" ")
        if name in CONNINFO_FIELDS and name not in found:
            found[name] = "" if value.strip() == "<implicit>" else value.strip()
    return found


def said_before_banner(lines: Iterable[str]) -> str | None:
    """Return the lines a server wrote before its banner (ssh logs them under -v or LogVerbose; OpenSSH 10.3 writes
    "Not allowed at this time" to a connection it drops), joined, or None."""
    said = [m.group(1).strip() for line in lines if (m := _PRE_BANNER.search(line))]
    return " / ".join(said) or None


def parse_transferred(lines: Iterable[str]) -> tuple[int, int] | None:
    """Return (sent, received) bytes from ssh's closing `Transferred:` line, if present."""
    for line in lines:
        if m := _TRANSFERRED.search(line):
            return int(m.group(1)), int(m.group(2))
    return None


def parse_exit_status(lines: Iterable[str]) -> int | None:
    """Return the remote command's exit status reported by `ssh -v`, if present."""
    for line in lines:
        if m := _EXIT_STATUS.search(line):
            return int(m.group(1))
    return None


def first_time(lines: Sequence[tuple[float, str]], marker: str) -> float | None:
    """Return the arrival time of the first line containing `marker`."""
    for t, text in lines:
        if marker in text:
            return t
    return None


def phase_breakdown(lines: Sequence[tuple[float, str]], start: float, end: float) -> tuple[tuple[str, float], ...]:
    """Split [start, end] into connection phases using timestamped `ssh -v` lines; () if a marker is missing."""
    bounds = [start]
    for _, marker in PHASE_MARKERS:
        t = first_time(lines, marker)
        if t is None or t < bounds[-1]:
            return ()
        bounds.append(t)
    bounds.append(end)
    if end < bounds[-2]:
        return ()
    return tuple((name, bounds[i + 1] - bounds[i]) for i, name in enumerate(PHASES))


def ssh_failure_reason(lines: Iterable[str]) -> str:
    """Return ssh's own words for a failure: the last non-debug line it printed."""
    reasons = [
        _WHERE_LOGGED.sub("", text.strip())
        for text in lines
        if text.strip()
        and not text.startswith(("debug", "OpenSSH_", "Transferred:", "Bytes per second", "Authenticated to"))
    ]
    return reasons[-1] if reasons else "ssh exited without saying why"


def ssh_failure(lines: Iterable[str], timed_out: bool, timeout: float) -> str:
    """Return why an ssh run failed: its own words, or that it was stopped after `timeout` seconds."""
    if timed_out:
        return (
            f"no answer within {timeout:g} s: the server stopped responding during the key exchange, login or "
            "command (stopped by sshbench)"
        )
    return ssh_failure_reason(lines)


HOST_KEY_FAILED = "Host key verification failed"
KEYSCAN_TYPES = (  # a host key algorithm's prefix -> its type for ssh-keyscan -t
    ("ssh-ed25519", "ed25519"),
    ("ecdsa-sha2-", "ecdsa"),
    ("rsa-sha2-", "rsa"),
    ("ssh-rsa", "rsa"),
    ("ssh-dss", "dsa"),
)


def host_key_missing(hostkey: str, host: str, port: int) -> str:
    """Return why a row pinned to a host key type your known_hosts lacks is skipped, with how to read that key's
    fingerprint (to compare with a trusted source before adding it: sshbench never adds a key)."""
    kind = next((t for prefix, t in KEYSCAN_TYPES if hostkey.startswith(prefix)), None)
    where = host if port == 22 else f"[{host}]:{port}"
    why = f"{SKIPPED}your known_hosts holds no {hostkey} key for {where} (sshbench never adds one)"
    if kind is None:
        return why
    scan = f"ssh-keyscan -t {kind}{'' if port == 22 else f' -p {port}'} {host} | ssh-keygen -lf -"
    return f"{why}: read its fingerprint with `{scan}`, compare it with one from a trusted source, then add it"
