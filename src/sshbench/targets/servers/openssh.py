"""OpenSSH's sshd as an embedded server: the system's, or any OpenSSH-compatible build given by path.

Every algorithm the ssh client supports is enabled (CBC, 3DES and SHA-1 too, so that they can be measured),
and nothing of the user's account runs in a session: `SetEnv HOME=<empty dir>` keeps the shell's own start-up
files out of the numbers, `PermitUserRC no` keeps ~/.ssh/rc from running (sshd reads it from the passwd home, not
from HOME) and `PermitUserEnvironment no` ignores ~/.ssh/environment. What sshd and the login shell still run for
every session whatever the configuration (/etc/ssh/sshrc, bash's /etc/bash.bashrc) is system-wide; it is named in
the server's settings, since it is part of every number.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import psutil

from sshbench import kex, products
from sshbench.errors import ExitCode, SshbenchError
from sshbench.ssh.discover import client_algorithms
from sshbench.ssh.proc import require_binary, run_quick
from sshbench.targets.servers.base import HOST_KEY_TYPES, LocalServer
from sshbench.targets.servers.tools import Tools, generate_keys, public_key

ALGORITHM_OPTIONS = {"Ciphers": "cipher", "MACs": "mac", "KexAlgorithms": "kex", "HostKeyAlgorithms": "hostkey"}
HELPERS = {"SshdSessionPath": "sshd-session", "SshdAuthPath": "sshd-auth"}  # OpenSSH 9.8+: connections run in these
ROLE_TITLES = ("sshd:", "sshd-session:", "sshd-auth:")  # process titles before 9.8, and of its helpers since
MAX_STARTUPS = "100:30:200"  # embedded: sshbench starts logins in parallel (OpenSSH's default is 10:30:100)


def _algorithm_lines(ssh: str) -> list[str]:
    """Return sshd_config lines enabling every algorithm this OpenSSH supports (CBC, 3DES, SHA-1 too)."""
    supported = client_algorithms(ssh)
    return [f"{option} {','.join(supported[kind])}" for option, kind in ALGORITHM_OPTIONS.items() if supported[kind]]


def with_options(lines: Sequence[str], options: Sequence[str]) -> list[str]:
    """Return sshd_config lines with each `KEY=VALUE` option in place of the lines of its keyword (sshd takes the first
    value of most keywords and the last of some, MaxStartups among them: one line each leaves no doubt)."""
    keys = {o.split("=", 1)[0].lower() for o in options}
    kept = [line for line in lines if line.split(" ", 1)[0].lower() not in keys]
    return [*kept, *(o.replace("=", " ", 1) for o in options)]


def accepts(sshd: str, config: Path, options: Sequence[str]) -> bool:
    """Return True when `sshd -t` takes the config with these `-o` options (an unknown option or algorithm fails)."""
    return refusal(sshd, config, options) is None


def refusal(sshd: str, config: Path, options: Sequence[str]) -> str | None:
    """Return what `sshd -t` says when it refuses the config with these `-o` options, None when it takes them."""
    argv = [sshd, "-t", "-f", str(config), *(a for o in options for a in ("-o", o))]
    try:
        done = run_quick(argv, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode == 0:
        return None
    return " / ".join((done.stderr or done.stdout).strip().splitlines()[-2:]) or f"exit status {done.returncode}"


def _probed_lines(sshd: str, config: Path) -> list[str]:
    """Return sshd_config lines enabling every algorithm `sshd -t` accepts of those this machine's ssh client and the
    key-exchange catalog name (an sshd given by path with no ssh of its own beside it)."""
    try:
        candidates = {k: list(v) for k, v in client_algorithms(require_binary("ssh", "openssh-client")).items()}
    except SshbenchError:
        candidates = {kind: [] for kind in ALGORITHM_OPTIONS.values()}
    candidates["kex"] = list(dict.fromkeys([*candidates["kex"], *(n for k in kex.CATALOG for n in k.names)]))
    lines = []
    for option, kind in ALGORITHM_OPTIONS.items():
        names = candidates[kind]
        if not accepts(sshd, config, [f"{option}={','.join(names)}"]):
            names = [n for n in names if accepts(sshd, config, [f"{option}={n}"])]
        if names:
            lines.append(f"{option} {','.join(names)}")
    return lines


def version_lines(sshd: str, config: Path) -> list[str]:
    """Return the lines an sshd of 9.8 or later needs beside sshbench's own: its helpers where its build keeps them
    (a prefix's lib/openssh/), and `PerSourcePenalties no` (probes and failed samples are connections that never
    authenticate: 127.0.0.1 would be penalised and refused)."""
    helpers = Path(sshd).parent.parent / "lib" / "openssh"
    lines = [f"{option} {helpers / name}" for option, name in HELPERS.items() if (helpers / name).is_file()]
    if accepts(sshd, config, ["PerSourcePenalties=no"]):
        lines.append("PerSourcePenalties no")
    return lines


SYSTEM_RC = Path("/etc/ssh/sshrc")  # sshd runs it for every session when it exists (no option turns it off)
BASH_RC = Path("/etc/bash.bashrc")  # Debian's bash reads it for commands run by sshd


def system_startup_files() -> tuple[str, ...]:
    """Return what runs in every session whatever sshd_config says (system-wide), as settings to show."""
    found = []
    if SYSTEM_RC.exists():
        found.append(f"{SYSTEM_RC} exists: sshd runs it in every session (nothing turns it off), part of every number")
    return (*found, *shell_startup_files())


def shell_startup_files() -> tuple[str, ...]:
    """Return what the login shell reads for every command a server runs with SSH_CLIENT set, as settings to show."""
    shell = pwd.getpwuid(os.getuid()).pw_shell
    if os.path.basename(shell) == "bash" and BASH_RC.exists():
        return (f"the login shell {shell} reads {BASH_RC} for every command (system-wide), part of every number",)
    return ()


class OpenSSHServer(LocalServer):
    """OpenSSH sshd (the system's, or any OpenSSH-compatible build given by path)."""

    product = "OpenSSH"
    package = "openssh-server"

    def __init__(self, spec: str = "local", name: str = "openssh", tools: Tools | None = None) -> None:
        super().__init__(spec, name, tools)
        self.algorithms: list[str] = []
        self.found_by = "the ssh client supports"  # where the algorithm lists came from, for the settings
        self.by_path = tools is not None
        self.version_lines: list[str] = []
        # OpenSSH's session window (CHAN_SES_WINDOW_DEFAULT, 2 MiB); a build given by path (HPN-SSH) may differ
        self.receive_window = products.OPENSSH.window if tools is None else None
        self.options: tuple[str, ...] = ()  # KEY=VALUE lines of sshd_config that replace the embedded server's own

    def configure(self, options: Sequence[str]) -> None:
        """Set sshd_config options (`KEY=VALUE`) in place of the embedded server's own lines for those keywords."""
        self.options = tuple(options)

    def prepare(self, workdir: Path) -> None:
        """Generate keys, create the privilege-separation directory, list every algorithm."""
        generate_keys(self.tools.keygen, workdir, HOST_KEY_TYPES)
        shutil.copyfile(workdir / "client_ed25519.pub", workdir / "authorized_keys")
        if os.geteuid() == 0:
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        probe = workdir / "sshd_probe_config"  # for `sshd -t`: what this build accepts
        probe.write_text(f"HostKey {workdir}/host_ed25519\nPidFile {workdir}/probe.pid\n")
        self.version_lines = version_lines(self.tools.sshd, probe)
        refused = refusal(self.tools.sshd, probe, self.options) if self.options else None
        if refused is not None:
            raise SshbenchError(
                f"{self.tools.sshd} refuses {' '.join(self.options)}: {refused}",
                place="--server-option",
                fix="give KEY=VALUE as sshd_config(5) spells it for this OpenSSH, e.g. MaxStartups=10:30:60",
                code=ExitCode.USAGE,
            )
        if self.tools.ssh:
            self.algorithms = _algorithm_lines(self.tools.ssh)
            self.found_by = f"its own client ({self.tools.ssh} -Q) supports" if self.by_path else self.found_by
        else:
            self.algorithms = _probed_lines(self.tools.sshd, probe)
            self.found_by = "it accepted in `sshd -t` (no ssh of its build beside it to ask)"
        self._describe()

    def _describe(self) -> None:
        """Record the settings shown with the results."""
        self.settings = (
            f"every algorithm {self.found_by} enabled"
            if self.algorithms
            else "the server's default algorithms (this build rejected the client's full lists)",
            *(
                ["PerSourcePenalties no (sshbench's probes and failed samples would get 127.0.0.1 refused)"]
                if "PerSourcePenalties no" in self.version_lines
                else []
            ),
            "UsePAM no, StrictModes no (throw-away server)",
            f"MaxStartups {MAX_STARTUPS} (OpenSSH's default 10:30:100 would drop sshbench's own parallel logins)",
            *(f"{o.replace('=', ' ', 1)} (--server-option)" for o in self.options),
            "HOME of sessions: an empty directory (no shell rc files); PermitUserRC no, PermitUserEnvironment no "
            "(nothing of your ~/.ssh runs)",
            *system_startup_files(),
        )

    def retry_plainer(self) -> bool:
        """A custom sshd may not know every algorithm the client knows: retry with its defaults."""
        if not self.algorithms:
            return False
        self.algorithms = []
        self._describe()
        return True

    def host_public_keys(self, workdir: Path) -> list[str]:
        """Return the ed25519, ecdsa and rsa host keys."""
        return [public_key(workdir / f"host_{t}.pub") for t in HOST_KEY_TYPES]

    def command(self, workdir: Path, port: int) -> list[str]:
        """Write sshd_config for the port and return the sshd command line."""
        d = workdir
        server = [
            f"Port {port}",
            f"ListenAddress {self.address}",
            *(f"HostKey {d}/host_{t}" for t in HOST_KEY_TYPES),
            f"AuthorizedKeysFile {d}/authorized_keys",
            f"PidFile {d}/sshd.pid",
            f"AllowUsers {self.user}",
            "PermitRootLogin prohibit-password",
            # Keys live in a private 0700 dir under the temp dir, whose sticky world-writable
            # parent StrictModes would reject.
            "StrictModes no",
            "UsePAM no",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "PubkeyAuthentication yes",
            "UseDNS no",
            "PrintMotd no",
            "PrintLastLog no",
            "Banner none",
            "X11Forwarding no",
            "AllowTcpForwarding no",
            "AllowAgentForwarding no",
            "PermitTTY no",
            f"MaxStartups {MAX_STARTUPS}",
            "LoginGraceTime 30",
            "LogLevel VERBOSE",
            "Subsystem sftp internal-sftp",  # for scp (SFTP since OpenSSH 9) and sftp in `tools`
            f"SetEnv HOME={d}/home",
            "PermitUserRC no",  # sshd would run ~/.ssh/rc of the passwd home (HOME does not move it)
            "PermitUserEnvironment no",
            *self.version_lines,
            *self.algorithms,
        ]
        (d / "sshd_config").write_text("\n".join(with_options(server, self.options)) + "\n")
        return [self.tools.sshd, "-D", "-e", "-f", str(d / "sshd_config")]

    def role(self, proc: psutil.Process) -> str:
        """Listener, privileged monitor ([priv]), pre-auth child ([net]/[preauth]), session (user@notty)."""
        if proc.pid == self.pid:
            return "listener"
        try:
            title = " ".join(proc.cmdline())
        except psutil.Error:
            return "command"
        if title.startswith(ROLE_TITLES):
            if "[priv]" in title:
                return "monitor"
            if title.startswith("sshd-auth:") or any(w in title for w in ("[net]", "[preauth]", "[accepted]")):
                return "pre-auth"
            return "session"
        return "command"
