"""Targets: the embedded loopback server or any ssh destination resolved through `ssh -G`."""

from __future__ import annotations

import functools
import os
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from sshbench import hints
from sshbench.errors import ExitCode, SshbenchError
from sshbench.ssh.proc import run_quick
from sshbench.ssh.text import parse_config_dump

LOCAL = "local"
# Options every measured connection uses: no compression, no connection sharing, no prompts, no tty.
COMMON_OPTIONS = (
    "-T",
    "-x",
    "-a",
    "-o",
    "Compression=no",
    "-o",
    "ControlMaster=no",
    "-o",
    "ControlPath=none",
    "-o",
    "BatchMode=yes",
)


def common_options(extra: Sequence[str]) -> list[str]:
    """Return COMMON_OPTIONS without the `-o` settings `extra` makes itself (ssh keeps the first value it reads, so
    a `tune` remedy's Compression=yes or ControlMaster must replace the default, not follow it)."""
    overridden = {a.split("=", 1)[0].lower() for a in extra if "=" in a}
    out: list[str] = []
    items = list(COMMON_OPTIONS)
    i = 0
    while i < len(items):
        if items[i] == "-o" and items[i + 1].split("=", 1)[0].lower() in overridden:
            i += 2
            continue
        out.append(items[i])
        i += 1
    return out


# A transfer's log: ssh -v prints about 54 lines during a login, each a wake-up of sshbench on a core the measured
# pair needs; a transfer needs only the line saying its command was sent (forced from its one function by
# LogVerbose) and ssh's own messages and errors (INFO, its default). docs/BENCHMARKS.md has the cost.
MARKS_ONLY = ("-o", "LogLevel=INFO", "-o", "LogVerbose=*:client_session2_setup():*")
# A load login's log: only what the server wrote before its banner (OpenSSH 10.3's "Not allowed at this time" on a
# drop) and the banner's own line, forced from the one function that reads them; no -v (the generator's CPU counts).
PRE_BANNER_ONLY = ("-o", "LogVerbose=*:kex_exchange_identification():*")
SENT = "Sending command:"  # ssh -v's line as the command goes out
SETUP = "client_session2_setup()"  # the tag of both lines MARKS_ONLY prints there (`id 0`, then SENT), µs apart
LOGIN_RANGE = (1.0, 3600.0)  # seconds SSHBENCH_LOGIN_TIMEOUT may set


def login_timeout(given: str | None) -> float:
    """Return the seconds a whole connection running `true` may take before the server counts as stuck, not slow:
    30, or SSHBENCH_LOGIN_TIMEOUT's value (a path slower than that to log in, or a test of stuck servers)."""
    try:
        seconds = float(given) if given else 30.0
    except ValueError:
        seconds = 0.0
    if not LOGIN_RANGE[0] <= seconds <= LOGIN_RANGE[1]:
        raise SshbenchError(
            f"SSHBENCH_LOGIN_TIMEOUT={given!r} is not a number of seconds from {LOGIN_RANGE[0]:g} to "
            f"{LOGIN_RANGE[1]:g}",
            place="the environment",
            fix="unset SSHBENCH_LOGIN_TIMEOUT (30 s) or give it seconds, e.g. SSHBENCH_LOGIN_TIMEOUT=60",
            code=ExitCode.USAGE,
        )
    return seconds


def _login_timeout_here() -> float:
    """Return this process's login timeout (30 s where SSHBENCH_LOGIN_TIMEOUT is wrong: `cli.main` refuses it first)."""
    try:
        return login_timeout(os.environ.get("SSHBENCH_LOGIN_TIMEOUT"))
    except SshbenchError:
        return 30.0


LOGIN_TIMEOUT = _login_timeout_here()
CONNECT_TIMEOUT = 10  # seconds for TCP connect and the banner (remote targets without their own ConnectTimeout)
_DESTINATION = re.compile(r"^[A-Za-z0-9_.%+\[\]:@-]{1,255}$")
_HOST_PORT = re.compile(r"^(?:(?P<user>[^@\s]+)@)?(?P<host>\[[0-9A-Fa-f:.]+\]|[^:@\[\]\s]+):(?P<port>\d{1,5})$")


