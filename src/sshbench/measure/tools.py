"""Copy a file with the tools people use (scp, sftp, rsync over ssh) and with no SSH at all (socat's raw TCP, an
rsync daemon), counting the bytes where they arrive.

Each sample copies a file of `size` bytes from a tmpfs directory on one side into an emptied tmpfs directory
on the other. Its steady rate is measured like the pipe's: after the first 20 % of the file (at least 8 MiB,
at most half) up to the moment the whole file is there, from the size of what has arrived, read every 10 ms
where the file arrives on this machine (downloads, and uploads to an embedded server), or from the tool's
reads of the file up to its exit (uploads to a remote host, whose scratch directory is ssh/scratch.py's).
The file's size is checked after every copy. The real binaries move the bytes; Python only stats the file.

Commands (fixed argv, no shell; algorithm names were validated before planning):
- scp: `scp -q -F CONFIG -o ... SRC ALIAS:DST` (OpenSSH 9's scp speaks SFTP to the server); scp-legacy adds
  `-O` (the original SCP protocol: the server runs `scp -f`/`scp -t`, for servers without SFTP such as TinySSH).
- sftp: `sftp -q -b BATCH -F CONFIG -o ... ALIAS` with `get`/`put` in the batch file.
- rsync: `rsync --whole-file --inplace -e 'ssh -F CONFIG -o ...' SRC ALIAS:DST`.
- tcp: socat from the file to a socat listener that writes the file (or from one that sends `outbox/file`), both
  with 1 MiB blocks (`-b`).
- rsyncd: `rsync --whole-file --inplace` to or from `rsync://ADDRESS:PORT/sshbench/` (a plaintext daemon).
"""

from __future__ import annotations

import shlex
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from sshbench.joboptions import JobOptions
from sshbench.measure.samplers import MIN_SIZE, calibration_size, failed_sample, measured_sample
from sshbench.measure.steady import steady_rate
from sshbench.model import LEGACY_SCP, PLAIN_TOOLS, SOCAT_BLOCK, Direction, Kind, Scenario
from sshbench.payloads import Payload
from sshbench.samples import Sample
from sshbench.ssh.destination import COMMON_OPTIONS, Target
from sshbench.ssh.proc import run_timed
from sshbench.ssh.scratch import RemoteScratch
from sshbench.ssh.text import ssh_failure_reason
from sshbench.ssh.timed import Finished, Watching

PROBE = 0.01
MB = 1_000_000


@dataclass(frozen=True)
class Plain:
    """Where the plaintext baselines listen (inside the server's namespace on an emulated link)."""

    address: str
    tcp_up: int  # socat writing what arrives into the server's inbox
    tcp_down: int  # socat sending the server's source file
    rsyncd: int  # rsync daemon serving the server's directory as module `module`
    module: str


@dataclass(frozen=True)
class Binaries:
    """The tools' absolute paths."""

    ssh: str
    scp: str
    sftp: str
    rsync: str
    socat: str


def _ssh_options(target: Target, sc: Scenario) -> list[str]:
    """Return the `-F`/`-o` options of the pipe's ssh (without flags scp and sftp read differently)."""
    pairs = [COMMON_OPTIONS[i : i + 2] for i in range(len(COMMON_OPTIONS)) if COMMON_OPTIONS[i] == "-o"]
    return [*(arg for pair in pairs for arg in pair), *target.options, *sc.ssh_options()]


def _dir_bytes(folder: Path) -> int:
    """Return the bytes in a directory's files (rsync and scp may write under a temporary name)."""
    total = 0
    for entry in folder.iterdir():
        try:
            total += entry.stat().st_size
        except OSError:
            continue
    return total


