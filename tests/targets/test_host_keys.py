"""An embedded server's keys: generated for it, or copied from the private directory SSHBENCH_HOST_KEYS names (the
suite's, made once per test process: tests/conftest.py), which must be the user's own and closed to others."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from sshbench.errors import ExitCode, SshbenchError
from sshbench.ssh.proc import require_binary
from sshbench.targets.servers.base import HOST_KEY_TYPES
from sshbench.targets.servers.tools import KEYS_ENV, generate_keys, public_key

NAMES = [f"host_{t}" for t in HOST_KEY_TYPES] + ["client_ed25519"]


def test_keys_are_copied_from_the_pool_and_made_where_it_has_none(
    host_keys: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keygen = require_binary("ssh-keygen", "openssh-client")
    copied, made = tmp_path / "copied", tmp_path / "made"
    copied.mkdir(mode=0o700)
    made.mkdir(mode=0o700)
    generate_keys(keygen, copied, HOST_KEY_TYPES)
    for name in NAMES:
        assert (copied / name).read_bytes() == (host_keys / name).read_bytes()
        assert stat.S_IMODE((copied / name).stat().st_mode) == 0o600  # ssh and sshd refuse a key others can read
    monkeypatch.delenv(KEYS_ENV)
    generate_keys(keygen, made, ("ed25519",))  # no pool: the server's own, new keys
    for name in ("host_ed25519", "client_ed25519"):
        assert public_key(made / f"{name}.pub") != public_key(host_keys / f"{name}.pub")
    assert not (made / "host_rsa").exists()


@pytest.mark.parametrize("mode", [0o755, 0o710])
def test_a_pool_others_can_open_is_refused_naming_the_fix(
    host_keys: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: int
) -> None:
    pool = tmp_path / "pool"
    pool.mkdir()
    pool.chmod(mode)
    monkeypatch.setenv(KEYS_ENV, str(pool))
    with pytest.raises(SshbenchError) as raised:
        generate_keys("ssh-keygen", tmp_path, ("ed25519",))
    assert raised.value.code == ExitCode.USAGE
    assert "only you can open (mode 0700)" in str(raised.value) and f"chmod 700 {pool}" in raised.value.fix
    monkeypatch.setenv(KEYS_ENV, str(tmp_path / "missing"))
    with pytest.raises(SshbenchError, match="cannot be read: No such file"):
        generate_keys("ssh-keygen", tmp_path, ("ed25519",))
