"""Endpoints: where a job's samples are taken. An embedded server started for the job (with its emulated CPU, CPU
limit and link) or a remote host resolved from the user's own ssh configuration; and the checks that say, from
discovery, whether an endpoint can be measured at all."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sshbench import hints
from sshbench.discovery import Discovery
from sshbench.errors import ExitCode, SshbenchError
from sshbench.joboptions import JobOptions
from sshbench.model import is_local
from sshbench.ssh import audit
from sshbench.ssh.destination import Target, resolve_remote
from sshbench.targets.limits import cgroups, emulation
from sshbench.targets.link import linkcheck, links, userns
from sshbench.targets.link.netns import EmulatedLink
from sshbench.targets.servers import registry
from sshbench.targets.servers.base import LocalServer

if TYPE_CHECKING:
    from sshbench.measure.scheduler import Progress


@dataclass(frozen=True)
class Endpoint:
    """Where a job connects: the target, and the embedded server behind it (None for a remote host)."""

    name: str
    target: Target
    server: LocalServer | None


@dataclass(frozen=True)
class Unavailable:
    """A server that was asked for and is not measured: it cannot run here (`skipped`) or did not start (`failed`)."""

    name: str
    spec: str
    skipped: str | None = None
    failed: str | None = None


@contextlib.contextmanager
def emulated_link(opts: JobOptions, progress: Progress | None = None) -> Iterator[EmulatedLink | None]:
    """Build and verify the job's emulated link for embedded servers (None without --link); remove it after."""
    if opts.link is None or not any(is_local(t) for t in (opts.servers or (opts.target,))):
        yield None  # a remote target with --link is refused by open_endpoints, naming the option
        return
    if progress is not None:
        progress.update(f"building and checking the emulated link ({opts.link})", 0, 1)
    with linkcheck.verified(links.parse(opts.link)) as link:
        yield link


def private_link(opts: JobOptions) -> None:
    """Before any thread starts: a normal user's --link moves sshbench into a user namespace of its own (the client's
    end of the link), or fails naming the kernel's setting; a host of the user's is out of reach from there."""
    targets = opts.servers or (opts.target,)
    if opts.link is None or not any(is_local(t) for t in targets) or not userns.needed():
        return
    remote = [t for t in targets if not is_local(t)]
    if remote:
        raise SshbenchError(
            f"--link as a normal user puts sshbench in a network namespace of its own, where {remote[0]} is out "
            "of reach",
            place="--link",
            fix=f"measure {remote[0]} in a run of its own, without --link, or run both as root: `{hints.as_root()}`",
            code=ExitCode.USAGE,
        )
    userns.enter()


def constrain(server: LocalServer, opts: JobOptions, link: EmulatedLink | None = None) -> None:
    """Give an embedded server the job's emulated CPU (its environment), CPU limit and link, before it starts."""
    server.environment = emulation.server_environment(opts.emulate)
    server.cpu_share = opts.server_cpu
    server.cpu_period = cgroups.period_us(opts.cpu_period_ms)
    if link is not None:
        server.address = link.server_address
        server.wrappers.append(link.wrap)  # outermost: the server and everything it runs are inside


def open_endpoints(
    specs: tuple[str, ...],
    ssh: str,
    tolerant: bool,
    opts: JobOptions,
    link: EmulatedLink | None,
    stack: contextlib.ExitStack,
    progress: Progress,
) -> tuple[dict[str, Endpoint], dict[str, Unavailable]]:
    """Start (or resolve) every target; when `tolerant` (servers side by side), a server that cannot run here or
    does not start, or a host that does not resolve, is reported instead of failing, and the embedded servers'
    limits (--link, --server-cpu) leave a host of the user's alone."""
    endpoints: dict[str, Endpoint] = {}
    unavailable: dict[str, Unavailable] = {}
    for i, spec in enumerate(specs):
        if not is_local(spec):
            if not tolerant:
                refuse_remote_limits(opts)
            try:
                endpoints[spec] = Endpoint(spec, resolve_remote(ssh, spec, opts.ssh_config), None)
            except SshbenchError as exc:
                if not tolerant:
                    raise
                unavailable[spec] = Unavailable(spec, spec, failed=exc.cause)
            continue
        name = registry.server_name(spec) if tolerant else spec
        hint = registry.missing(spec) if tolerant else None
        if hint:
            unavailable[name] = Unavailable(name, spec, skipped=hint)
            continue
        if tolerant:
            progress.update(f"starting {name}", i, len(specs))
        server = registry.make_server(spec)
        constrain(server, opts, link)  # emulated CPU, CPU limit and link, before it starts
        try:
            target = stack.enter_context(server)
        except SshbenchError as exc:
            if not tolerant:
                raise
            unavailable[name] = Unavailable(name, spec, failed=exc.cause)
            continue
        endpoints[name] = Endpoint(name, target, server)
    return endpoints, unavailable


def refuse_remote_limits(opts: JobOptions) -> None:
    """Refuse --server-cpu and --link for a remote target, naming the option."""
    for name, asked, does in (
        ("--server-cpu", opts.server_cpu, "limits an embedded server"),
        ("--link", opts.link, "puts embedded servers behind an emulated link"),
    ):
        if asked is not None:
            raise SshbenchError(
                f"{name} {does}, and the target is a remote host",
                place=name,
                fix=f"drop {name} (a remote server's CPU or network cannot be changed from here), "
                "or use a local target",
                code=ExitCode.USAGE,
            )


def require_started(endpoints: dict[str, Endpoint], unavailable: dict[str, Unavailable]) -> None:
    """Fail when none of the embedded servers asked for started, naming why each did not."""
    if endpoints:
        return
    reasons = "; ".join(f"{n}: {u.skipped or u.failed}" for n, u in unavailable.items())
    raise SshbenchError(
        f"no server could be started: {reasons}",
        place="--server",
        fix="name servers that can run here",
        code=ExitCode.SERVER_START,
    )


def require_connectable(disc: Discovery, target: Target) -> None:
    """Fail before measuring when even the default client profile cannot log in."""
    profile = disc.profiles[0]
    if profile.negotiated is not None:
        return
    reason = profile.failure or "unknown"
    if disc.server is None and disc.server_error:
        reason += f"; reading its KEXINIT: {disc.server_error.removeprefix(audit.PROBE_FAILED)}"
    code = ExitCode.CONNECTION_FAILED
    fix = f"check that the host is reachable and runs an SSH server: {target.ssh_hint()}"
    if "Permission denied" in reason:
        code, fix = ExitCode.AUTH_FAILED, "sshbench logs in with your keys or agent: ssh-copy-id or ssh-add"
    elif "Host key verification failed" in reason:
        fix = "connect once with plain ssh to check and accept the host key (sshbench never skips that check)"
    raise SshbenchError(f"cannot log in: {reason}", place=target.describe(), fix=fix, code=code)


def require_reachable(disc: Discovery, target: Target) -> None:
    """Fail before storing anything when the server answers neither the KEXINIT probe nor a login."""
    if disc.server is None and disc.profiles[0].negotiated is None:
        require_connectable(disc, target)
