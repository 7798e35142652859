"""Host sources without hosts: the ansible-inventory document, inventory variables turned into ssh arguments (and
refused when they are not plain), ssh_config Host aliases, and hosts files."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sshbench.errors import SshbenchError
from sshbench.ssh.inventory import (
    ALONE,
    WITH_VALUE,
    checked_flags,
    from_file,
    from_ssh_config,
    host_aliases,
    hosts_of,
    ssh_arguments,
)

DOCUMENT = {
    "_meta": {
        "hostvars": {
            "web1": {"ansible_host": "127.0.0.1", "ansible_port": 2201, "ansible_user": "deploy"},
            "db1": {"ansible_ssh_private_key_file": "~/.ssh/db", "ansible_ssh_common_args": "-o ConnectTimeout=5"},
            "local1": {"ansible_connection": "local"},
        }
    },
    "all": {"children": ["ungrouped", "prod"]},
    "prod": {"children": ["web", "db"]},
    "web": {"hosts": ["web1"]},
    "db": {"hosts": ["db1"]},
    "ungrouped": {"hosts": ["local1"]},
}


def test_inventory_hosts_get_their_groups_nearest_first_and_their_ssh_arguments() -> None:
    hosts = {h.name: h for h in hosts_of(DOCUMENT)}
    assert hosts["web1"].groups == ("web", "prod")
    assert hosts["web1"].options == ("-o", "HostName=127.0.0.1", "-p", "2201", "-l", "deploy")
    assert hosts["db1"].options == ("-i", str(Path("~/.ssh/db").expanduser()), "-o", "ConnectTimeout=5")
    assert hosts["local1"].failure is not None and "ansible_connection=local" in hosts["local1"].failure


@pytest.mark.parametrize(
    ("hostvars", "why"),
    [
        ({"ansible_host": "10.0.0.1 -oProxyCommand=x"}, "not a plain host"),
        ({"ansible_port": "22; rm"}, "not a port number"),
        ({"ansible_user": "-oProxyCommand=x"}, "not a plain host"),
        ({"ansible_ssh_common_args": "-o A=b evil.example"}, "not an ssh option"),
        ({"ansible_ssh_extra_args": "-o 'unterminated"}, "ansible_ssh_extra_args"),
    ],
)
def test_inventory_values_that_are_not_plain_are_refused(hostvars: dict[str, object], why: str) -> None:
    with pytest.raises(SshbenchError, match=why):
        ssh_arguments(hostvars)


@given(st.lists(st.sampled_from(["-o", "-i", "-p", "-4", "-x", "A=b", "host", "-Z", "--", "x y"]), max_size=8))
def test_checked_flags_passes_on_only_flags_and_their_values(words: list[str]) -> None:
    text = " ".join(f"'{w}'" for w in words)
    try:
        out = checked_flags(text, "ansible_ssh_common_args")
    except SshbenchError:
        return
    i = 0
    while i < len(out):
        assert out[i] in ALONE or out[i][:2] in WITH_VALUE, out
        i += 2 if out[i] in WITH_VALUE else 1


def test_ssh_config_aliases_match_patterns_and_wildcards_are_not_hosts(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text("Host web-1 web-2\n  Port 22\nhost=db-1\nHost web-*\n  User x\nHost !web-3 web-4\nHost *\n")
    assert host_aliases(config.read_text()) == ["web-1", "web-2", "db-1", "web-4"]
    found = from_ssh_config(config, "web-*, db-?")
    assert [(h.name, h.groups) for h in found] == [
        ("web-1", ("web-*",)),
        ("web-2", ("web-*",)),
        ("db-1", ("db-?",)),
        ("web-4", ("web-*",)),
    ]


def test_hosts_file_groups_and_invalid_lines(tmp_path: Path) -> None:
    path = tmp_path / "hosts.txt"
    path.write_text("# fleet\nalpha\n[edge]\nops@127.0.0.1:2222  # the edge box\n-oProxyCommand=x\n")
    hosts = from_file(path)
    assert [(h.name, h.groups) for h in hosts] == [
        ("alpha", ("ungrouped",)),
        ("ops@127.0.0.1:2222", ("edge",)),
        ("-oProxyCommand=x", ("edge",)),
    ]
    assert hosts[1].destination == "ssh://ops@127.0.0.1:2222"
    assert hosts[2].failure is not None and "not a valid ssh destination" in hosts[2].failure
