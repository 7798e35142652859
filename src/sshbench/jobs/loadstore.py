"""How a `load` login is stored as it ends: its step's sample, with the server's reason where its log names the
drop, the server's CPU so far, and that CPU by process role where the kernel's exit records are read (root)."""

from __future__ import annotations

import socket
from collections.abc import Callable

from sshbench import hints
from sshbench.errors import Unfinished
from sshbench.joboptions import LoadOptions
from sshbench.jobs.endpoints import Endpoint
from sshbench.jobs.recording import Recording
from sshbench.loadwords import (
    ATTEMPT,
    BURST,
    DIED,
    HOST_CLOSERS,
    LOGGED,
    SAID,
    SOURCE,
    before_banner,
    refusal,
    server_said,
)
from sshbench.measure.exits import ExitWatch, Roles
from sshbench.measure.load import Finished
from sshbench.model import Scenario
from sshbench.products import LISTENER, LOST, ROLE_PHASE
from sshbench.remedy import label
from sshbench.samples import Sample
from sshbench.targets.servers.base import LocalServer
from sshbench.targets.servers.droplog import DropLog

ToSample = Callable[[Scenario, Finished], Sample]  # a finished login as its scenario's sample
Phases = tuple[tuple[str, float], ...]
CLOSES_RUN = 3  # connections in a row closed before the banner that stop a step against a host of the user's


def source(i: int, sources: int) -> str:
    """Return the loopback source address of login i."""
    return f"127.0.0.{2 + i % sources}"


class RoleMeter:
    """A step's server CPU by process role so far: its connections' processes from the kernel's exit records, the
    listener's own from /proc."""

    def __init__(self, watch: ExitWatch, server: LocalServer, listener: int) -> None:
        """Start counting at this moment (exits recorded before are not the step's)."""
        watch.exits()
        self.watch, self.server = watch, server
        self.roles = Roles(listener)
        self.began = server.listener_cpu_seconds()

    def phases(self) -> Phases:
        """Return each role's CPU seconds since the step began, as a login's phases."""
        self.roles.add(self.watch.exits())
        own = self.server.listener_cpu_seconds()
        listener = () if own is None or self.began is None else ((ROLE_PHASE + LISTENER, own - self.began),)
        lost = ((ROLE_PHASE + LOST, 1.0),) if self.watch.lost else ()  # the step's roles are not read then
        return listener + tuple((ROLE_PHASE + r, v) for r, v in self.roles.totals.items()) + lost


def sample(
    sc: Scenario,
    f: Finished,
    first: int = 0,
    burst: int = 0,
    error: str | None = None,
    server: tuple[float, float] | None = None,
    by: str = "cgroup",
    roles: Phases = (),
    attempt: int = 1,
) -> Sample:
    """Return a finished login as its step's sample (round = its place in the schedule, from 1, after `first` earlier
    ones; a burst's number as its `burst` phase); `error` replaces the generator's words; `server`: the server's CPU
    seconds so far when the step began and when the login ended, as phases (`by`: its cgroup's, or without one the
    listener's and its reaped children's); `roles`: that CPU by process role so far; `attempt`: a step run again by
    --resume (2 and up, as its `attempt` phase)."""
    phases = (("intended", f.intended), ("late", f.started - f.intended), *(((BURST, burst),) if burst else ()))
    phases += ((ATTEMPT, attempt),) if attempt > 1 else ()
    prefix = "server_cpu" if by == "cgroup" else "reaped_cpu"  # a cgroup's, or the listener's and its reaped ones'
    phases += ((f"{prefix}_from", server[0]), (f"{prefix}_to", server[1])) if server is not None else ()
    ok = f.error is None
    return Sample(
        sc,
        first + f.index + 1,
        False,
        ok=ok,
        value=f.latency if ok else None,
        wall=f.ended - f.started,
        client_cpu=f.cpu,
        phases=phases + roles,
        error=f.error if error is None or ok else error,
    )


