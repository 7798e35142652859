"""The server's CPU per sample waits for the sample's own processes only: a master connection's session, there
before the sample and after it, made every `tune` sample wait the whole idle timeout (3 s) for nothing."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from sshbench.measure.costs import metered
from sshbench.model import Kind, Scenario
from sshbench.remedy import MASTER
from sshbench.samples import Sample
from sshbench.targets.servers.base import LocalServer


@dataclass
class _Proc:
    pid: int


@dataclass
class _Server:
    """A server view whose one connection (a master's session) outlives every sample."""

    name: str = "fake"
    pid: int | None = 1
    standing_given: list[frozenset[int]] = field(default_factory=list)
    group: None = None  # no cgroup: LocalServer.wait_idle reads the processes

    def processes(self) -> list[_Proc]:
        return [_Proc(1), _Proc(42)]

    def connection_processes(self) -> list[_Proc]:
        return [_Proc(42)]

    def _unreaped(self, standing: frozenset[int]) -> list[int]:
        return []  # none exited unreaped

    def connection_pids(self) -> frozenset[int]:
        return frozenset({42})

    def role(self, proc: object) -> str:
        return "session"

    def cpu_seconds(self) -> float | None:
        return 1.0

    def cpu_counter(self) -> contextlib.AbstractContextManager[Callable[[], float | None]]:
        return contextlib.nullcontext(self.cpu_seconds)

    def wait_idle(self, timeout: float = 3.0, standing: frozenset[int] = frozenset()) -> bool:
        self.standing_given.append(standing)
        return LocalServer.wait_idle(self, timeout, standing)  # type: ignore[arg-type]


def test_a_connection_open_before_the_sample_is_not_waited_for() -> None:
    server = _Server()
    take = metered(lambda sc, rnd, w: Sample(sc, rnd, w, True, 0.01, 0.01), server, watch_memory=False)  # type: ignore[arg-type]
    start = time.monotonic()
    taken = take(Scenario(Kind.LATENCY, remedy=MASTER), 1, False)
    assert time.monotonic() - start < 1.0  # not the 3 s idle timeout
    assert server.standing_given == [frozenset({42})] and taken.server_cpu == 0.0
