"""Policies per level and from a file; sweep analysis and recommendations from hand-made samples."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sshbench import analysis, policy
from sshbench.errors import SshbenchError
from sshbench.export import to_shell_csv
from sshbench.model import Direction, Kind, Sample, Scenario
from sshbench.proc import require_binary
from sshbench.snippets import ssh_config, sshd_config
from sshbench.store import StoredScenario

CHACHA, GCM, CTR = "chacha20-poly1305@openssh.com", "aes128-gcm@openssh.com", "aes128-ctr"


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


def _stored(sc: Scenario, values: list[float]) -> StoredScenario:
    """Return a stored scenario with the given measured values (plus one warm-up)."""
    samples = [Sample(sc, 0, True, True, values[0] * 0.5, 1.0)]
    samples += [Sample(sc, i, False, True, v, 1.0, nbytes=2**28) for i, v in enumerate(values, 1)]
    return StoredScenario(0, 0, sc, None, tuple(samples))


def _thr(cipher: str, mac: str | None, rate: float, d: Direction) -> StoredScenario:
    """Return a throughput scenario around `rate` MB/s (+-1 %)."""
    sc = Scenario(Kind.THROUGHPUT, cipher=cipher, mac=mac, direction=d)
    return _stored(sc, [rate * f for f in (0.99, 1.0, 1.01, 0.995, 1.005, 1.0)])


def _lat(kex: str, hostkey: str, seconds: float) -> StoredScenario:
    """Return a latency scenario around `seconds`."""
    return _stored(Scenario(Kind.LATENCY, kex=kex, hostkey=hostkey), [seconds * f for f in (0.99, 1, 1.01, 1, 1, 1)])


def factorised_sweep() -> list[StoredScenario]:
    """A small factorised sweep: AEAD ciphers, CBC and CTR with the default MAC, MACs with aes128-ctr."""
    rates = {
        (GCM, None): 1000,
        (CHACHA, None): 600,
        ("aes128-cbc", "umac-64-etm@openssh.com"): 1200,
        (CTR, "umac-64-etm@openssh.com"): 500,
        (CTR, "hmac-sha2-256-etm@openssh.com"): 400,
        (CTR, "hmac-sha1"): 450,
    }
    stored = [_thr(c, m, r, d) for (c, m), r in rates.items() for d in Direction]
    stored += [
        _lat("sntrup761x25519-sha512@openssh.com", "ssh-ed25519", 0.200),
        _lat("curve25519-sha256", "ssh-ed25519", 0.130),
        _lat("ecdh-sha2-nistp256", "ssh-ed25519", 0.120),
        _lat("sntrup761x25519-sha512@openssh.com", "rsa-sha2-512", 0.210),
    ]
    return stored


DISCOVERY = {
    "profiles": [
        {
            "name": "default",
            "negotiated": {
                "kex": "sntrup761x25519-sha512@openssh.com",
                "hostkey": "ssh-ed25519",
                "cipher": CHACHA,
                "mac": None,
            },
        }
    ]
}


def test_dimensions_use_the_reference_slices() -> None:
    dims = analysis.dimensions(factorised_sweep(), full=False)
    ctr = next(r for r in dims if r.kind == "cipher" and r.algorithm == CTR and r.direction == "down")
    assert ctr.basis == "with umac-64-etm@openssh.com" and ctr.estimate.median == pytest.approx(500, rel=0.01)
    sha1 = next(r for r in dims if r.kind == "mac" and r.algorithm == "hmac-sha1" and r.direction == "up")
    assert sha1.basis == f"with {CTR}" and sha1.estimate.median == pytest.approx(450, rel=0.01)
    kex = [r.algorithm for r in dims if r.kind == "kex"]
    assert kex[0] == "ecdh-sha2-nistp256"  # quickest first
    assert {r.algorithm for r in dims if r.kind == "hostkey"} == {"ssh-ed25519", "rsa-sha2-512"}


def test_unmeasured_pairs_are_predicted_from_per_byte_costs() -> None:
    combos = analysis.combinations(factorised_sweep())
    pred = next(c for c in combos if c.cipher == "aes128-cbc" and c.mac == "hmac-sha1")
    assert pred.predicted
    # 1/T = 1 / (1/1200 + 1/450 - 1/500)
    assert pred.rates["down"].median == pytest.approx(1 / (1 / 1200 + 1 / 450 - 1 / 500), rel=0.01)
    assert pred.rates["down"].low < pred.rates["down"].median < pred.rates["down"].high
    assert combos[0].label == "aes128-cbc + umac-64-etm@openssh.com" and not combos[0].predicted


def test_recommendation_overall_within_policy_and_handshake() -> None:
    rec = analysis.recommend(factorised_sweep(), DISCOVERY, policy.builtin("modern"), full=False)
    assert rec.overall is not None and rec.within_policy is not None and rec.handshake is not None
    assert (rec.overall.cipher, rec.overall.mac) == ("aes128-cbc", "umac-64-etm@openssh.com")
    assert rec.overall.kex == "ecdh-sha2-nistp256"
    assert (rec.within_policy.cipher, rec.within_policy.mac) == (GCM, None)
    assert rec.within_policy.kex == "curve25519-sha256"  # allowed: not post-quantum is not weak
    gain = rec.within_policy.gain
    assert (
        gain is not None and gain.baseline == CHACHA and gain.percent == pytest.approx(100 * (1000 / 600 - 1), rel=0.02)
    )
    assert gain.low < gain.percent < gain.high
    lat_gain = rec.within_policy.latency_gain
    assert lat_gain is not None and lat_gain.percent == pytest.approx(100 * (0.130 / 0.200 - 1), rel=0.02)  # -35 %
    assert rec.within_policy.hostkey is None and "HostKeyAlgorithms" not in rec.within_policy.lists
    assert any("keep it" in c for c in rec.caveats)  # ed25519 is already the quickest host key
    assert any("CBC excluded by policy" in c for c in rec.caveats)
    reasons = {(k, a): r for k, a, r in rec.excluded}
    assert "weak cipher mode" in reasons[("cipher", "aes128-cbc")]
    assert "SHA-1" in reasons[("mac", "hmac-sha1")]
    assert ("kex", "curve25519-sha256") not in reasons


def test_snippets_are_valid_ssh_and_sshd_config(tmp_path: Path) -> None:
    rec = analysis.recommend(factorised_sweep(), DISCOVERY, policy.builtin("modern"), full=False)
    ssh, sshd, keygen = (require_binary(b, "openssh-client") for b in ("ssh", "sshd", "ssh-keygen"))
    subprocess.run([keygen, "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "hk")], check=True)
    for choice in (rec.overall, rec.within_policy, rec.handshake):
        assert choice is not None
        client = tmp_path / "ssh_config"
        client.write_text(ssh_config(choice, "backup-host", "test"))
        dump = subprocess.run([ssh, "-G", "-F", str(client), "backup-host"], capture_output=True, text=True)
        assert dump.returncode == 0, dump.stderr
        effective = dict(line.split(" ", 1) for line in dump.stdout.splitlines() if " " in line)
        for key, values in choice.lists.items():
            assert effective[key.lower()] == ",".join(values)
        server = tmp_path / "sshd_config"
        server.write_text(sshd_config(choice, "test") + f"HostKey {tmp_path / 'hk'}\n")
        test = subprocess.run([sshd, "-T", "-f", str(server)], capture_output=True, text=True)
        assert test.returncode == 0, test.stderr
        for key, values in choice.lists.items():
            assert f"{key.lower()} {','.join(values)}" in test.stdout


def test_shell_csv_layout() -> None:
    files = to_shell_csv(factorised_sweep(), full=False)
    assert set(files) == {"kex.csv", "cipher-send.csv", "cipher-receive.csv", "mac-send.csv", "mac-receive.csv"}
    lines = files["cipher-receive.csv"].splitlines()
    assert lines[0] == "algorithm,time"
    times = dict(line.split(",") for line in lines[1:])
    assert float(times[GCM]) == pytest.approx(2**30 / 1e9, rel=0.02)  # 1 GiB at 1000 MB/s
    assert "hmac-sha1" in files["mac-send.csv"] and GCM not in files["mac-send.csv"]
    assert files["kex.csv"].splitlines()[1].startswith("ecdh-sha2-nistp256,0.12")
