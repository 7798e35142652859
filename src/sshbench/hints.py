"""Commands sshbench suggests to the user, written so that they work when pasted.

Every suggested `sshbench ...` command repeats the options that locate the run and the host (`--db`,
`--ssh-config`) as the user gave them, names sshbench the way this process can be started again (`sshbench` when
that is what the shell finds, else its absolute path), and `sudo` gets the absolute path (sudo's PATH rarely holds
a virtual environment). Fixes that install things fit how sshbench was installed: `scripts/setup` only from a
source checkout, the system's package manager otherwise. The command line sets what it was given through `note`
(click callbacks); everything else only reads.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from contextvars import ContextVar
from dataclasses import dataclass, replace
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[2]  # src/sshbench/hints.py -> the source checkout, if this is one


@dataclass(frozen=True)
class Invocation:
    """What a suggested command must repeat: the results database and ssh_config the user gave."""

    db: str | None = None
    ssh_config: str | None = None


_given: ContextVar[Invocation | None] = ContextVar("sshbench_invocation", default=None)


def given() -> Invocation:
    """Return what the user gave on this command line."""
    return _given.get() or Invocation()


def note(**options: str | None) -> None:
    """Remember options the user gave (`db`, `ssh_config`), for the commands suggested later."""
    _given.set(replace(given(), **{k: str(v) if v is not None else None for k, v in options.items()}))


def forget() -> None:
    """Forget what was noted (a new command line)."""
    _given.set(None)


def checkout() -> Path | None:
    """Return the source checkout sshbench runs from (it has scripts/setup), or None for an installed package."""
    return CHECKOUT if (CHECKOUT / "scripts" / "setup").is_file() else None


def program(absolute: bool = False) -> list[str]:
    """Return the words that start this sshbench again: `sshbench` when the shell finds this one, else its path."""
    argv0 = sys.argv[0] if sys.argv and sys.argv[0] else ""
    if argv0.endswith("__main__.py"):
        return [sys.executable, "-m", "sshbench"]
    if os.path.basename(argv0) != "sshbench":  # sshbench inside another program (a test): its own name
        return ["sshbench"]
    path = os.path.abspath(argv0)
    found = shutil.which("sshbench")
    if not absolute and found and os.path.realpath(found) == os.path.realpath(path):
        return ["sshbench"]
    return [path]


def sshbench(*words: str, db: bool = True, ssh_config: bool = False) -> str:
    """Return an sshbench command line to paste, with the --db (and, for a host, --ssh-config) the user gave."""
    now = given()
    extra = ["--db", now.db] if db and now.db else []
    extra += ["--ssh-config", now.ssh_config] if ssh_config and now.ssh_config else []
    return shlex.join([*program(), *words, *extra])


def as_root() -> str:
    """Return this very command line run as root (`sudo /abs/path/sshbench ARGS`), to paste."""
    return shlex.join(["sudo", *program(absolute=True), *sys.argv[1:]])


def install(packages: str) -> str:
    """Return how to install Debian packages, and the checkout's set-up script when there is one."""
    how = f"sudo apt-get install {packages}"
    where = checkout()
    return how + (f" (or run {where / 'scripts' / 'setup'})" if where else "")


def ssh_config_args() -> list[str]:
    """Return `-F FILE` when the user gave --ssh-config (for plain ssh commands to paste)."""
    config = given().ssh_config
    return ["-F", config] if config else []


def upgrade() -> str:
    """Return how to upgrade sshbench, as it was installed."""
    where = checkout()
    if where:
        return f"git -C {shlex.quote(str(where))} pull && {shlex.quote(str(where / 'scripts' / 'setup'))}"
    return f"{shlex.quote(sys.executable)} -m pip install --upgrade sshbench"


def extra(name: str, packages: str) -> str:
    """Return how to install one of sshbench's optional extras (e.g. fleet), as it was installed."""
    where = checkout()
    if where:
        return f"run {where / 'scripts' / 'setup'}, which installs it"
    return f"{shlex.quote(sys.executable)} -m pip install 'sshbench[{name}]' (it brings {packages})"


def measure(command: str, target: str, ssh_config: str | None, *words: str) -> str:
    """Return a new measuring command for a stored run's target, with its ssh_config and the --db given now."""
    where = [] if target == "local" else [target]
    config = ["--ssh-config", ssh_config] if ssh_config else []
    return sshbench(command, *where, *config, *words)


def ssh_verbose(destination: str, options: list[str] | tuple[str, ...] = ()) -> str:
    """Return a plain `ssh -v` command to see why a destination cannot be reached, with the user's -F."""
    config = list(options) if "-F" in options else [*ssh_config_args(), *options]
    return shlex.join(["ssh", "-v", *config, destination])
