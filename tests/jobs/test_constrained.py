"""Constrained CPUs per side, with the real CLI and a real embedded OpenSSH server: a server without AES
instructions at half a CPU makes chacha20-poly1305 the faster cipher, while on the native CPU AES-GCM is;
the limits are recorded with the run and nothing is left behind."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import sshbench
from sshbench.targets.limits import cgroups

pytestmark = [pytest.mark.integration, pytest.mark.slow]
GCM, CHACHA = "aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com"
ARGS = [
    "throughput",
    "--cipher",
    f"{GCM},{CHACHA}",
    "--size",
    "64M",
    "--rounds",
    "6",
    "--max-rounds",
    "6",
    "--max-time",
    "3m",
    "--json",
]


def _quota_possible() -> bool:
    """Return True when this machine lets sshbench make a CPU-quota cgroup."""
    group, _ = cgroups.limit(f"sshbench-probe-{os.getpid()}", 0.5)
    if group is None:
        return False
    cgroups.release(group)
    return True


needs_quota = pytest.mark.skipif(os.geteuid() != 0 or not _quota_possible(), reason="needs root and a cgroup cpu quota")


def _rates(doc: dict[str, object]) -> dict[tuple[str, str], tuple[float, float, float]]:
    """Return (median, CI low, CI high) per (cipher, result group) from a run document."""
    out = {}
    for group, rows in doc["results"].items():  # type: ignore[attr-defined]
        for row in rows:
            s = row["summary"]
            out[(row["scenario"]["cipher"], group)] = (s["median"], s["ci_low"], s["ci_high"])
    return out


@needs_quota
def test_a_half_cpu_server_without_aes_instructions_makes_chacha20_faster(cli_env: dict[str, str]) -> None:
    done = sshbench(cli_env, *ARGS, "--emulate", "server:no-aesni", "--server-cpu", "50%", "--client-cpu", "150%")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    rates = _rates(doc)
    for way in ("download", "upload"):
        chacha, gcm = rates[(CHACHA, way)], rates[(GCM, way)]
        assert chacha[1] > gcm[2], f"{way}: chacha20 {chacha} is not significantly faster than AES-GCM {gcm}"
    env = doc["run"]["environment"]
    assert any(s.startswith("CPU limit 50% of one CPU (cgroup") for s in env["server_settings"])
    assert env["client_limit"].startswith("150% of one CPU (cgroup")
    assert env["emulation"]["applies_to"] == ["embedded OpenSSH server"]  # the client keeps AES-NI
    assert not [p for p in Path("/sys/fs/cgroup/cpu").glob("sshbench-*")]  # the quota groups are gone
    shown = sshbench(cli_env, "show", "last").stdout
    assert "CPU limit 50% of one CPU" in shown and "ssh client CPU limit: 150% of one CPU" in shown


def test_on_the_native_cpu_aes_gcm_is_faster(cli_env: dict[str, str]) -> None:
    done = sshbench(cli_env, *ARGS)
    assert done.returncode == 0, done.stderr
    rates = _rates(json.loads(done.stdout))
    for way in ("download", "upload"):
        assert rates[(GCM, way)][0] > rates[(CHACHA, way)][0], f"{way}: {rates}"


def test_limits_that_cannot_apply_are_refused(cli_env: dict[str, str]) -> None:
    remote = sshbench(cli_env, "throughput", "127.0.0.1:1", "--server-cpu", "50%")
    assert remote.returncode == 2 and "--server-cpu limits an embedded server" in remote.stderr
    emulated = sshbench(cli_env, "throughput", "127.0.0.1:1", "--emulate", "server:no-aesni")
    assert emulated.returncode == 2 and "use --emulate client:no-aesni" in emulated.stderr
    bad = sshbench(cli_env, "throughput", "--server-cpu", "lots")
    assert bad.returncode == 2 and "percentage of one CPU" in bad.stderr
