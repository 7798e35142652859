"""A run's header in words: what it measured and where, the machine, the server's settings, pinning, limits, the
emulated link, the crypto ceilings, the emulation, and the options that shaped it (`show`, the report)."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from sshbench import hints
from sshbench.environment import Environment, LinkInfo
from sshbench.model import is_local
from sshbench.records import RunRecord, StoredRun
from sshbench.render import screen
from sshbench.runkinds import RunKind
from sshbench.samples import RunStatus
from sshbench.units import format_value


def _measured_from(run: RunRecord) -> str:
    """Return `, measured from HOST` for a run imported from another machine, and the fleet a host's run is part of."""
    host = run.environment.client_host
    where = f", measured from {host}" if host and host != socket.gethostname() else ""
    return where + ("" if run.parent is None else f"; host {run.target} of fleet run {run.parent}")


def link_line(link: LinkInfo) -> str:
    """Return the emulated link as asked, how it was made, and what it measured before use."""
    loss = f", {link.loss * 100:g} % loss" if link.loss else ""
    asked = f"{fmt_bits(link.rate_bits)}, {format_value('ms', link.rtt_s, '.3g')} ms RTT{loss}"
    checked = ""
    if link.measured_rtt_s is not None and link.measured_up_Bps is not None and link.measured_down_Bps is not None:
        checked = (
            f"; checked: RTT {format_value('ms', link.measured_rtt_s, '.3g')} ms, plaintext TCP up "
            f"{format_value('B/s', link.measured_up_Bps)} / down {format_value('B/s', link.measured_down_Bps)} MB/s"
        )
    return f"emulated link {link.name}: {asked} ({link.method}){checked}"


def _sides(env: Environment) -> list[str]:
    """Return the sides the stored ceilings were measured on, in order (client, then server)."""
    first: dict[str, float] = next(iter(env.crypto_ceilings.values()), {})
    return list(first)


def fmt_bits(bits: float) -> str:
    """Return a rate in bits/s as `100 Mbit/s` or `1 Gbit/s`."""
    return f"{bits / 1e9:g} Gbit/s" if bits >= 1e9 else f"{bits / 1e6:g} Mbit/s"


def _server_cpu(kind: RunKind, accounting: str | None, unavailable: str | None) -> str:
    """Return how the server's CPU was measured, or why it was not (`load` reads /proc without a cgroup)."""
    if accounting:
        return accounting
    if kind.row.listener_cpu:
        return f"the listener's own and its reaped children's, from /proc (no cgroup: {unavailable})"
    return f"not measured ({unavailable})"


def _flags(env: Environment) -> str:
    """Return the CPU's crypto flags (the brief screen: the first three, the rest counted)."""
    flags = env.flags_on()
    if screen.brief() and len(flags) > 3:
        return f"{', '.join(flags[:3])} +{len(flags) - 3} more"
    return ", ".join(flags) or "none"


def _server_version(env: Environment) -> str:
    """Return `; server BANNER` (the brief screen: `; server the same` when it is the client's own version)."""
    if not env.server_banner:
        return ""
    if screen.brief() and env.server_banner == f"SSH-2.0-{env.openssh_client}":
        return "; server the same"
    return f"; server {env.server_banner}"


def _server_setup(run: RunRecord) -> list[str]:
    """Return the lines on the server's settings, how its CPU was read and the CPU pinning (the brief screen: one
    line for an embedded server with all three, pinned beside the client)."""
    embedded, pin = run.environment.embedded, run.environment.pinning
    if (
        screen.brief()
        and embedded
        and embedded.settings
        and embedded.cpu_accounting
        and pin
        and pin.client_cpu is not None
        and all(is_local(s) for s in run.options.servers)
    ):
        cpu = embedded.cpu_accounting.split(" (")[0]
        return [
            f"  server: {len(embedded.settings)} settings (--details), CPU by {cpu}, on CPU {pin.server_cpu} (ssh on "
            f"CPU {pin.client_cpu})"
        ]
    return _server_lines(run)


