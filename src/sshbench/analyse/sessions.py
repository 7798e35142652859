"""What a `load --job session` run's stored steps say: per number of sessions held, how many opened and how fast
(an HdrHistogram of the stored openings), failures by cause, the server's memory at rest (PSS, above the idle
server's, per session and per process role) and its CPU at rest."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from sshbench.analyse.load import cause, histogram
from sshbench.environment import Environment
from sshbench.loadwords import IDLE
from sshbench.records import MemoryRecord, StoredRun, StoredScenario


@dataclass(frozen=True)
class Role:
    """One process role's memory with N sessions held, above the idle server's."""

    role: str
    processes: int
    per_session: float  # PSS bytes per session held above the idle server's (a listener's may fall: shared pages
    # are split between more processes)


@dataclass(frozen=True)
class Held:
    """One step of sessions held, read back."""

    n: int  # sessions asked for
    held: int | None  # open at rest (None: the step did not reach its reading)
    opened: int  # sessions opened in this step
    failed: int
    causes: tuple[tuple[str, int], ...]
    p50: float | None  # seconds to open a session (login and its command started)
    p99: float | None
    pss: int | None  # the server's whole PSS at rest, bytes
    processes: int | None  # the server's processes at rest
    per_session: float | None  # PSS bytes per session held, above the idle server's
    rss_per_session: float | None  # RSS bytes per session above idle (counts shared pages in full)
    roles: tuple[Role, ...]
    listener: int | None  # the listener's whole PSS at rest (one process; its share of shared pages falls as more
    # processes map them, and the Go server's grows: it serves every session itself)
    cpu_share: float | None  # the server's CPU at rest, of one CPU
    cpu_by: str | None  # cgroup | processes
    files: tuple[int, int] | None  # the soft limit of open files before the run raised it, and as raised
    not_run: str | None  # why the step was not run


def _sum(records: Sequence[MemoryRecord], attr: str) -> int | None:
    """Return a field summed over records (None when any PSS is unknown or there are none)."""
    values = [getattr(m, attr) for m in records]
    return None if not values or None in values else sum(values)


def _roles(at: Sequence[MemoryRecord], idle: Sequence[MemoryRecord], held: int) -> tuple[Role, ...]:
    """Return each role's PSS per session above its idle PSS (the listener and the client's record left out)."""
    before = {m.role: m.pss or 0 for m in idle}
    return tuple(
        Role(m.role, m.processes, ((m.pss or 0) - before.get(m.role, 0)) / held)
        for m in at
        if m.role not in ("client", "listener")
    )


def read_step(st: StoredScenario, memory: Sequence[MemoryRecord]) -> Held:
    """Summarize one step from its stored sessions, its rest sample and the memory snapshots."""
    n = st.scenario.load.count if st.scenario.load else 0
    opened = [s for s in st.samples if not s.warmup]
    ok = [s.value for s in opened if s.ok and s.value is not None]
    h = histogram(ok) if ok else None
    rest = next((s for s in st.samples if s.warmup and "rest" in dict(s.phases)), None)
    phases = dict(rest.phases) if rest is not None else {}
    held = int(phases["held"]) if "held" in phases else None
    idle = [m for m in memory if m.state == IDLE and m.role != "client"]
    at = [m for m in memory if m.state == str(st.scenario.load) and m.role != "client"]
    pss, idle_pss = _sum(at, "pss"), _sum(idle, "pss")
    rss, idle_rss = _sum(at, "rss"), _sum(idle, "rss")
    files = (int(phases["files_from"]), int(phases["files"])) if "files" in phases else None
    return Held(
        n=n,
        held=held,
        opened=len(ok),
        failed=len(opened) - len(ok),
        causes=tuple(Counter(cause(s.error) for s in opened if not s.ok).most_common()),
        p50=h.get_value_at_percentile(50.0) / 1e6 if h else None,
        p99=h.get_value_at_percentile(99.0) / 1e6 if h else None,
        pss=pss,
        processes=sum(m.processes for m in at) if at else None,
        per_session=(pss - idle_pss) / held if held and pss is not None and idle_pss is not None else None,
        rss_per_session=(rss - idle_rss) / held if held and rss is not None and idle_rss is not None else None,
        roles=_roles(at, idle, held) if held and at else (),
        listener=next((m.pss for m in at if m.role == "listener"), None),
        cpu_share=rest.server_cpu / rest.wall if rest is not None and rest.server_cpu is not None else None,
        cpu_by="cgroup" if "rest_cgroup" in phases else "processes" if "rest_processes" in phases else None,
        files=files,
        not_run=st.failure if st.failure and not st.samples else None,
    )


def held_steps(stored: StoredRun) -> list[Held]:
    """Return a session run's steps in order."""
    return [read_step(st, stored.memory) for st in stored.scenarios]


def idle_pss(stored: StoredRun) -> int | None:
    """Return the idle server's PSS, bytes."""
    return _sum([m for m in stored.memory if m.state == IDLE and m.role != "client"], "pss")


def server_label(env: Environment) -> str:
    """Return the server as its banner names it (`OpenSSH_10.0p2`; `Go x/crypto/ssh (Go)` where the banner does not
    name the product), else its product."""
    product = env.embedded.product if env.embedded else "the server"
    software = env.server_banner.removeprefix("SSH-2.0-").split()[0] if env.server_banner else ""
    if not software:
        return product
    return software if software.lower().startswith(product.lower()[:5]) else f"{product} ({software})"
