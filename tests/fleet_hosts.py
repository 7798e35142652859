"""A fleet on loopback for tests and benchmarks: real embedded servers (OpenSSH, Dropbear, TinySSH) described
as remote hosts by a temporary Ansible INI inventory, an ssh_config with Host aliases, and a hosts file.

The client's own settings (every host's known_hosts, no agent, strict host-key checking) go into a client
ssh_config given with --ssh-config (ssh reads ~/.ssh/config from the passwd home, never the test's HOME);
each host's key comes from the inventory's ansible_ssh_private_key_file (or the alias's IdentityFile), so the
inventory's variables are exercised.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from sshbench.targets.servers.base import LocalServer
from sshbench.targets.servers.registry import make_server


@dataclass(frozen=True)
class Host:
    """One loopback host of the fleet."""

    name: str
    group: str
    port: int
    user: str
    key: Path | None  # None: a host nobody listens on


@dataclass(frozen=True)
class LoopbackFleet:
    """The fleet's hosts and the files that describe it."""

    hosts: tuple[Host, ...]
    inventory: Path
    ssh_config: Path  # Host aliases `fleet-NAME`, then the client's defaults
    client_config: Path  # the client's defaults alone (ssh reads ~/.ssh/config from the passwd home, not $HOME)
    hosts_file: Path


def closed_port() -> int:
    """Return a loopback port nobody listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def loopback_fleet(tmp: Path, home: Path, kinds: Sequence[str], closed: int = 1) -> Iterator[LoopbackFleet]:
    """Start one embedded server per kind (`openssh`, `dropbear`, `tinyssh`) and describe them as a fleet, plus
    `closed` hosts pointing at closed ports."""
    with contextlib.ExitStack() as stack:
        servers: list[tuple[str, LocalServer]] = []
        for i, kind in enumerate(kinds):
            server = make_server(f"local:{kind}")
            stack.enter_context(server)
            servers.append((f"{kind}-{i + 1}", server))
        hosts = [Host(name, kind_of(name), s.port, s.user, _workdir(s) / "client_ed25519") for name, s in servers]
        hosts += [Host(f"closed-{i + 1}", "broken", closed_port(), servers[0][1].user, None) for i in range(closed)]
        known = tmp / "fleet_known_hosts"
        known.write_text("".join((_workdir(s) / "known_hosts").read_text() for _, s in servers))
        client = tmp / "client_config"
        client.write_text(_defaults(known))
        yield LoopbackFleet(
            tuple(hosts), _inventory(tmp, hosts), _ssh_config(tmp, hosts, known), client, _hosts_file(tmp, hosts)
        )


def _defaults(known: Path) -> str:
    """Return the client's defaults: every host's known_hosts, strict checking, no agent."""
    return (
        f"Host *\n  UserKnownHostsFile {known}\n  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n"
        "  CheckHostIP no\n  IdentitiesOnly yes\n  IdentityAgent none\n  UpdateHostKeys no\n"
    )


def kind_of(name: str) -> str:
    """Return a host's server kind from its name."""
    return name.rsplit("-", 1)[0]


def _workdir(server: LocalServer) -> Path:
    """Return a started server's private directory."""
    assert server.workdir is not None
    return server.workdir


def _inventory(tmp: Path, hosts: Sequence[Host]) -> Path:
    """Write an Ansible INI inventory: a group per server kind, `prod` above the working ones."""
    groups: dict[str, list[str]] = {}
    for h in hosts:
        key = f" ansible_ssh_private_key_file={h.key}" if h.key else ""
        groups.setdefault(h.group, []).append(
            f"{h.name} ansible_host=127.0.0.1 ansible_port={h.port} ansible_user={h.user}{key}"
        )
    text = "".join(f"[{g}]\n" + "\n".join(lines) + "\n\n" for g, lines in groups.items())
    text += "[prod:children]\n" + "\n".join(g for g in groups if g != "broken") + "\n"
    path = tmp / "inventory.ini"
    path.write_text(text)
    return path


def _ssh_config(tmp: Path, hosts: Sequence[Host], known: Path) -> Path:
    """Write an ssh_config with a Host alias per host (`fleet-NAME`) and a wildcard block."""
    blocks = [
        f"Host fleet-{h.name}\n  HostName 127.0.0.1\n  Port {h.port}\n  User {h.user}\n"
        + (f"  IdentityFile {h.key}\n" if h.key else "")
        for h in hosts
    ]
    blocks.append(_defaults(known))
    path = tmp / "fleet_ssh_config"
    path.write_text("\n".join(blocks))
    return path


def _hosts_file(tmp: Path, hosts: Sequence[Host]) -> Path:
    """Write a plain hosts file (user@127.0.0.1:port) grouped by kind; keys come from ~/.ssh/config's defaults."""
    path = tmp / "hosts.txt"
    path.write_text("\n".join(f"[{h.group}]\n{h.user}@127.0.0.1:{h.port}" for h in hosts) + "\n")
    return path
