"""`load --job session`'s steps read back: memory per session above the idle server, per role, its CPU at rest, the
--sessions words, and what a machine cannot hold said before it is tried."""

from __future__ import annotations

import pytest

from sshbench.analyse.sessions import read_step
from sshbench.cli.loadparse import parse_sessions
from sshbench.errors import SshbenchError
from sshbench.jobs.sessions import rest_sample, too_big
from sshbench.loadsteps import StepKey
from sshbench.loadwords import IDLE
from sshbench.measure.sessions import Rest
from sshbench.model import Kind, Scenario
from sshbench.records import MemoryRecord, StoredScenario
from sshbench.samples import Sample

MIB = 2**20


def _memory(state: str, role: str, processes: int, pss_mib: float) -> MemoryRecord:
    """Return a role's snapshot (RSS three times its PSS)."""
    return MemoryRecord("openssh", state, role, processes, 0, int(3 * pss_mib * MIB), int(pss_mib * MIB))


def test_a_step_reads_its_memory_per_session_above_the_idle_server_and_its_cpu_at_rest() -> None:
    sc = Scenario(Kind.LATENCY, load=StepKey.sessions(100))
    opened = [Sample(sc, i + 1, False, True, 0.1 + i / 1000, 0.1, client_cpu=0.001) for i in range(99)]
    refused = Sample(sc, 100, False, False, None, 0.0, error="Connection refused")
    rest = rest_sample(sc, Rest(99, 2.0, 0.01, "cgroup"), {"files": (1024, 20000), "processes": (500, 500)})
    memory = [
        _memory(IDLE, "listener", 1, 6.0),
        _memory("100 sessions", "listener", 1, 2.0),  # its shared pages now split 200 ways
        _memory("100 sessions", "session", 99, 99 * 1.5),
        _memory("100 sessions", "command", 99, 99 * 0.25),
        _memory("100 sessions", "client", 1, 40.0),  # the client's record is not the server's
    ]
    got = read_step(StoredScenario(1, 0, sc, None, (*opened, refused, rest)), memory)
    assert got.n == 100 and got.held == 99 and got.opened == 99 and got.failed == 1
    assert got.causes == (("Connection refused", 1),) and got.p50 == pytest.approx(0.149, abs=0.001)
    whole = 2.0 + 99 * 1.75
    assert got.pss == pytest.approx(whole * MIB, abs=2) and got.processes == 199
    assert got.per_session == pytest.approx((whole - 6.0) * MIB / 99, rel=1e-6)
    assert got.rss_per_session == pytest.approx(3 * (whole - 6.0) * MIB / 99, rel=1e-6)
    assert {r.role: r.per_session / MIB for r in got.roles} == pytest.approx({"session": 1.5, "command": 0.25})
    assert got.listener == 2 * MIB and got.cpu_share == pytest.approx(0.005) and got.cpu_by == "cgroup"
    assert got.files == (1024, 20000) and got.not_run is None


def test_a_step_not_run_says_why_and_reads_nothing() -> None:
    sc = Scenario(Kind.LATENCY, load=StepKey.sessions(1000))
    got = read_step(StoredScenario(1, 0, sc, "skipped: not run: 1000 sessions needs about 4064 files", ()), [])
    assert got.not_run is not None and "4064" in got.not_run
    assert got.held is None and got.per_session is None and got.roles == () and got.cpu_share is None


def test_sessions_are_rising_counts_and_bad_ones_refused() -> None:
    assert parse_sessions("1,10,100,1000") == (1, 10, 100, 1000) and parse_sessions("5") == (5,)
    for bad in ("0", "10,1", "1,1", "x", "", "1,20000"):
        with pytest.raises(SshbenchError):
            parse_sessions(bad)


def test_a_step_that_would_not_fit_the_memory_available_is_said_before_it_is_tried() -> None:
    memory = [_memory(IDLE, "listener", 1, 6.0), _memory("100 sessions", "session", 100, 100 * 2.0)]
    assert too_big(1000, memory, 0) is None  # nothing known yet
    assert too_big(1000, memory, 100) is None  # 2 GiB here is far under this machine's memory
    why = too_big(10**8, memory, 100)
    assert why is not None and "1.94 MiB each at 100" in why and "available" in why


def test_the_server_is_named_by_its_banner_with_its_product_where_the_banner_does_not_say_it() -> None:
    from sshbench.analyse.sessions import server_label
    from sshbench.environment import EmbeddedInfo, Environment

    def env(product: str, banner: str | None) -> Environment:
        """Return an environment of an embedded server with this product and banner."""
        return Environment(server_banner=banner, embedded=EmbeddedInfo("x", product, (), None, None))

    assert server_label(env("OpenSSH", "SSH-2.0-OpenSSH_10.0p2 Debian-7")) == "OpenSSH_10.0p2"
    assert server_label(env("Go x/crypto/ssh", "SSH-2.0-Go")) == "Go x/crypto/ssh (Go)"
    assert server_label(env("TinySSH", "SSH-2.0-tinysshd_20230101")) == "tinysshd_20230101"
    assert server_label(env("Dropbear", None)) == "Dropbear"
