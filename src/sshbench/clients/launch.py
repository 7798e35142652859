"""Reaching a target with each client: where it is and how to verify it (`ssh -G` over the user's or the embedded
server's ssh_config), which client is here (its version, ciphers and MACs), and each client's command line.

Host keys are verified against the known_hosts files ssh itself would read, never accepted: a library driver is
given them (and refuses a key not in them); dbclient reads $HOME/.ssh/known_hosts only, matched on the host name
alone, so it runs with a private HOME whose known_hosts holds the lines `ssh-keygen -F` finds for this host and port,
and a copy of the identity in Dropbear's format (`dropbearconvert`), both removed after the run."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from sshbench import builds, hints, leases
from sshbench.clienttypes import ClientType
from sshbench.model import Scenario
from sshbench.ssh.destination import Target
from sshbench.ssh.proc import run_quick

DRIVERS = Path(__file__).parent / "drivers"  # the drivers' sources: python -m modules, gossh/ and russh/ to build
DRIVER_MARK = "sshbench-driver: command sent"
DBCLIENT_WINDOW = 2 * 2**20  # -W of dbclient's tuned setting
# dbclient's host-key preference (Dropbear 2022.83): it asks about the first of these the server offers
DBCLIENT_HOSTKEYS = (
    "ssh-ed25519",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "rsa-sha2-256",
    "ssh-rsa",
)


@dataclass(frozen=True)
class Address:
    """Where a target is and how a client other than ssh logs in to it, as `ssh -G` resolved it."""

    host: str
    port: int
    user: str
    keys: tuple[str, ...]  # identity files that exist
    known_hosts: tuple[str, ...]  # known_hosts files that exist
    proxied: bool  # reached through a ProxyJump or ProxyCommand (which the libraries here do not follow)


def _expand(path: str, user: str, host: str) -> str:
    """Expand `~` and the `%d %u %h` tokens ssh -G leaves in file names."""
    home = str(Path.home())
    path = path.replace("%d", home).replace("%u", user).replace("%h", host).replace("%%", "%")
    return os.path.expanduser(path)


def resolve(ssh: str, target: Target) -> Address:
    """Resolve a target's address, identities and known_hosts files with `ssh -G`."""
    done = run_quick([ssh, *target.options, "-G", target.destination])
    first: dict[str, str] = {}
    every: dict[str, list[str]] = {}
    for line in done.stdout.splitlines():
        word, _, value = line.strip().partition(" ")
        first.setdefault(word.lower(), value)
        every.setdefault(word.lower(), []).append(value)
    user, host = first.get("user", ""), first.get("hostname", target.host)
    keys = [_expand(k, user, host) for k in every.get("identityfile", [])]
    known = [_expand(f, user, host) for v in every.get("userknownhostsfile", []) for f in v.split()]
    proxied = any(first.get(k, "none") not in ("none", "") for k in ("proxyjump", "proxycommand"))
    return Address(
        host=host,
        port=int(first.get("port", target.port)),
        user=user,
        keys=tuple(k for k in keys if os.path.isfile(k)),
        known_hosts=tuple(f for f in known if os.path.isfile(f)),
        proxied=proxied,
    )


@dataclass(frozen=True)
class Detected:
    """A client as found here: its version and algorithms, or why it cannot run."""

    kind: ClientType
    version: str = ""
    ciphers: tuple[str, ...] = ()  # empty for a library that cannot choose a cipher
    macs: tuple[str, ...] = ()
    start: float = 0.0  # seconds a driver took to start and load its library
    missing: str | None = None
    path: str = ""  # the binary, the interpreter that runs a Python driver, or a built (Go, Rust) driver
    kexes: tuple[str, ...] = ()  # the key exchanges it can be pinned to (empty: it cannot choose one)
    kex_default: tuple[str, ...] = ()  # what it offers unpinned, in its order of preference (empty: not known)

    @property
    def command(self) -> tuple[str, ...]:
        """Return what runs the client: the binary or built driver, or `python -m DRIVER`."""
        return (self.path, "-m", self.kind.driver) if self.kind.driver else (self.path,)


def _listed(text: str) -> tuple[str, ...]:
    """Return the comma-separated names after `: ` on dbclient's `Available ...:` line."""
    line = next((ln for ln in text.splitlines() if "Available" in ln), "")
    return tuple(n for n in line.rsplit(": ", 1)[-1].strip().split(",") if n and "Available" not in n)


