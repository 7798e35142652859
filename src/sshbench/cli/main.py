"""The command line's spine: the `sshbench` group, its commands, and `main`, the one error boundary."""

from __future__ import annotations

import os
import signal
import sys
import traceback
from types import FrameType
from typing import ClassVar

import click

from sshbench import __version__, hints, leases
from sshbench.cli import clients, completion, fleet, interop, load, measuring, stored, tools
from sshbench.cli.common import Session
from sshbench.errors import ExitCode, SshbenchError, Terminated
from sshbench.ssh.destination import login_timeout


class DefaultJob(click.Group):
    """The `sshbench` group: with no command, or with options only `run` knows, it runs the main job, `run`; the
    options every command shares may come before the command, as git's and docker's do."""

    OWN = ("--traceback", "--version", "-h", "--help")
    SHARED: ClassVar[dict[str, bool]] = {  # option -> whether it takes a value
        "--db": True,
        "--ssh-config": True,
        "--ssh": True,
        "--json": False,
        "--wide": False,
        "--details": False,
        "--verbose": False,
    }

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Move shared options given before a command after it (`sshbench --db X tune box`), else insert `run`
        before the first option that is not the group's own (`sshbench --max-time 90s`)."""
        rest = list(args)
        i = 0
        while i < len(rest) and rest[i] in self.OWN:
            i += 1
        j = i
        while j < len(rest) and (name := rest[j].split("=", 1)[0]) in self.SHARED:
            j += 1 + int(self.SHARED[name] and "=" not in rest[j])
        if i < j < len(rest) and rest[j] in self.commands:
            rest = [*rest[:i], rest[j], *rest[i:j], *rest[j + 1 :]]
        elif i < len(rest) and rest[i].startswith("-") and rest[i] != "--":
            rest.insert(i, "run")
        return super().parse_args(ctx, rest)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """Resolve the command, or say how to measure a host of that name (`sshbench run NAME`)."""
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            raise SshbenchError(
                f"{name!r} is no sshbench command",
                place="sshbench COMMAND",
                fix=f"to measure a host of that name: `{hints.sshbench('run', name)}` (a host named like a command, "
                "such as `tune`, is reached the same way); `sshbench --help` lists the commands",
                code=ExitCode.USAGE,
            )
        return super().resolve_command(ctx, args)


@click.group(cls=DefaultJob, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="sshbench")
@click.option("--traceback", is_flag=True, help="Show Python tracebacks on errors (for bug reports).")
@click.pass_context
def cli(ctx: click.Context, traceback: bool) -> None:
    """Measure which SSH cipher, MAC, key exchange and server is fastest here, and what it costs.

    With no command, `sshbench` runs the main job (`sshbench run`) against a private, throw-away
    OpenSSH server on 127.0.0.1; `sshbench --max-time 90s` (any option of `run`) runs it with those
    options. TARGET can instead be any ssh destination or ~/.ssh/config alias (user@host, host:port,
    alias): your own keys, agent and host-key checking are used.

    \b
    Examples:
      sshbench                          discovery, latency and throughput on the embedded server
      sshbench --max-time 90s           the same within 90 seconds
      sshbench algos myserver           what client and server offer and negotiate, with ratings
      sshbench latency --kex curve25519-sha256,sntrup761x25519-sha512@openssh.com
      sshbench throughput --cipher aes128-gcm@openssh.com,chacha20-poly1305@openssh.com
      sshbench history; sshbench show 3; sshbench export 3 --format csv
    """
    ctx.ensure_object(Session).traceback = traceback
    login_timeout(os.environ.get("SSHBENCH_LOGIN_TIMEOUT"))  # refused here, with its fix, before anything runs
    if ctx.invoked_subcommand is None:
        ctx.invoke(measuring.run_cmd)


COMMANDS = (
    *measuring.COMMANDS,
    *tools.COMMANDS,
    *clients.COMMANDS,
    *interop.COMMANDS,
    *load.COMMANDS,
    *fleet.COMMANDS,
    *stored.COMMANDS,
)
for command in (*COMMANDS, completion.completion_cmd):
    cli.add_command(command)


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    """Turn SIGTERM into an exception so that servers and files are cleaned up."""
    raise Terminated()


def _interrupted(state: Session, code: ExitCode, what: str) -> int:
    """Report an interruption and how to resume; return the exit code."""
    msg = f"sshbench: {what}"
    if state.run_id is not None:
        how = hints.sshbench(state.resume_command, "--resume", str(state.run_id))
        msg += f"; every sample so far is stored in run {state.run_id}: finish it with `{how}`"
    _say(msg)
    return int(code)


def _say(line: str) -> None:
    """Write one message line to stderr, never wrapped."""
    sys.stderr.write(line.replace("\n", " ") + "\n")


def usage_error(exc: click.ClickException) -> str:
    """Return click's usage error in sshbench's one-line style: cause (place). Fix: ..."""
    ctx = getattr(exc, "ctx", None)
    where = ctx.command_path if ctx is not None else "sshbench"
    message = exc.format_message().rstrip(".")
    return f"sshbench: error: {message} ({where}). Fix: see `{where} --help`"


def _settle(db: str) -> None:
    """Mark a killed sshbench's run interrupted (the store is imported only when there is one)."""
    from sshbench.storage.store import settle

    settle(db)


def _reap_leftovers() -> None:
    """Clean up after an earlier sshbench that was killed before it could (servers, directories, its run)."""
    for lease in leases.reap_stale(_settle):
        what = [f"{len(lease.processes)} server(s)"] if lease.processes else []
        what += [f"{len(lease.dirs)} private director{'y' if len(lease.dirs) == 1 else 'ies'}"] if lease.dirs else []
        what += [f"run {run_id} marked interrupted" for _, run_id in lease.runs]
        _say(f"sshbench: cleaned up after sshbench process {lease.owner.pid}, which was killed: {', '.join(what)}")


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; the only place that turns exceptions into exit statuses."""
    signal.signal(signal.SIGTERM, _on_sigterm)
    state = Session()
    try:
        _reap_leftovers()
        cli.main(args=argv, prog_name="sshbench", standalone_mode=False, obj=state)
        code = 0
    except (click.exceptions.Abort, KeyboardInterrupt):
        code = _interrupted(state, ExitCode.INTERRUPTED, "interrupted")
    except Terminated:
        code = _interrupted(state, ExitCode.TERMINATED, "terminated")
    except click.ClickException as exc:
        _say(usage_error(exc))
        code = ExitCode.USAGE if exc.exit_code == 2 else exc.exit_code
    except SshbenchError as exc:
        if state.traceback:
            traceback.print_exc()
        text = exc.render()
        if state.run_id is not None and exc.code is ExitCode.STORAGE:  # e.g. the disk filled up during a run
            how = hints.sshbench(state.resume_command, "--resume", str(state.run_id))
            text += f"; the samples stored before this are kept in run {state.run_id}: then finish it with `{how}`"
        _say(f"sshbench: error: {text}")
        code = int(exc.code)
    sys.exit(code)