class ToolSampler:
    """Take file-copy samples, sizing each scenario's file for about `sample_seconds` after its warm-up.

    `remote` is the server's directory: a local path for an embedded server (the arrival of uploads is watched
    there), or a scratch directory on a remote host (uploads are counted by the tool's reads of the file, up to
    its exit, and their size checked on the host afterwards, like the pipe's uploads to a remote host)."""

    mark: str | None = None  # what the copying program prints once logged in (a library's driver; sftp prints none)

    def __init__(
        self,
        bins: Binaries,
        target: Target,
        opts: JobOptions,
        local: Path,
        remote: Path | RemoteScratch,
        plain: Plain | None,
    ):
        self.bins, self.target, self.opts, self.plain = bins, target, opts, plain
        self.local, self.remote = local, remote
        self.sources = {"local": Payload("zero", local)}  # sparse files of zeros
        if isinstance(remote, Path):
            self.sources["remote"] = Payload("zero", remote)
        self.sizes: dict[str, int] = {}
        self.directions: dict[str, tuple[Direction | None, bool]] = {}  # scenario key -> (direction, plaintext?)
        self.made: dict[int, str] = {}  # the source files made on a remote host, by size

    def command(self, sc: Scenario, source: str, dest: str, workdir: Path) -> list[str]:
        """Return the argv that copies `source` to `dest` for this scenario."""
        b, alias, down = self.bins, self.target.destination, sc.direction is Direction.DOWN
        ssh_opts = _ssh_options(self.target, sc)
        ends = [f"{alias}:{source}", dest] if down else [source, f"{alias}:{dest}"]
        if sc.tool in ("scp", LEGACY_SCP):
            return [b.scp, *(["-O"] if sc.tool == LEGACY_SCP else []), "-q", "-S", b.ssh, *ssh_opts, *ends]
        if sc.tool == "sftp":
            batch = workdir / "sftp-batch"
            batch.write_text(f"{'get' if down else 'put'} {source} {dest}\n")
            return [b.sftp, "-q", "-S", b.ssh, "-b", str(batch), *ssh_opts, alias]
        if sc.tool == "rsync":
            shell = shlex.join([b.ssh, *ssh_opts])  # rsync splits -e at spaces and honours quotes
            return [b.rsync, "--whole-file", "--inplace", "-e", shell, *ends]
        p = self.plain
        assert p is not None, "plaintext baselines run against embedded servers only"
        if sc.tool == "tcp":  # 1 MiB blocks: socat's 8 KiB default holds the baseline below scp (docs/BENCHMARKS.md)
            if down:
                return [b.socat, "-u", "-b", str(SOCAT_BLOCK), f"TCP:{p.address}:{p.tcp_down}", f"CREATE:{dest}"]
            return [b.socat, "-u", "-b", str(SOCAT_BLOCK), f"OPEN:{source}", f"TCP:{p.address}:{p.tcp_up}"]
        url = f"rsync://{p.address}:{p.rsyncd}/{p.module}"
        ends = [f"{url}/{PurePosixPath(source).name}", dest] if down else [source, f"{url}/inbox/file"]
        return [b.rsync, "--whole-file", "--inplace", *ends]

    def _calibrated(self, sc: Scenario, rate: float) -> int:
        """Return the file size for a scenario's samples: about `sample_seconds` of its warm-up rate; a plaintext
        baseline copies the largest file the SSH copies of its direction copy, so that both write the same amount of
        fresh tmpfs memory per sample (a baseline sized by its own, far higher rate wrote ~2 GB files and measured
        the memory's first touch, not the network: docs/BENCHMARKS.md)."""
        own = max(MIN_SIZE, int(rate * MB * self.opts.sample_seconds) // 2**20 * 2**20)
        self.directions[sc.key] = (sc.direction, sc.tool in PLAIN_TOOLS)
        if sc.tool not in PLAIN_TOOLS:
            return own
        ssh = [self.sizes[k] for k, (d, plain) in self.directions.items() if d is sc.direction and not plain]
        return max(ssh, default=own)

    def _source(self, size: int, down: bool, tool: str | None) -> str:
        """Return the file to copy from: on the server's side for a download, on this machine's for an upload."""
        if not down:
            return str(self.sources["local"].upload_source(size))
        if isinstance(self.remote, RemoteScratch):
            if size not in self.made:
                self.made[size] = self.remote.source(size)
            return self.made[size]
        source = self.sources["remote"].upload_source(size)
        if tool == "tcp":  # the plain TCP listener always sends outbox/file
            outbox = self.remote / "outbox"
            outbox.mkdir(mode=0o700, exist_ok=True)
            (outbox / "file").unlink(missing_ok=True)
            (outbox / "file").symlink_to(source)
        return str(source)

    def _watched_inbox(self, down: bool) -> Path | None:
        """Return the emptied directory whose growth times the copy (None: an upload to a remote host)."""
        if down:
            inbox = self.local / "inbox"
        elif isinstance(self.remote, RemoteScratch):
            return None
        else:
            inbox = self.remote / "inbox"
        shutil.rmtree(inbox, ignore_errors=True)
        inbox.mkdir(mode=0o700)
        return inbox

    def finished(self, done: Finished, inbox: Path, size: int) -> float:
        """Return when the copy was whole (see `arrival`)."""
        return arrival(done, inbox, size)

    def __call__(self, sc: Scenario, rnd: int, warmup: bool) -> Sample:
        """Copy one file; the warm-up sample calibrates the size."""
        assert sc.kind is Kind.TOOL
        size = self.opts.size or self.sizes.get(sc.key, calibration_size(self.opts))
        down = sc.direction is Direction.DOWN
        source, inbox = self._source(size, down, sc.tool), self._watched_inbox(down)
        timeout = 30 + size / (1 * MB)
        if inbox is None:  # an upload to a remote host; column 1: the tool's reads of the file
            assert isinstance(self.remote, RemoteScratch)
            argv = self.command(sc, source, self.remote.inbox, self.local)
            done = run_timed(argv, timeout=timeout, watch=Watching(probe=PROBE, mark=self.mark))
            end, got = done.ended, self.remote.take_upload()
        else:  # column 1: the bytes arrived
            argv = self.command(sc, source, str(inbox / "file"), self.local)
            done = run_timed(
                argv, timeout=timeout, watch=Watching(probe=PROBE, arrived=lambda: _dir_bytes(inbox), mark=self.mark)
            )
            end = self.finished(done, inbox, size)
            got = _dir_bytes(inbox)
        why = _problem(done, got, size)
        if why is not None:
            return failed_sample(sc, rnd, warmup, done, why)
        rate = steady_rate(done.progress, 1, size, done.started, end) or size / (end - done.started) / MB
        if warmup and self.opts.size is None:
            self.sizes[sc.key] = self._calibrated(sc, rate)
        return measured_sample(sc, rnd, warmup, done, rate, nbytes=size, client_cpu_setup=done.cpu_at_mark)


def arrival(done: Finished, inbox: Path, size: int) -> float:
    """Return when the whole file had arrived: the sender's exit, or later for a sender that exits as soon as
    its last byte is in its socket (socat)."""
    if done.returncode != 0 or _dir_bytes(inbox) >= size:
        return done.ended
    deadline = time.perf_counter() + 30
    while time.perf_counter() < deadline:
        if _dir_bytes(inbox) >= size:
            return time.perf_counter()
        time.sleep(PROBE / 2)
    return time.perf_counter()


def _problem(done: Finished, got: int | None, size: int) -> str | None:
    """Return why a copy is not a valid sample, or None when the whole file arrived."""
    if done.timed_out:
        return f"the copy did not finish within {done.wall:.0f} s"
    if done.returncode != 0:
        text = ssh_failure_reason(done.texts) if done.texts else ""
        why = f"{done.argv[0].rsplit('/', 1)[-1]} exited with status {done.returncode}" + (f": {text}" if text else "")
        if "-O" not in done.argv and done.argv[0].endswith(("/scp", "/sftp")) and "Connection closed" in text:
            why += f" (the server may have no SFTP subsystem, as TinySSH has none: try --tool {LEGACY_SCP},rsync)"
        return why
    if got != size:
        return f"short copy: {'nothing' if got is None else got} of {size} bytes arrived"
    return None


def plan_tools(
    tools: Sequence[str], pairs: Sequence[tuple[str, str | None]], directions: Sequence[Direction], plain: bool = True
) -> list[Scenario]:
    """Return the file-copy scenarios: each SSH tool x (cipher, MAC) x direction, then the plaintext baselines
    (where they can run)."""
    over_ssh = [
        Scenario(Kind.TOOL, tool=t, cipher=c, mac=m, direction=d) for t in tools for c, m in pairs for d in directions
    ]
    baselines = [Scenario(Kind.TOOL, tool=t, direction=d) for t in PLAIN_TOOLS for d in directions]
    return over_ssh + (baselines if plain else [])