def sources(name: str) -> Path:
    """Return a built driver's source directory."""
    return DRIVERS / name


def detect(kind: ClientType, note: Callable[[str], None] | None = None, ssh: str | None = None) -> Detected:
    """Find a client, its version and the algorithms it can pin (a Go or Rust driver is built first, once); `ssh`:
    the OpenSSH client to use for the openssh row (`--ssh`)."""
    if kind.binary is not None:
        return _detect_binary(kind, ssh if kind.ssh_itself else None)
    if kind.driver is not None:
        command: tuple[str, ...] = (sys.executable, "-m", kind.driver)
    else:
        built = builds.build(kind.name, kind.language, sources(kind.name), note)
        if built.path is None:
            return Detected(kind, missing=built.why)
        command = (built.path,)
    start = time.perf_counter()
    done = run_quick([*command, "version"])
    took = time.perf_counter() - start
    words = (line.removeprefix("sshbench-driver: ").partition(" ") for line in done.stderr.splitlines())
    said = {word: value for word, _, value in words}
    if done.returncode != 0:
        why = f"not installed: {hints.extra('clients', kind.package)}" if done.returncode == 3 else said.get("error:")
        return Detected(kind, missing=why or f"its driver exited with status {done.returncode}")
    ciphers, macs, kexes, default = (
        tuple(n for n in said.get(k, "").split(",") if n) for k in ("ciphers", "macs", "kex", "kex-default")
    )
    version = said.get("version", "unknown")
    return Detected(kind, version, ciphers, macs, start=took, path=command[0], kexes=kexes, kex_default=default)


def _detect_binary(kind: ClientType, path: str | None = None) -> Detected:
    """Find a client binary (or take the one given), its version and the algorithms it can pin."""
    assert kind.binary is not None
    path = path or _which(kind.binary)
    if path is None:
        return Detected(kind, missing=f"`{kind.binary}` not found: {hints.install(kind.package)}")
    if kind.ssh_itself:
        ver = run_quick([path, "-V"])
        version = (ver.stderr or ver.stdout).strip()
        ciphers, macs, kexes = _query(path, "cipher"), _query(path, "mac"), _query(path, "kex")
        return Detected(kind, version, ciphers, macs, path=path, kexes=kexes, kex_default=_default_kex(path))
    ver, cipher_help, mac_help = (run_quick([path, *a]) for a in (["-V"], ["-c", "help"], ["-m", "help"]))
    version = (ver.stderr or ver.stdout).strip().splitlines()[0]
    return Detected(kind, version, _listed(cipher_help.stderr), _listed(mac_help.stderr), path=path)


def _which(binary: str) -> str | None:
    """Return a binary's absolute path (PATH, then /usr/bin and /usr/sbin)."""
    import shutil

    return shutil.which(binary) or shutil.which(binary, path="/usr/bin:/usr/sbin:/bin")


def _query(ssh: str, kind: str) -> tuple[str, ...]:
    """Return `ssh -Q kind`."""
    return tuple(run_quick([ssh, "-Q", kind]).stdout.split())


def _default_kex(ssh: str) -> tuple[str, ...]:
    """Return the key exchanges an OpenSSH client offers by default, in order (`ssh -G` with no config file)."""
    for line in run_quick([ssh, "-F", "/dev/null", "-G", "127.0.0.1"]).stdout.splitlines():
        word, _, value = line.partition(" ")
        if word == "kexalgorithms":
            return tuple(n for n in value.split(",") if n and not n.startswith(("ext-info-", "kex-strict-")))
    return ()


