"""OpenSSH 10 beside the system's, fetched by `scripts/openssh10` (which `scripts/test` runs): its sshd given by path
runs with its own helpers and `PerSourcePenalties no`, and its client negotiates ML-KEM, measured against sntrup761
and curve25519 in the same rounds."""

from __future__ import annotations

import json
import os

import pytest

from conftest import CURVE, MLKEM, SNTRUP, sshbench
from conftest import OPENSSH10 as PREFIX
from conftest import OPENSSH10_SSH as SSH
from conftest import OPENSSH10_SSHD as SSHD
from sshbench.errors import ExitCode

pytestmark = pytest.mark.integration
fetched = pytest.mark.skipif(
    not SSHD.exists() and "SSHBENCH_OPENSSH10" not in os.environ,  # scripts/test sets it: there, a miss fails
    reason=f"no OpenSSH 10 in {PREFIX}: run scripts/openssh10 (scripts/test does)",
)


@fetched
def test_openssh_10_by_path_measures_ml_kem_beside_sntrup761_and_curve25519(cli_env: dict[str, str]) -> None:
    kexes = ",".join((MLKEM, SNTRUP, CURVE))
    args = ["latency", f"local:sshd={SSHD}", "--ssh", str(SSH), "--kex", kexes, "--hostkey", "ssh-ed25519"]
    done = sshbench(cli_env, *args, "--rounds", "3", "--max-rounds", "3", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["discovery"]["server"]["banner"].startswith("SSH-2.0-OpenSSH_10."), doc["discovery"]["server"]
    default = {p["name"]: p for p in doc["discovery"]["profiles"]}["default"]["negotiated"]
    assert default["kex"] == MLKEM  # OpenSSH 10's own default, between its client and its server
    settings = " ".join(doc["run"]["environment"]["server_settings"])
    assert "PerSourcePenalties no" in settings
    rows = {r["scenario"]["kex"]: r for r in doc["results"]["latency"]}
    assert set(rows) == {MLKEM, SNTRUP, CURVE}
    for kex, row in rows.items():
        assert row["summary"]["n"] >= 3, kex
        assert row["costs"]["server_cpu"] is not None and row["costs"]["server_cpu"] > 0, (kex, row["costs"])
        assert row["client_cpu_median_s"] is not None and row["client_cpu_median_s"] > 0, kex
    costs = {c["scenario"]["kex"]: c for c in doc["kex_costs"]}
    assert set(costs) == {MLKEM, SNTRUP, CURVE} and costs[CURVE]["baseline"]
    for kex in (MLKEM, SNTRUP):  # the bytes beyond curve25519's are the key shares', give or take the names offered
        extra, shares = costs[kex]["extra_bytes"], costs[kex]["share_bytes"]
        assert costs[kex]["post_quantum"] and all(abs(e - s) <= 64 for e, s in zip(extra, shares, strict=True)), kex
        assert costs[kex]["extra_time_s"]["n"] >= 3 and costs[kex]["extra_server_cpu_s"] is not None, kex
    assert costs[MLKEM]["share_bytes"] == [1184, 1088]


@fetched
def test_a_kex_the_system_client_lacks_is_refused_with_the_client_that_has_it(cli_env: dict[str, str]) -> None:
    done = sshbench(cli_env, "latency", f"local:sshd={SSHD}", "--kex", MLKEM, "--hostkey", "ssh-ed25519")
    assert done.returncode == ExitCode.UNSUPPORTED_ALGORITHM, done.stderr
    assert MLKEM in done.stderr and "which the server offers" in done.stderr and "give --ssh" in done.stderr
    assert "Traceback" not in done.stderr
