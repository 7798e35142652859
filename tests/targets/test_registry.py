"""The server registry: target specs, availability hints and factories all come from its rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from sshbench.errors import ExitCode, SshbenchError
from sshbench.targets.servers import registry
from sshbench.targets.servers.base import LocalServer


def test_missing_binary_hint_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry.shutil, "which", lambda name, path=None: None if name == "tcpserver" else "/x")
    monkeypatch.setattr(registry.os, "geteuid", lambda: 0)
    hint = registry.missing("local:tinyssh")
    assert hint is not None and "apt-get install tinysshd ucspi-tcp" in hint


@pytest.mark.parametrize("row", registry.SERVER_TYPES, ids=lambda r: r.name)
def test_every_row_makes_its_server(row: registry.ServerType, tmp_path: Path) -> None:
    path = "/usr/sbin/sshd" if row.by_path else ""
    if row.missing(path):
        pytest.skip(f"{row.name} cannot run here: {row.missing(path)}")
    server = row.make(row.spec.split("=")[0] + (f"={path}" if path else ""), path)
    assert isinstance(server, LocalServer) and server.product
    assert server.name == (f"{row.name}={path}" if row.by_path else row.name)


def test_specs_are_checked_against_the_rows(tmp_path: Path) -> None:
    assert registry.validate("local") == "local" and registry.server_name("local") == "openssh"
    assert registry.every() == [f"local:{name}" for name in registry.KNOWN]
    assert registry.missing(f"local:sshd={tmp_path}/none") == f"{tmp_path}/none is not an executable file"
    for bad in ("local:telnetd", "local:sshd=relative/sshd", "local:sshd=/a/../b", "local:openssh=/usr/sbin/sshd"):
        with pytest.raises(SshbenchError) as err:
            registry.validate(bad)
        assert err.value.code is ExitCode.USAGE and registry.SPECS_HELP in err.value.fix
    with pytest.raises(SshbenchError) as err:
        registry.make_server(f"local:sshd={tmp_path}/none")
    assert err.value.code is ExitCode.MISSING_BINARY


def test_capabilities_come_from_the_rows() -> None:
    from sshbench import products
    from sshbench.discovery import Discovery, ServerOffer

    assert registry.capabilities(None) is None  # a host of yours: read from its banner where it matters
    tinyssh, dropbear = registry.capabilities("tinyssh"), registry.capabilities("dropbear")
    assert tinyssh is not None and tinyssh.sftp is None and tinyssh.own_crypto
    assert dropbear is not None and dropbear.window_option == "-W" and dropbear.logins_per_address == 5
    assert registry.capabilities("sshd=/opt/openssh/sbin/sshd") == products.by_name("OpenSSH")
    assert products.own_crypto() == "Dropbear, TinySSH and Go x/crypto/ssh"
    gossh = registry.capabilities("gossh")
    assert gossh is not None and gossh.own_crypto and gossh.window == 2 * 2**20 and gossh.window_option is None
    assert products.from_banner("SSH-2.0-Go") == gossh  # the library's own banner, which Gitea keeps
    offer = ServerOffer("SSH-2.0-dropbear_2022.83", (), (), (), (), ())
    assert Discovery({}, {}, offer, None, ()).most_logins() == 5
    assert Discovery({}, {}, None, None, ()).most_logins() is None


def test_only_a_server_with_a_window_option_is_widened() -> None:
    assert registry.widened("local:openssh", 8 * 2**20) is None
    assert registry.widened("local:tinyssh", 8 * 2**20) is None
    wide = registry.widened("local:dropbear", 8 * 2**20)
    assert wide is not None and wide.receive_window == 8 * 2**20 and "-W 8388608" in wide.settings
