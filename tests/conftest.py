"""Fixtures: run the real CLI in a private HOME/XDG dir, and start real embedded servers."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest
from hypothesis import settings

from claims_invariants import check_store
from sshbench import hints
from sshbench.ssh.destination import Target
from sshbench.ssh.proc import require_binary
from sshbench.targets.servers.base import HOST_KEY_TYPES
from sshbench.targets.servers.openssh import OpenSSHServer
from sshbench.targets.servers.tools import KEYS_ENV, generate_keys

# No per-example time limit: these machines are shared and noisy (a 60 ms example once took 360 ms in CI), and
# timing belongs in benchmarks/, never in a unit test's verdict.
settings.register_profile("sshbench", deadline=None)
settings.load_profile("sshbench")

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # started in the background: children would inherit
    signal.signal(signal.SIGINT, signal.default_int_handler)  # the ignored SIGINT, and Ctrl-C tests test nothing


SUITE_LINE = 15 * 60  # seconds: the suite's line from a clean clone (docs/testing.md)
PHASES = ("all", "shared", "paired", "alone")  # scripts/test runs the last three in this order


def pytest_addoption(parser: pytest.Parser) -> None:
    """`--phase`: scripts/test runs the tests that can share the machine on three workers, those marked `paired` two
    at a time, then the rest alone."""
    parser.addoption(
        "--phase",
        choices=PHASES,
        default="all",
        help="shared: tests not marked alone or paired (run them with -n 3); paired: those marked paired (-n 2); "
        "alone: the rest (every slow test not paired)",
    )


def phase_of(item: pytest.Item) -> str:
    """Return the phase a test runs in: `paired` if marked so, `alone` if marked so or slow, else `shared`."""
    if item.get_closest_marker("paired"):
        return "paired"
    return "alone" if item.get_closest_marker("alone") or item.get_closest_marker("slow") else "shared"


# The longest tests of the phases that run several at once (each 15 s or more here), started first: a phase ends when
# its last test does, and a long test started late would run on alone at the end (a list of names, not timings).
LONGEST_FIRST = (
    "test_clients.py::test_every_installed_client_drives_every_server",
    "test_client_by_path.py::test_every_measuring_command_connects_through_the_client_given_by_path[tune]",
    "test_clients.py::test_a_host_of_yours_is_verified",
    "test_crash_safety.py::test_sigkill_leaves_nothing_and_the_run_resumes",
    "test_clients.py::test_clients_kex_measures_ml_kem",
    "test_interop.py::test_a_killed_server_fails_its_pairs",
    "test_hostile.py::test_hostile_servers_fail_fast",
    "test_storage_pressure.py::",
    "test_sweep_job.py::test_interrupted_sweep_resumes",
    "test_ansible.py::",
    "test_hostile.py::test_a_server_that_dies_mid_run",
    "test_report.py::test_report_renders_offline",
    "test_tune.py::test_an_embedded_dropbear_behind_a_long_fat_link",
    "test_link.py::test_a_100mbit_20ms_link",
    "test_link.py::test_a_long_fat_link",
    "test_normal_user.py::test_a_normal_users_link",
)


def _longest_first(item: pytest.Item) -> int:
    """Return a test's place in LONGEST_FIRST (after every listed one when it is not listed)."""
    return next((i for i, name in enumerate(LONGEST_FIRST) if name in item.nodeid), len(LONGEST_FIRST))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep the phase's tests (a slow test reads rates across a shaped link or a CPU limit: alone unless paired), the
    longest first where several run at once."""
    phase = config.getoption("--phase")
    if phase == "all":
        return
    keep, dropped = [], []
    for item in items:
        (keep if phase_of(item) == phase else dropped).append(item)
    if phase != "alone":
        keep.sort(key=_longest_first)  # stable: the rest keep their order
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """Under scripts/test (SSHBENCH_SUITE_STARTED, SSHBENCH_SUITE_LOG): keep this phase's test durations in the log;
    after the last phase say the suite's wall time from its start, set-up and linters included, and past its line
    the five slowest tests (a line, not a failure: a slow machine is no red CI)."""
    started, log = os.environ.get("SSHBENCH_SUITE_STARTED"), os.environ.get("SSHBENCH_SUITE_LOG")
    if not started or not log:
        return
    spent: dict[str, float] = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            if isinstance(report, pytest.TestReport):
                spent[report.nodeid] = spent.get(report.nodeid, 0.0) + report.duration
    with open(log, "a") as kept:
        kept.writelines(f"{seconds:.2f} {name}\n" for name, seconds in spent.items())
    if config.getoption("--phase") != "alone":  # the last phase says the suite's time
        return
    took = round(time.time() - float(started))
    terminalreporter.write_line(f"suite: {took // 60} min {took % 60} s from scripts/test's start (line: 15 min)")
    if took <= SUITE_LINE:
        return
    every: dict[str, float] = {}  # a test once, however many processes kept it (xdist's workers and controller)
    for seconds, name in (line.split(" ", 1) for line in Path(log).read_text().splitlines()):
        every[name] = max(every.get(name, 0.0), float(seconds))
    slowest = sorted(((s, n) for n, s in every.items()), reverse=True)[:5]
    named = "; ".join(f"{name} {seconds:.0f} s" for seconds, name in slowest)
    terminalreporter.write_line(f"suite: over its line; the five slowest tests: {named}")


@pytest.fixture(autouse=True)
def fresh_invocation() -> Iterator[None]:
    """Forget the options a command line run in this process noted (CliRunner tests): the next test's suggested
    commands must not carry its --db."""
    yield
    hints.forget()


@pytest.fixture(scope="session", autouse=True)
def host_keys() -> Iterator[Path]:
    """Make the embedded servers' keys once per test process (an RSA 3072 key costs 0.2-1.5 s of CPU, and the suite
    starts some 300 servers) in a private directory that SSHBENCH_HOST_KEYS names, removed after; a caller's own is
    kept."""
    if os.environ.get(KEYS_ENV):
        yield Path(os.environ[KEYS_ENV])
        return
    pool = Path(tempfile.mkdtemp(prefix="sshbench-keys-"))  # 0700
    generate_keys(require_binary("ssh-keygen", "openssh-client"), pool, HOST_KEY_TYPES)
    os.environ[KEYS_ENV] = str(pool)
    try:
        yield pool
    finally:
        del os.environ[KEYS_ENV]
        shutil.rmtree(pool, ignore_errors=True)


@pytest.fixture(scope="session")
def shared_cache() -> Path:
    """Return the suite's cache directory, kept between sessions: drivers sshbench builds from pinned sources (Go,
    Rust) are stored under a hash of those sources and the toolchain (src/sshbench/builds.py), so a driver is built
    again only when either changes; Go's modules and build cache are kept there too."""
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sshbench-tests"
    root.mkdir(parents=True, exist_ok=True)
    return root


