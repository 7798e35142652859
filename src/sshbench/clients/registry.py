"""The clients `sshbench clients` compares: one row each. A row names the client, how to find it (a binary, or a
library's driver module under `drivers/`), what installs it, and its two settings: as its users run it, and tuned
with the knobs its maintainers document (each named, so the output can say what was changed)."""

from __future__ import annotations

from dataclasses import dataclass

from sshbench.errors import ExitCode, SshbenchError

DRIVERS = "sshbench.clients.drivers"


@dataclass(frozen=True)
class ClientType:
    """One client sshbench can drive."""

    name: str  # as given to --client
    product: str  # what its users call it
    binary: str | None  # a client binary run as it is (ssh, dbclient); None: a library, run by its driver
    package: str  # the Debian package of a binary, the pip package of a Python library, or a toolchain (go, cargo)
    default: str  # its settings as its users run it
    tuned: str | None = None  # the settings its maintainers' knobs allow, each named (None: nothing to tune)
    sftp: bool = True  # copies files with SFTP
    language: str = "Python"  # a library's: its driver is a Python module, or a Go or Rust program sshbench builds
    tuned_jobs: frozenset[str] = frozenset(("exec", "get", "put"))  # the jobs its tuned settings change (or connect)
    hurts: str | None = None  # why its second setting can make a job slower, where that is known (printed then)

    def modes(self, job: str) -> tuple[str | None, ...]:
        """Return the settings a job is measured with: the default, and tuned where the tuning changes it."""
        return (None, "tuned") if self.tuned and job in self.tuned_jobs else (None,)

    @property
    def driver(self) -> str | None:
        """Return a Python library's driver module (run with `python -m`); None for a binary or a Go or Rust library."""
        return None if self.binary or self.language != "Python" else f"{DRIVERS}.{self.name}_driver"

    @property
    def library(self) -> bool:
        """Return True for a library (its connections are also timed inside one live process)."""
        return self.binary is None


CLIENT_TYPES = (
    ClientType(
        "openssh",
        "OpenSSH ssh and sftp",
        "ssh",
        "openssh-client",
        "ssh -T with the options of every sshbench transfer (no compression, no multiplexing)",
    ),
    ClientType(
        "dropbear",
        "Dropbear dbclient",
        "dbclient",
        "dropbear-bin",
        "dbclient -T (receive window -W 24576)",
        "dbclient -W 2097152 (its help: a larger receive window may be faster)",
        sftp=False,
    ),
    ClientType(
        "paramiko",
        "paramiko (Fabric, Ansible's paramiko connection)",
        None,
        "paramiko",
        "SSHClient; window_size 2 MiB, max_packet_size 32 KiB; exec output read 64 KiB per Channel.recv (each "
        "read moves what is left of its buffer: stdout.read()'s 8 KiB reads are slower, 1 MiB reads faster, "
        "docs/BENCHMARKS.md); SFTP get prefetches, put is pipelined",
        "Transport(default_window_size=64 MiB, default_max_packet_size=256 KiB), for every channel and SFTP",
        hurts="paramiko's Channel.recv takes each read off the front of a buffer that holds everything "
        "received and not yet read, up to the window: with 64 MiB in flight each 64 KiB read copies up to "
        "64 MiB once the reader falls behind, and SFTP get reads the same way (reading 4 MiB at a time "
        "avoids it: docs/BENCHMARKS.md, paramiko's window)",
    ),
    ClientType(
        "asyncssh",
        "asyncssh",
        None,
        "asyncssh",
        "asyncssh.connect, conn.run(stdin=, stdout=); window 2 MiB, max_pktsize 32 KiB; SFTP block_size from "
        "the server's limits, max_requests 4 MiB / block_size (at least 16)",
        "connect(window=64 MiB, max_pktsize=256 KiB); SFTP get/put(max_requests=128)",
    ),
    ClientType(
        "libssh",
        "libssh via ansible-pylibssh (Ansible's libssh connection)",
        None,
        "ansible-pylibssh",
        "Session.connect; libssh's own cipher (the binding cannot choose one), 1 KiB reads",
    ),
    ClientType(
        "libssh2",
        "libssh2 via ssh2-python (parallel-ssh)",
        None,
        "ssh2-python",
        "blocking Session; channel read/write of 64 KiB; SFTP one request at a time",
    ),
    ClientType(
        "gossh",
        "Go golang.org/x/crypto/ssh, SFTP by github.com/pkg/sftp",
        None,
        "go",
        "ssh.Dial, session.Run with Stdin/Stdout; channel window 2 MiB (x/crypto/ssh has no setting for it); "
        "pkg/sftp: 64 requests of 32 KiB in flight, concurrent reads, one write at a time",
        "sftp.NewClient(conn, sftp.UseConcurrentWrites(true)): puts pipelined as its gets are (only puts are "
        "measured tuned: nothing else changes)",
        language="Go",
        tuned_jobs=frozenset(("put",)),
    ),
    ClientType(
        "russh",
        "russh (Rust), SFTP by russh-sftp",
        None,
        "cargo",
        "client::connect, channel exec/data/wait; window_size 2 MiB, maximum_packet_size 32 KiB; russh-sftp "
        "File through tokio::io::copy (8 KiB reads, one request at a time; 8 writes in flight)",
        "client::Config{nodelay: true, window_size: 64 MiB, maximum_packet_size: 65535} (its default leaves "
        "Nagle's algorithm on); russh-sftp Config{max_concurrent_writes: 64}, copies through a 256 KiB "
        "BufReader (requests of up to 256 KiB)",
        language="Rust",
        tuned_jobs=frozenset(("connect", "exec", "get", "put")),
    ),
)
NAMES = tuple(c.name for c in CLIENT_TYPES)


def client_type(name: str) -> ClientType:
    """Return the registry row of a client."""
    return next(c for c in CLIENT_TYPES if c.name == name)


def parse_clients(text: str) -> tuple[str, ...]:
    """Parse --client openssh,paramiko (or `all`); fail naming the choices."""
    chosen = NAMES if text.strip() == "all" else tuple(dict.fromkeys(t.strip() for t in text.split(",") if t.strip()))
    unknown = [c for c in chosen if c not in NAMES]
    if unknown or not chosen:
        raise SshbenchError(
            f"unknown client {', '.join(unknown) or repr(text)}",
            place="--client",
            fix=f"choose from {','.join(NAMES)} (or all)",
            code=ExitCode.USAGE,
        )
    return chosen