@dataclass(frozen=True)
class Launcher:
    """A client's command lines against one address (`argv`), what it prints when its command is sent (`mark`), and
    the environment it runs in."""

    client: Detected
    address: Address
    keys: tuple[str, ...] = ()  # dbclient: the identities converted to Dropbear's format
    env: dict[str, str] | None = None

    @property
    def mark(self) -> str | None:
        """Return the stderr text that says the command was sent (dbclient prints none)."""
        return DRIVER_MARK if self.client.kind.library else None

    def argv(self, sc: Scenario, mode: str, *operands: str) -> list[str]:
        """Return the command line: `connect N` (N connections, timing each), `exec CMD`, `get R L` or `put L R`."""
        a, tuned = self.address, sc.mode == "tuned"
        if not self.client.kind.library:
            command = "true" if mode == "connect" else operands[0]
            pins = [*(["-c", sc.cipher] if sc.cipher else []), *(["-m", sc.mac] if sc.mac else [])]
            window = ["-W", str(DBCLIENT_WINDOW)] if tuned else []
            ids = [w for k in self.keys for w in ("-i", k)]
            return [self.client.path, "-T", "-p", str(a.port), "-l", a.user, *ids, *pins, *window, a.host, command]
        where = ["--host", a.host, "--port", str(a.port), "--user", a.user]
        where += [w for k in a.keys for w in ("--key", k)] + [w for f in a.known_hosts for w in ("--known-hosts", f)]
        pins = [*(["--cipher", sc.cipher] if sc.cipher else []), *(["--mac", sc.mac] if sc.mac else [])]
        pins += ["--kex", sc.kex] if sc.kex else []
        pins += ["--hostkey", sc.hostkey] if sc.hostkey else []
        return [*self.client.command, *where, *pins, *(["--tuned"] if tuned else []), mode, *operands]


def dbclient_problem(address: Address, offered: Sequence[str], home: Path) -> str | None:
    """Return why dbclient would stop to ask about the host's key (no line for the key type it picks), or None."""
    known = (home / ".ssh" / "known_hosts").read_text().split() if (home / ".ssh" / "known_hosts").exists() else []
    wanted = next((k for k in DBCLIENT_HOSTKEYS if k in offered), None)
    kind = "ssh-rsa" if wanted in ("rsa-sha2-256", "ssh-rsa") else wanted
    if kind is None or kind in known:
        return None
    return (
        f"dbclient verifies the host's {wanted} key, which no known_hosts line for "
        f"[{address.host}]:{address.port} holds (it would ask on the terminal, and sshbench never accepts a key)"
    )


def known_keys(address: Address) -> list[tuple[str, str]]:
    """Return the (type, key) pairs the known_hosts files hold for this host and port (hashed names included), as
    `ssh-keygen -F` finds them."""
    keygen = _which("ssh-keygen")
    name = address.host if address.port == 22 else f"[{address.host}]:{address.port}"
    pairs = []
    for path in address.known_hosts if keygen else ():
        for line in run_quick([str(keygen), "-F", name, "-f", path]).stdout.splitlines():
            words = line.split()
            if len(words) >= 3 and not line.startswith(("#", "@")):
                pairs.append((words[1], words[2]))
    return pairs


def verifiable(address: Address, kind: ClientType) -> str | None:
    """Return why a client other than ssh cannot reach and verify this host as ssh would, or None."""
    if kind.ssh_itself:
        return None
    if address.proxied:
        return f"{kind.name} is not run through a ProxyJump or ProxyCommand (the host is reached through one)"
    if not address.keys:
        return f"no IdentityFile that exists for {address.user}@{address.host} (other clients log in with a key file)"
    if not known_keys(address):
        files = ", ".join(address.known_hosts) or "any known_hosts file ssh reads"
        return (
            f"no known_hosts line for [{address.host}]:{address.port} in {files}: sshbench never accepts a host "
            "key (log in once with ssh first)"
        )
    return None


@contextlib.contextmanager
def dbclient_home(address: Address) -> Iterator[tuple[Path, tuple[str, ...]]]:
    """Yield a private HOME for dbclient (known_hosts lines for this host, matched by name) and the identities in
    Dropbear's format; both are removed on the way out."""
    convert = _which("dropbearconvert") or "dropbearconvert"
    with leases.private_dir("sshbench-dbclient-") as home:
        (home / ".ssh").mkdir(mode=0o700)
        lines = [f"{address.host} {kind} {key}\n" for kind, key in known_keys(address)]
        (home / ".ssh" / "known_hosts").write_text("".join(lines))
        keys = []
        for i, key in enumerate(address.keys):
            out = home / f"id_dropbear_{i}"
            done = subprocess.run(
                [convert, "openssh", "dropbear", key, str(out)],
                capture_output=True,
                stdin=subprocess.DEVNULL,
                timeout=30,
                check=False,
            )
            if done.returncode == 0:
                keys.append(str(out))
        yield home, tuple(keys)