def explained(f: Finished, address: str, drops: DropLog) -> str | None:
    """Return a failed login's words with the server's reason when its log names the drop, else None."""
    if f.error is None:
        return None
    named = SOURCE.search(f.error)  # the Go generator's words name its source address and port
    if named:
        drop = drops.claim(named[1], int(named[2]))
    elif before_banner(f.error):
        drop = drops.claim(address, None)
    else:
        return None
    return None if drop is None else f"dropped by the server {drop.why}{LOGGED}{drop.line}{SAID}{f.error}"


def own_address(host: str, port: int) -> str:
    """Return this machine's address toward a host (what the host sees logins come from; nothing is sent)."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_DGRAM) as s:
            s.connect((host, port))
            return str(s.getsockname()[0])
    except OSError:
        return "this machine's address"


class Closes:
    """Say when a step against a host of the user's must stop: at the first run of CLOSES_RUN connections closed
    before the banner (the host's MaxStartups, penalties or a per-address limit: loading on teaches nothing and may
    lock this machine out for longer)."""

    def __init__(self, address: str) -> None:
        """Count from nothing; `address`: this machine's, toward the host."""
        self.address, self.run = address, 0
        self.said: str | None = None  # why the step stopped, once it did

    def __call__(self, s: Sample) -> str | None:
        """Return why the step stops after this login, or None."""
        closed = not s.ok and before_banner(s.error or "")
        self.run = self.run + 1 if closed else 0
        if self.run < CLOSES_RUN:
            return None
        said = server_said(s.error or "")
        cause = (
            f'the host wrote "{said}" before closing them: {refusal(said)}'
            if said
            else f"what closes them on a host: {HOST_CLOSERS}"
        )
        self.said = (
            f"{CLOSES_RUN} connections in a row were closed before the banner, so the run stopped; {cause}. To "
            f"measure past penalties, the host's owner can exempt this machine: `PerSourcePenaltyExemptList "
            f"{self.address}` in its sshd_config"
        )
        return self.said


def explaining(
    where: Endpoint, own: LoadOptions, watch: ExitWatch | None, first: int = 0, burst: int = 0, attempt: int = 1
) -> ToSample:
    """Return how a login of a step or burst about to start is stored: with the server's reason where its log (from
    this moment on) names the drop, its CPU so far, and by role when `watch` reads the kernel's exit records (a
    host of the user's: the login alone); `first`: the logins stored before, `attempt`: see `sample`."""
    server = where.server
    if server is None:
        return lambda sc, f: sample(sc, f, first, burst, attempt=attempt)
    drops = DropLog(server.log)
    drops.skip()
    meter, by = (
        (server.cpu_seconds, "cgroup") if server.cpu_seconds() is not None else (server.reaped_cpu_seconds, "reaped")
    )
    began = meter()
    listener = server.pid
    roles = None if watch is None or listener is None else RoleMeter(watch, server, listener)

    def to_sample(sc: Scenario, f: Finished) -> Sample:
        """Return a login as its sample, with the server's CPU so far."""
        now = meter()
        cpu = None if began is None or now is None else (began, now)
        error = explained(f, source(f.index, own.sources), drops)
        return sample(sc, f, first, burst, error, cpu, by, roles.phases() if roles is not None else (), attempt)

    return to_sample


def alive(rec: Recording, where: Endpoint, sc: Scenario) -> None:
    """Stop the run, incomplete, when the embedded server's listener died during a step or burst: the logins after
    that failed for it, not for the load (they are kept, the step marked)."""
    server = where.server
    if server is None or server.pid is not None:
        return
    what = f"{sc.load}{label(sc.remedy)}"
    rec.failed(sc, f"{DIED}the embedded server's listener exited during {what}: its later logins failed for that")
    raise Unfinished(
        rec.run_id,
        f"the embedded {server.product} server stopped during {what} (its listener exited); every login is kept",
        place=f"run {rec.run_id}",
        fix=f"`{hints.sshbench('load', '--resume', str(rec.run_id))}` runs what is left on a fresh server (the step "
        "the server died in is kept as it is, marked), or start the run again",
    )
