"""The embedded servers sshbench knows: one row each, from which target specs, checks and help are derived.

A target spec `local:NAME` (or `local`, meaning OpenSSH) names a row; `local:sshd=PATH` runs any
OpenSSH-compatible sshd given by path. Adding a server is one file in this package with its `LocalServer`
subclass, and one row in `SERVER_TYPES`: its name, product, the Debian packages with its binaries, what
else it needs, and where its class lives (imported only when such a server is made, to keep start-up quick).
"""

from __future__ import annotations

import importlib
import os
import re
import shutil
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sshbench import hints, products
from sshbench.errors import ExitCode, SshbenchError

if TYPE_CHECKING:
    from sshbench.targets.servers.base import LocalServer

LOCAL = "local"
LOCAL_PREFIX = "local:"
_PATH = re.compile(r"^/[A-Za-z0-9_./+@-]{1,400}$")
SEARCH_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass(frozen=True)
class ServerType:
    """One kind of embedded server: what it is, what it needs here, and which class runs it."""

    name: str  # NAME in local:NAME
    product: str
    caps: products.Product  # what it can do: SFTP, its window and the option that sets it, whose crypto, login limits
    packages: str  # Debian packages that provide its binaries
    binaries: tuple[str, ...]  # must be on PATH or in /usr/sbin
    module: str  # module of sshbench.targets with its class
    cls: str
    root_only: str = ""  # why it cannot run without root here ("" when it can)
    by_path: bool = False  # local:NAME=PATH: the server binary is given by path
    language: str = ""  # built from pinned sources with this toolchain (sshbench.builds) instead of installed

    @property
    def spec(self) -> str:
        """Return the target spec that chooses this server."""
        return f"{LOCAL_PREFIX}{self.name}=/path/to/{self.name}" if self.by_path else f"{LOCAL_PREFIX}{self.name}"

    def missing(self, path: str = "") -> str | None:
        """Return a one-line hint when this server cannot run here (binary missing, needs root), else None."""
        if self.by_path:
            return None if os.access(path, os.X_OK) else f"{path} is not an executable file"
        if self.root_only and os.geteuid() != 0:
            return self.root_only
        if self.language:
            from sshbench import builds

            if builds.toolchain_command(self.language) is None:
                return f"no {self.language} toolchain to build it: {self.packages}"
        for binary in self.binaries:
            if shutil.which(binary) is None and shutil.which(binary, path=SEARCH_PATH) is None:
                return f"`{binary}` not found: {hints.install(self.packages)}"
        return None

    def make(self, spec: str, path: str = "") -> LocalServer:
        """Return a (not yet started) server of this type."""
        cls: type[LocalServer] = getattr(importlib.import_module(f"sshbench.targets.servers.{self.module}"), self.cls)
        if not self.by_path:
            return cls(spec)
        from sshbench.targets.servers.tools import Tools

        return cls(spec, f"{self.name}={path}", Tools.find(sshd=os.path.abspath(path)))


SERVER_TYPES = (
    ServerType(
        name="openssh",
        product="OpenSSH",
        caps=products.OPENSSH,
        packages="openssh-server",
        binaries=("sshd", "ssh-keygen"),
        module="openssh",
        cls="OpenSSHServer",
    ),
    ServerType(
        name="dropbear",
        product="Dropbear",
        caps=products.DROPBEAR,
        packages="dropbear-bin",
        binaries=("dropbear", "dropbearconvert"),
        module="dropbear",
        cls="DropbearServer",
    ),
    ServerType(
        name="tinyssh",
        product="TinySSH",
        caps=products.TINYSSH,
        packages="tinysshd ucspi-tcp",
        binaries=("tinysshd", "tinysshd-makekey", "tcpserver"),
        module="tinyssh",
        cls="TinySSHServer",
        # tinysshd checks that every directory above authorized_keys belongs to root or the user; in the user
        # namespace sshbench needs without root root-owned directories appear unowned (nobody), so a normal
        # user's TinySSH runs in a root of the user's own (servers/ownedroot.py).
    ),
    ServerType(
        name="gossh",
        product=products.GOSSH.name,
        caps=products.GOSSH,
        packages="install Go 1.26 or later (sshbench builds the server from its pinned sources once)",
        binaries=(),
        module="gossh",
        cls="GoSSHServer",
        language="Go",
    ),
    ServerType(
        name="sshd",
        product="OpenSSH-compatible sshd",
        caps=products.OPENSSH,
        packages="",
        binaries=(),
        module="openssh",
        cls="OpenSSHServer",
        by_path=True,
    ),
)
KNOWN = tuple(t.name for t in SERVER_TYPES if not t.by_path)
SPECS_HELP = ", ".join([LOCAL, *(LOCAL_PREFIX + n for n in KNOWN)]) + f" or {LOCAL_PREFIX}sshd=/absolute/path/to/sshd"


