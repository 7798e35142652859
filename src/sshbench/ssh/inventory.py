"""Where a fleet's hosts come from: an Ansible inventory (through `ansible-inventory --list`), the Host aliases
of an ssh_config file matching patterns, or a plain file of destinations. Each source gives `FleetHost`s:
a name, what ssh is given, the ssh options the inventory sets, and the inventory groups.

Nothing here is passed through a shell: inventory variables become separate ssh arguments, each validated.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from sshbench import hints
from sshbench.errors import ExitCode, SshbenchError
from sshbench.records import FleetHost
from sshbench.ssh.destination import normalize_destination

INVENTORY_TIMEOUT = 120.0  # seconds for ansible-inventory (a dynamic inventory script may ask an API)
_WORD = re.compile(r"^[A-Za-z0-9_.%+\[\]:@/~-]{1,255}$")  # a host, user or key path from an inventory
# ssh flags an inventory's ansible_ssh_common_args / ansible_ssh_extra_args may carry: with a value, and alone
WITH_VALUE = frozenset({"-o", "-i", "-J", "-p", "-l", "-F", "-c", "-m", "-b", "-B"})
ALONE = frozenset({"-4", "-6", "-A", "-a", "-k", "-q", "-x"})
SSH_CONNECTIONS = frozenset({"ssh", "smart", "paramiko", "paramiko_ssh"})
REFUSED = "not measured: "  # a host its source already refused (never reached): the reason follows


def ansible_inventory() -> str:
    """Return the ansible-inventory program: on PATH, or next to this Python (the set-up scripts' .venv)."""
    found = shutil.which("ansible-inventory") or shutil.which(
        "ansible-inventory", path=str(Path(sys.executable).parent)
    )
    if found is None:
        raise SshbenchError(
            "ansible-inventory was not found",
            place="-i/--inventory",
            fix=f"install ansible-core: {hints.extra('fleet', 'ansible-core')}",
            code=ExitCode.MISSING_BINARY,
        )
    return found


def from_inventory(inventory: str, limit: str | None) -> list[FleetHost]:
    """Resolve an Ansible inventory (file, directory or script) with `ansible-inventory --list`."""
    argv = [ansible_inventory(), "-i", inventory, "--list", *(["--limit", limit] if limit else [])]
    env = {
        **os.environ,
        "ANSIBLE_INVENTORY_UNPARSED_FAILED": "True",  # a bad inventory is an error, not an empty fleet
        "ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED": "True",
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_FORCE_COLOR": "0",
    }
    env.setdefault("LC_ALL", "C.UTF-8")  # ansible refuses to start without a UTF-8 locale
    try:
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=INVENTORY_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise _inventory_error(inventory, f"ansible-inventory did not answer in {INVENTORY_TIMEOUT:.0f} s") from None
    if done.returncode != 0:
        raise _inventory_error(inventory, _ansible_message(done.stderr) or f"exit status {done.returncode}")
    try:
        data = json.loads(done.stdout)
    except json.JSONDecodeError as exc:
        raise _inventory_error(inventory, f"ansible-inventory printed no JSON ({exc})") from None
    return hosts_of(data)


def _ansible_message(stderr: str) -> str:
    """Return ansible's own error lines, joined (its warnings and blank lines left out)."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip() and not ln.startswith("[WARNING]")]
    errors = [ln for ln in lines if ln.startswith("[ERROR]")]
    return "; ".join((errors or lines)[:4])


def _inventory_error(inventory: str, why: str) -> SshbenchError:
    """Return the error for an inventory that cannot be read."""
    return SshbenchError(
        f"cannot read the inventory: {why}",
        place=f"-i {inventory}",
        fix=f"check it with `ansible-inventory -i {shlex.quote(inventory)} --graph`",
        code=ExitCode.USAGE,
    )


def hosts_of(data: Mapping[str, Any]) -> list[FleetHost]:
    """Return the hosts of an `ansible-inventory --list` document, each with its groups (nearest first)."""
    hostvars: Mapping[str, Mapping[str, Any]] = (data.get("_meta") or {}).get("hostvars") or {}
    parents: dict[str, list[str]] = {}
    direct: dict[str, list[str]] = {}
    for group, body in data.items():
        if group == "_meta" or not isinstance(body, Mapping):
            continue
        for child in body.get("children") or ():
            parents.setdefault(str(child), []).append(group)
        for host in body.get("hosts") or ():
            direct.setdefault(str(host), []).append(group)
    names = list(dict.fromkeys([*direct, *hostvars]))
    return [_inventory_host(name, _ancestry(direct.get(name, []), parents), hostvars.get(name) or {}) for name in names]


def _ancestry(groups: Iterable[str], parents: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
    """Return a host's groups and every group above them, nearest first (`all` left out)."""
    seen: dict[str, None] = {}
    todo = list(groups)
    while todo:
        group = todo.pop(0)
        if group not in seen and group != "all":
            seen[group] = None
            todo += parents.get(group, [])
    return tuple(seen) or ("ungrouped",)


def _inventory_host(name: str, groups: tuple[str, ...], hostvars: Mapping[str, Any]) -> FleetHost:
    """Turn one inventory host and its variables into ssh arguments, or a host that says why it cannot be."""
    try:
        destination = normalize_destination(name)
        return FleetHost(name, destination, ssh_arguments(hostvars), groups)
    except SshbenchError as exc:
        return FleetHost(name, name, (), groups, failure=f"{REFUSED}{exc.cause}")


def ssh_arguments(hostvars: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the ssh arguments for ansible_host, _port, _user, _ssh_private_key_file, _ssh_common/extra_args."""
    connection = str(hostvars.get("ansible_connection") or "ssh")
    if connection not in SSH_CONNECTIONS:
        raise SshbenchError(f"ansible_connection={connection} is not SSH")
    args: list[str] = []
    if hostvars.get("ansible_host"):
        args += ["-o", f"HostName={_word(hostvars['ansible_host'], 'ansible_host')}"]
    if hostvars.get("ansible_port") is not None:
        port = str(hostvars["ansible_port"])
        if not port.isdigit() or not 0 < int(port) < 65536:
            raise SshbenchError(f"ansible_port={port!r} is not a port number")
        args += ["-p", port]
    if hostvars.get("ansible_user"):
        args += ["-l", _word(hostvars["ansible_user"], "ansible_user")]
    if hostvars.get("ansible_ssh_private_key_file"):
        key = os.path.expanduser(_word(hostvars["ansible_ssh_private_key_file"], "ansible_ssh_private_key_file"))
        args += ["-i", key]
    for var in ("ansible_ssh_common_args", "ansible_ssh_extra_args"):
        if hostvars.get(var):
            args += checked_flags(str(hostvars[var]), var)
    return tuple(args)


def _word(value: Any, var: str) -> str:
    """Return an inventory value that is one plain word (no spaces, quotes or shell characters)."""
    text = str(value)
    if not _WORD.match(text) or text.startswith("-"):
        raise SshbenchError(f"{var}={text!r} is not a plain host, user or path")
    return text


def checked_flags(text: str, var: str) -> list[str]:
    """Split ssh arguments the way Ansible does (shell words) and accept only known ssh flags."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise SshbenchError(f"{var}: {exc}") from None
    out: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word in ALONE or (word[:2] in WITH_VALUE and len(word) > 2):
            out.append(word)
        elif word in WITH_VALUE and i + 1 < len(words):
            out += [word, words[i + 1]]
            i += 1
        else:
            raise SshbenchError(
                f"{var}: {word!r} is not an ssh option sshbench passes on (allowed: -o, -i, -J, -p, -l)"
            )
        i += 1
    return out


def from_ssh_config(path: Path, patterns: str) -> list[FleetHost]:
    """Return the Host aliases of an ssh_config file that match any of the comma-separated patterns, in file order
    (each named with the pattern it matched as its group; wildcard Host entries are patterns, not hosts)."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise SshbenchError(
            f"cannot read {path}: {exc.strerror}", place="--ssh-config", fix="give a readable file", code=ExitCode.USAGE
        ) from None
    wanted = [p.strip() for p in patterns.split(",") if p.strip()]
    hosts: dict[str, FleetHost] = {}
    for alias in host_aliases(text):
        group = next((p for p in wanted if fnmatch.fnmatchcase(alias, p)), None)
        if group is not None and alias not in hosts:
            hosts[alias] = _named(alias, (group,))
    return list(hosts.values())


def host_aliases(text: str) -> list[str]:
    """Return the concrete names on the `Host` lines of ssh_config text (no wildcards or negations)."""
    names: list[str] = []
    for line in text.splitlines():
        words = line.strip().replace("=", " ", 1).split()
        if len(words) > 1 and words[0].lower() == "host":
            names += [w for w in words[1:] if not any(c in w for c in "*?!")]
    return names


def from_file(path: Path) -> list[FleetHost]:
    """Return the destinations of a plain file: one per line, `#` comments, optional `[group]` headers."""
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise SshbenchError(
            f"cannot read {path}: {exc.strerror}", place="--hosts-file", fix="give a readable file", code=ExitCode.USAGE
        ) from None
    group, hosts = "ungrouped", []
    for line in lines:
        entry = line.split("#", 1)[0].strip()
        if entry.startswith("[") and entry.endswith("]"):
            group = entry[1:-1].strip() or "ungrouped"
        elif entry:
            hosts.append(_named(entry, (group,)))
    return hosts


def _named(name: str, groups: tuple[str, ...]) -> FleetHost:
    """Return a host given by a destination or alias, or one that says why it is not valid."""
    try:
        return FleetHost(name, normalize_destination(name), (), groups)
    except SshbenchError as exc:
        return FleetHost(name, name, (), groups, failure=f"{REFUSED}{exc.cause}")
