"""Which remedies `tune` measures for a bound, and how a tune run reads (pure: hand-made samples)."""

from __future__ import annotations

import dataclasses

from fakes import CHACHA, GCM, SNTRUP, stored_values
from sshbench.analyse import tune
from sshbench.environment import Environment
from sshbench.jobs.tune import remedies
from sshbench.model import Direction, JobOptions, Kind, RunKind, RunStatus, Scenario
from sshbench.records import Discovery, Negotiated, Profile, RunRecord

DISC = Discovery(
    client={"cipher": (CHACHA, GCM, "aes256-gcm@openssh.com", "aes128-ctr", "3des-cbc")},
    defaults={},
    server=None,
    server_error=None,
    profiles=(Profile("default", Negotiated(SNTRUP, "ssh-ed25519", CHACHA, None, None), None),),
)
BOTH = (Direction.DOWN, Direction.UP)


def _allowed(kind: str, name: str) -> bool:
    return name != "aes256-gcm@openssh.com"  # as a policy file could deny it


def test_a_path_bound_gets_parallel_connections_and_compression_and_never_a_cipher() -> None:
    chosen = remedies({"download": "ssh-window", "upload": "network"}, DISC, _allowed, BOTH, "zero")
    down = {sc.remedy for sc in chosen if sc.direction is Direction.DOWN}
    assert down == {"streams=1", "streams=2", "streams=4", "streams=8", "compression"}  # with the default's copy
    assert not any(sc.cipher for sc in chosen)
    assert chosen[-1] == Scenario(Kind.LATENCY, remedy="master")


def test_random_data_is_never_given_compression() -> None:
    chosen = remedies({"download": "network"}, DISC, _allowed, (Direction.DOWN,), "random")
    assert "compression" not in {sc.remedy for sc in chosen}


def test_a_cpu_bound_races_the_aead_ciphers_the_policy_allows_other_than_the_default() -> None:
    chosen = remedies({"download": "client-cpu", "upload": "crypto"}, DISC, _allowed, BOTH, "zero")
    assert {sc.cipher for sc in chosen if sc.kind is Kind.THROUGHPUT} == {GCM, None}  # not chacha (default), not denied
    assert not any(sc.remedy and sc.remedy.startswith("streams=") and sc.remedy != "streams=1" for sc in chosen)


def _run() -> RunRecord:
    opts = JobOptions(command=RunKind.TUNE, target="backup")
    return RunRecord(1, "2026-11-24T00:00:00", "2026-11-24T00:00:00", RunStatus.COMPLETE, RunKind.TUNE, "backup",
                     opts, Environment())  # fmt: skip


def test_a_tune_run_reads_as_gains_against_the_default_with_the_lines_that_give_them() -> None:
    default = Scenario(Kind.THROUGHPUT, direction=Direction.DOWN)
    copy = dataclasses.replace(default, remedy="streams=1")
    four = dataclasses.replace(default, remedy="streams=4")
    eight = dataclasses.replace(default, remedy="streams=8")
    values = {default: [24.0, 24.5, 24.2, 23.9], copy: [20.0, 21.0, 20.5, 19.8], four: [70.0, 72.0, 69.0, 71.0],
              eight: [20.2, 20.9, 20.4, 19.9]}  # fmt: skip
    stored = [stored_values(sc, v) for sc, v in values.items()]
    found = tune.findings(_run(), stored)
    (down,) = found
    assert down.default.scenario == default and down.copy.scenario == copy
    assert [r.row.scenario.remedy for r in down.remedies] == ["streams=4", "streams=8"]  # against the copy
    best = down.remedies[0]
    assert best.helps and best.verdict is not None and 3.3 < best.verdict.ratio.value < 3.6
    assert not down.remedies[1].helps  # 8 connections: not told apart from one here
    pasted = tune.paste(found)
    assert pasted["ssh_config"] == [] and "4 connections at once" in pasted["commands"][0]