def server_name(spec: str) -> str:
    """Return the server name of a local spec: openssh, dropbear, tinyssh or sshd=PATH."""
    return "openssh" if spec == LOCAL else spec[len(LOCAL_PREFIX) :]


def lookup(spec: str) -> tuple[ServerType, str]:
    """Return the server type a local spec names and its path (local:sshd=PATH), or fail naming the forms."""
    name, _, path = server_name(spec).partition("=")
    for server_type in SERVER_TYPES:
        safe = not path or (_PATH.match(path) and ".." not in path.split("/"))
        if server_type.name == name and server_type.by_path == bool(path) and safe:
            return server_type, path
    raise SshbenchError(
        f"{spec!r} is not an embedded server",
        place="TARGET / SERVER argument",
        fix=f"use {SPECS_HELP}",
        code=ExitCode.USAGE,
    )


def validate(spec: str) -> str:
    """Check a local spec's form; return it or fail naming the accepted forms."""
    lookup(spec)
    return spec


def missing(spec: str) -> str | None:
    """Return a one-line hint when a local server cannot run here, else None."""
    server_type, path = lookup(spec)
    return server_type.missing(path)


def make_server(spec: str) -> LocalServer:
    """Return the (not yet started) embedded server for a local spec."""
    server_type, path = lookup(spec)
    hint = server_type.missing(path)
    if hint and server_type.root_only and os.geteuid() != 0:  # nothing is missing: it needs root here
        raise SshbenchError(
            f"the {server_name(spec)} server cannot run as a normal user: {hint}",
            place=spec,
            fix=f"run it as root: `{hints.as_root()}`, or choose another server",
            code=ExitCode.SERVER_START,  # the server cannot start here (README: 8), nothing the user typed is wrong
        )
    if hint:
        raise SshbenchError(
            f"the {server_name(spec)} server is not available: {hint}",
            place=spec,
            fix="install it, or choose another server",
            code=ExitCode.MISSING_BINARY,
        )
    return server_type.make(spec, path)


def widened(spec: str, window: int) -> LocalServer | None:
    """Return a (not yet started) server of a local spec's type with a larger receive window, None when the type
    has no option for it (OpenSSH's channel window is fixed; Dropbear's is -W)."""
    server_type, path = lookup(spec)
    if server_type.caps.window_option is None:
        return None
    server = server_type.make(spec, path)
    server.widen(window)
    return server


def configured(spec: str, options: tuple[str, ...]) -> LocalServer | None:
    """Return a (not yet started) server of a local spec's type with sshd_config options (`KEY=VALUE`), None when the
    type takes none (only OpenSSH does)."""
    server_type, path = lookup(spec)
    if not server_type.caps.options:
        return None
    server = server_type.make(spec, path)
    server.configure(options)
    return server


def holding(spec: str, connections: int) -> LocalServer | None:
    """Return a (not yet started) server of a local spec's type that keeps `connections` connections at once, None
    when the type's own does (only TinySSH's tcpserver has a limit of its own)."""
    server_type, path = lookup(spec)
    server = server_type.make(spec, path)
    return server if server.hold(connections) else None


def capabilities(name: str | None) -> products.Product | None:
    """Return what an embedded server can do, by its name in a target (`openssh`, `sshd=PATH`); None for a host of
    yours (its product is read from its banner where it matters)."""
    return lookup(f"{LOCAL_PREFIX}{name}")[0].caps if name else None


def every() -> list[str]:
    """Return the specs of every known embedded server (unavailable ones are reported as skipped)."""
    return [f"{LOCAL_PREFIX}{name}" for name in KNOWN]