@pytest.fixture
def cli_env(tmp_path: Path, shared_cache: Path) -> dict[str, str]:
    """Environment for the CLI: private HOME and data dir, no agent, wide terminal, the session's cache."""
    env = {k: v for k, v in os.environ.items() if k not in ("SSH_AUTH_SOCK", "SSHBENCH_DB")}
    (tmp_path / "home").mkdir()
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        COLUMNS="200",
        XDG_CACHE_HOME=str(shared_cache),
        GOFLAGS="-modcacherw",
    )
    env.setdefault("GOMODCACHE", str(shared_cache / "gomod"))
    env.setdefault("GOCACHE", str(shared_cache / "go-build"))
    for name, default in (("CARGO_HOME", ".cargo"), ("RUSTUP_HOME", ".rustup")):  # rustup's, found by the real HOME
        if (Path.home() / default).is_dir():
            env.setdefault(name, str(Path.home() / default))
    return env


def sshbench(
    env: dict[str, str], *args: str, timeout: float = 300, wrap: Callable[[list[str]], list[str]] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real CLI (its argv through `wrap` when given) and capture its output; then hold every run in its
    database to the claim invariants (tests/claims_invariants.py), so each stored run the suite produces is checked
    where it was made."""
    argv = [sys.executable, "-m", "sshbench", *args]
    argv = wrap(argv) if wrap else argv
    done = subprocess.run(
        argv, env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False
    )
    broken = check_store(database(env, args))
    assert not broken, "claim invariants broken:\n" + "\n".join(broken)
    return done


# OpenSSH 10 beside the system's, fetched by scripts/openssh10 (scripts/test runs it and sets SSHBENCH_OPENSSH10)
OPENSSH10 = Path(
    os.environ.get("SSHBENCH_OPENSSH10")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sshbench" / "openssh-10"
)
OPENSSH10_SSHD, OPENSSH10_SSH = OPENSSH10 / "usr" / "sbin" / "sshd", OPENSSH10 / "usr" / "bin" / "ssh"


def _newest_built() -> Path:
    """Return the prefix scripts/openssh-build left (scripts/test sets SSHBENCH_OPENSSH_NEWEST), else the newest
    release built in the cache, else where one would be."""
    if os.environ.get("SSHBENCH_OPENSSH_NEWEST"):
        return Path(os.environ["SSHBENCH_OPENSSH_NEWEST"])
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sshbench"
    built = [p for p in cache.glob("openssh-*p*") if (p / "sbin" / "sshd").exists()]
    return max(built, key=_release) if built else cache / "openssh-newest"


def _release(prefix: Path) -> tuple[int, ...]:
    """Return a build's release as numbers to order by (openssh-10.3p1: 10, 3, 1)."""
    return tuple(int(n) for n in prefix.name.removeprefix("openssh-").replace("p", ".").split(".") if n.isdigit())


# OpenSSH's newest release Debian serves, built from source by scripts/openssh-build (scripts/test runs it)
OPENSSH_NEWEST = _newest_built()
NEWEST_SSHD, NEWEST_SSH = OPENSSH_NEWEST / "sbin" / "sshd", OPENSSH_NEWEST / "bin" / "ssh"
MLKEM, SNTRUP, CURVE = "mlkem768x25519-sha256", "sntrup761x25519-sha512", "curve25519-sha256"
LINK_REFUSED = "the emulated link is not what was asked"  # the link check's refusal, which says to retry


def sshbench_on_link(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run the CLI over an emulated link; once more when its link check refused the link it built (on a busy machine
    parallel plaintext streams on a 100 ms path fell to 858 Mbit/s of 1 Gbit/s: the refusal tells a user to retry)."""
    done = sshbench(env, *args, timeout=timeout)
    if done.returncode == 2 and LINK_REFUSED in done.stderr:
        done = sshbench(env, *args, timeout=timeout)
    return done


def database(env: dict[str, str], args: tuple[str, ...]) -> Path:
    """Return the results database a CLI invocation used: --db, SSHBENCH_DB, or the XDG default."""
    if "--db" in args and args.index("--db") + 1 < len(args):
        return Path(args[args.index("--db") + 1])
    if env.get("SSHBENCH_DB"):
        return Path(env["SSHBENCH_DB"])
    data = env.get("XDG_DATA_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".local" / "share")
    return Path(data) / "sshbench" / "sshbench.db"


def stored_samples(db: Path) -> int:
    """Return how many samples a results database holds (0 before it exists)."""
    if not db.exists():
        return 0
    with sqlite3.connect(db) as con:
        try:
            return int(con.execute("SELECT COUNT(*) FROM samples").fetchone()[0])
        except sqlite3.OperationalError:
            return 0


def sshbench_processes(root: Path | None = None) -> set[tuple[int, str]]:
    """Return (pid, cmdline) of running sshd/ssh processes that belong to an sshbench private directory (under
    `root`, a test's own temp directory, when given)."""
    mark = f"{root}/sshbench-" if root is not None else "sshbench-"
    found = set()
    for p in psutil.process_iter(["pid", "cmdline"]):
        cmd = " ".join(p.info["cmdline"] or [])
        if mark in cmd and ("sshd" in cmd or "ssh " in cmd):
            found.add((p.info["pid"], cmd))
    return found


def private_dirs(root: Path | None = None) -> set[str]:
    """Return sshbench private directories in the temp dir (or in `root`, a test's own)."""
    return {p.name for p in (root or Path(tempfile.gettempdir())).glob("sshbench-*")}


def own_temp_dir(env: dict[str, str]) -> Path:
    """Give the CLI run with `env` a temp directory of its own (TMPDIR): what it leaves behind is then counted there,
    apart from what other tests running at the same time hold (a short path: a master connection's socket lives in
    it). The caller removes it."""
    root = Path(tempfile.mkdtemp(prefix="sbt-", dir=tempfile.gettempdir()))
    env["TMPDIR"] = str(root)
    return root


def alive(pid: int) -> bool:
    """Return True while a process with this PID exists."""
    return Path(f"/proc/{pid}").exists()


CGROUP_ROOTS = ("/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup/unified", "/sys/fs/cgroup")


def cgroup_dirs() -> set[str]:
    """Return sshbench cgroups in the v1 cpu and cpuacct and the v2 hierarchies."""
    found: set[str] = set()
    for root in CGROUP_ROOTS:
        found |= {str(p) for p in Path(root).glob("sshbench-*")} if Path(root).is_dir() else set()
    return found


def orphan_cgroups() -> set[str]:
    """Return sshbench cgroups whose owner is gone: a server's (named after its private directory) whose directory
    is in no temp directory any more, a client group's whose sshbench process has exited. Another test's live
    server or run owns the rest, so a test running beside others counts only what nobody holds."""
    temp = Path(tempfile.gettempdir())
    temps = [temp, *temp.glob("*/")]  # the temp dir and the tests' own temp directories in it
    found = set()
    for group in cgroup_dirs():
        name = Path(group).name.removesuffix("-limit")
        pid = name.rsplit("-", 1)[-1] if name.startswith(("sshbench-client-", "sshbench-clients-")) else ""
        owned = alive(int(pid)) if pid.isdigit() else any((t / name).exists() for t in temps)
        if not owned:
            found.add(group)
    return found


@pytest.fixture
def own_tmp(cli_env: dict[str, str]) -> Iterator[Path]:
    """This test's CLI temp directory of its own (`own_temp_dir`), removed after it."""
    root = own_temp_dir(cli_env)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def remote_config(tmp_path: Path, server: OpenSSHServer, key: Path, known_hosts: bool, host: str = "127.0.0.1") -> Path:
    """Write an ssh_config that reaches the embedded server as a *remote* host with the given key (at `host`: an
    emulated link's server address when it is behind one)."""
    assert server.workdir is not None
    known = tmp_path / "known_hosts"
    known.write_text((server.workdir / "known_hosts").read_text() if known_hosts else "")
    config = tmp_path / "ssh_config"
    config.write_text(
        f"Host testhost\n  HostName {host}\n  Port {server.port}\n  User {server.user}\n"
        f"  IdentityFile {key}\n  IdentitiesOnly yes\n  IdentityAgent none\n  UserKnownHostsFile {known}\n"
        "  GlobalKnownHostsFile /dev/null\n"
    )
    return config


@pytest.fixture(scope="module")
def embedded() -> Iterator[tuple[OpenSSHServer, Target]]:
    """A real embedded OpenSSH server for the module's tests."""
    server = OpenSSHServer()
    with server as target:
        yield server, target


@pytest.fixture
def testhost(tmp_path: Path, embedded: tuple[OpenSSHServer, Target]) -> Path:
    """An ssh_config in which `testhost` is the module's embedded server, reached as a remote host with its key
    (nothing of it is sshbench's to stop)."""
    server, _ = embedded
    assert server.workdir is not None
    return remote_config(tmp_path, server, server.workdir / "client_ed25519", known_hosts=True)


def eventually(check: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Poll `check` every 50 ms until it holds or `timeout` seconds pass; return whether it held (processes
    and directories go away a moment after their owner exits: poll with a deadline, never sleep and hope)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def started(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    """Start the real CLI in the background (its output discarded, its stderr kept) and return the process."""
    return subprocess.Popen(
        [sys.executable, "-m", "sshbench", *args], env=env, text=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )


def interrupt_after_samples(
    env: dict[str, str], args: list[str], db: Path, minimum: int, sig: int = signal.SIGINT, timeout: float = 120
) -> tuple[int, str]:
    """Start the CLI, send `sig` once `minimum` samples are stored in `db`; return (exit status, stderr)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "sshbench", *args], env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + timeout
    try:
        while not _stored(db, minimum):
            if time.monotonic() > deadline or proc.poll() is not None:
                raise AssertionError(f"fewer than {minimum} samples were stored in time")
            time.sleep(0.2)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, err


def _stored(db: Path, minimum: int) -> bool:
    """Return True once the database holds at least `minimum` samples."""
    if not db.exists():
        return False
    with sqlite3.connect(db) as con:
        try:
            return bool(con.execute("SELECT COUNT(*) FROM samples").fetchone()[0] >= minimum)
        except sqlite3.OperationalError:
            return False
