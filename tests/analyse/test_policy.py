"""Policies per level and from a file: every exclusion says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from sshbench.analyse import policy
from sshbench.errors import SshbenchError


@pytest.mark.parametrize(
    ("level", "kind", "name", "allowed", "words"),
    [
        ("any", "cipher", "3des-cbc", True, ""),
        ("compatible", "cipher", "3des-cbc", False, "ssh-audit fails it"),
        ("compatible", "cipher", "aes128-cbc", True, ""),
        ("compatible", "mac", "hmac-sha1", False, "SHA-1"),
        ("modern", "cipher", "aes128-cbc", False, "weak cipher mode"),
        ("modern", "mac", "umac-64-etm@openssh.com", False, "64-bit tag"),
        ("modern", "kex", "curve25519-sha256", True, ""),  # not post-quantum is not weak
        ("modern", "kex", "ecdh-sha2-nistp256", False, "ssh-audit fails it"),
        ("modern", "cipher", "rot13@example.com", False, "not rated"),
        ("post-quantum", "kex", "curve25519-sha256", False, "not post-quantum"),
        ("post-quantum", "kex", "sntrup761x25519-sha512@openssh.com", True, ""),
    ],
)
def test_levels(level: str, kind: str, name: str, allowed: bool, words: str) -> None:
    verdict = policy.builtin(level).check(kind, name)
    assert verdict.allowed is allowed
    assert words in verdict.reason
    if not allowed:
        assert verdict.reason  # every exclusion says why


def test_policy_file_allows_and_denies_with_reasons(tmp_path: Path) -> None:
    path = tmp_path / "ours.toml"
    path.write_text(
        'base = "modern"\n[deny.cipher]\n"aes256-ctr" = "we standardise on AES-128"\n'
        '[allow.mac]\n"umac-64-etm@openssh.com" = "accepted on the backup network"\n'
    )
    p = policy.resolve(str(path))
    assert p.check("cipher", "aes256-ctr").reason == "denied by policy file ours.toml: we standardise on AES-128"
    assert p.check("mac", "umac-64-etm@openssh.com").allowed
    assert not p.check("cipher", "aes128-cbc").allowed  # the base level still applies
    assert p.check("cipher", "aes128-ctr").allowed


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('base = "paranoid"\n', "base = 'paranoid'"),
        ("[deny.ciphers]\nx = 'y'\n", "kind must be one of"),
        ("[deny.cipher]\nx = 3\n", "map algorithm names to reasons"),
        ("colour = 'red'\n", "unknown keys colour"),
        ("base = \n", "Invalid"),
    ],
)
def test_bad_policy_files_are_named(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(SshbenchError) as err:
        policy.resolve(str(path))
    assert words in err.value.cause and err.value.place == str(path)