def _server_lines(run: RunRecord) -> list[str]:
    """Return the server's settings, how its CPU was read, and the CPU pinning, a line each."""
    lines = []
    embedded, pin = run.environment.embedded, run.environment.pinning
    if embedded and embedded.settings and screen.brief():
        lines.append(f"  server settings: {len(embedded.settings)} made for a throw-away server: --details says them")
    elif embedded and embedded.settings:
        lines.append(f"  server settings: {'; '.join(embedded.settings)}")
    if embedded and (embedded.cpu_accounting or embedded.cpu_unavailable):
        lines.append(f"  server CPU: {_server_cpu(run.kind, embedded.cpu_accounting, embedded.cpu_unavailable)}")
    if pin and pin.client_cpu is not None:
        yours = any(not is_local(s) for s in run.options.servers)  # servers side by side with a host of the user's
        server = "embedded servers" if yours else "server"
        unpinned = " (a host of yours is not pinned)" if yours else ""
        lines.append(f"  CPU pinning: ssh client on CPU {pin.client_cpu}, {server} on CPU {pin.server_cpu}{unpinned}")
    elif pin:
        lines.append(f"  CPU pinning: {pin.note}")
    return lines


def environment_lines(run: RunRecord) -> list[str]:
    """Return the run header: target, CPU, versions, server settings, pinning, limits, link, ceilings, emulation,
    and the options that shaped the measurement (the brief screen: the server's set-up in one line where it can)."""
    env = run.environment
    lines = [
        f"Run {run.id} ({run.kind}, {run.status}) on {env.target or run.target}{_measured_from(run)}",
        f"  {env.cpu_model} x{env.cpus} [{'crypto' if screen.brief() else 'crypto flags'}: {_flags(env)}], "
        f"Linux {env.kernel}",
        f"  {env.openssh_client}, {env.openssl}{_server_version(env)}",
    ]
    if run.options.ssh:  # a client by path: not the system's
        lines.append(f"  ssh client: {run.options.ssh} (--ssh)")
    lines += _server_setup(run)
    if env.client_limit:
        lines.append(f"  ssh client CPU limit: {env.client_limit}")
    if env.link:
        lines.append(f"  {link_line(env.link)}")
    if env.crypto_ceilings:
        each = "; ".join(
            f"{c} {' / '.join(format_value('MB/s', v) for v in sides.values())}"
            for c, sides in env.crypto_ceilings.items()
        )
        lines.append(f"  crypto ceilings (openssl speed -evp, MB/s {' / '.join(_sides(env))}): {each}")
    emu = env.emulation
    if emu:
        variables = " ".join(f"{k}={v}" for k, v in emu.variables.items())
        lines.append(
            f"  emulation: {emu.name} ({variables}) in {' and '.join(emu.applies_to)}; "
            f"{emu.evidence_tool}: native {format_value('MB/s', emu.native_mbps or 0)} MB/s, "
            f"emulated {format_value('MB/s', emu.emulated_mbps or 0)} MB/s; not affected: {emu.not_affected}"
        )
    return lines


def options_line(run: RunRecord) -> str:
    """Return the options that shaped a run's measurement, in words."""
    o = run.options
    plan = o.plan
    budget = "no time budget" if plan.max_time is None else f"--max-time {plan.max_time:g} s"
    ways = "+".join(d.value for d in o.directions)
    size = "--size auto" if o.size is None else f"--size {o.size // 2**20} MiB"
    ci, margin = format_value("share", plan.ci_target), format_value("share", o.margin)
    race = (
        "racing (a row significantly slower than its leader stops once its verdict says so, at 3 samples or more)"
        if plan.racing
        else "no racing"
    )
    moved = f"directions {ways}; {size}, payload {o.payload}; " if o.measure_throughput else ""  # transfers only
    return (
        f"  options: {budget}; {race}; rounds {plan.min_rounds}-{plan.max_rounds}, CI target {ci}, "
        f"margin {margin}, {plan.warmup} warm-up(s); {moved}policy {o.policy}; pinning {'on' if o.pin else 'off'}"
    )


def print_environment(console: Console, run: RunRecord) -> None:
    """Print the run header."""
    for line in environment_lines(run):
        screen.say(console, line)


def print_unfinished(console: Console, run: RunRecord) -> None:
    """Say how to finish a run that did not complete."""
    if run.status is not RunStatus.COMPLETE:
        how = hints.sshbench(run.kind.resume_command, "--resume", str(run.id))
        console.print(f"[yellow]Run {run.id} is {run.status}[/]: finish it with `{escape(how)}`")


def print_page(console: Console, stored: StoredRun, db: Path, *bodies: Callable[[Console, StoredRun], None]) -> None:
    """Print a run's header (its environment), each body, then where it is stored."""
    print_environment(console, stored.run)
    for body in bodies:
        body(console, stored)
    console.print(f"Stored as run {stored.run.id} in {db}", highlight=False, style="dim")