@dataclass(frozen=True)
class Target:
    """Where to connect and how: the destination and the ssh options that reach it."""

    spec: str
    destination: str
    options: tuple[str, ...]
    host: str
    port: int
    embedded: bool
    proxied: bool = False
    user: str = ""
    server: str = ""  # embedded server name (openssh, dropbear, tinyssh, sshd=PATH)

    def argv(self, ssh: str, extra: Sequence[str], command: str, marks_only: bool = False) -> list[str]:
        """Return the ssh command line for one connection running a fixed remote command, logging as `-v` does, or
        (`marks_only`, where the client knows LogVerbose) only the lines a transfer reads."""
        log = MARKS_ONLY if marks_only and knows_log_verbose(ssh) else ("-v",)
        return [ssh, *log, *common_options(extra), *self.options, *extra, self.destination, command]

    def ssh_hint(self) -> str:
        """Return the plain ssh command a user can run to see why this target cannot be reached (with the -F and the
        inventory's options it was given, without the ConnectTimeout sshbench adds)."""
        if self.embedded or _HOST_PORT.match(self.spec):
            user = f"{self.user}@" if "@" in self.spec and not self.embedded else ""
            return hints.ssh_verbose(f"{user}{self.host}", ["-p", str(self.port)])
        return hints.ssh_verbose(self.spec, _without_timeout(self.options))

    def describe(self) -> str:
        """Return where this target is, for messages."""
        kind = f"embedded {self.server or 'openssh'} server" if self.embedded else "remote host"
        return f"{kind} {self.host}:{self.port}"


@functools.cache
def knows_log_verbose(ssh: str) -> bool:
    """Return True when this ssh client takes MARKS_ONLY (asked once: `ssh -G` parses them without connecting)."""
    try:
        done = run_quick([ssh, "-F", "/dev/null", *MARKS_ONLY, "-G", "sshbench-probe"], timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def transfer_mark(ssh: str) -> str:
    """Return the text that marks a transfer's login as done in the log `Target.argv(marks_only=True)` asks of this
    client: the first of its two forced lines (the second then waits in the pipe, not for a wake-up of its own)."""
    return SETUP if knows_log_verbose(ssh) else SENT


def _without_timeout(options: Sequence[str]) -> list[str]:
    """Return ssh options without the `-o ConnectTimeout=N` pair sshbench adds on its own."""
    out: list[str] = []
    skip = False
    for i, o in enumerate(options):
        if skip:
            skip = False
            continue
        if o == "-o" and i + 1 < len(options) and options[i + 1] == f"ConnectTimeout={CONNECT_TIMEOUT}":
            skip = True
            continue
        out.append(o)
    return out


def normalize_destination(spec: str) -> str:
    """Validate a destination and turn `host:port` into the `ssh://host:port` form ssh understands."""
    if not _DESTINATION.match(spec) or spec.startswith("-"):
        raise SshbenchError(
            f"{spec!r} is not a valid ssh destination",
            place="TARGET argument",
            fix="use `local`, `user@host`, `host:port`, or a Host alias from ~/.ssh/config",
            code=ExitCode.USAGE,
        )
    return f"ssh://{spec}" if _HOST_PORT.match(spec) else spec


def resolve_remote(ssh: str, spec: str, ssh_config: str | None = None, extra: Sequence[str] = ()) -> Target:
    """Resolve a destination or ~/.ssh/config alias with `ssh -G` (the user's own configuration; `extra`: ssh
    arguments that come with it, such as an inventory's -p/-l/-i/-o HostName=)."""
    destination = normalize_destination(spec)
    config = (*(("-F", ssh_config) if ssh_config else ()), *extra)
    done = run_quick([ssh, *config, "-G", destination])
    if done.returncode != 0:
        raise SshbenchError(
            f"ssh -G could not resolve {spec!r}: {done.stderr.strip() or 'no reason given'}",
            place="~/.ssh/config",
            fix="check the destination and your ssh configuration",
            code=ExitCode.USAGE,
        )
    options = parse_config_dump(done.stdout)
    timeout = ("-o", f"ConnectTimeout={CONNECT_TIMEOUT}") if options.get("connecttimeout", "none") == "none" else ()
    proxied = any(options.get(k, "none") not in ("none", "") for k in ("proxyjump", "proxycommand"))
    return Target(
        spec=spec,
        destination=destination,
        options=(*config, *timeout),
        host=options.get("hostname", spec),
        port=int(options.get("port", "22")),
        embedded=False,
        proxied=proxied,
        user=options.get("user", ""),
    )
