"""Run metadata: CPU model and crypto flags, kernel, OpenSSH/OpenSSL and tool versions."""

from __future__ import annotations

import os
import platform
import socket
from pathlib import Path
from typing import Any

from sshbench import __version__
from sshbench.environment import Environment
from sshbench.ssh import audit
from sshbench.ssh.proc import run_quick

CRYPTO_FLAGS = ("aes", "pclmulqdq", "sha_ni", "avx2", "avx512f", "vaes")


def cpu_info(cpuinfo: str) -> dict[str, Any]:
    """Extract the CPU model and the crypto-relevant flags from /proc/cpuinfo text."""
    model, flags = "unknown", set[str]()
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and model == "unknown":
            model = value.strip()
        elif key.strip() in ("flags", "Features") and not flags:
            flags = set(value.split())
    return {"cpu_model": model, "cpu_flags": {f: f in flags for f in CRYPTO_FLAGS}}


def collect(ssh: str) -> Environment:
    """Return the environment of this machine and client, stored with every run."""
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
    except OSError:
        cpuinfo = ""
    ssh_version = run_quick([ssh, "-V"]).stderr.strip()
    openssh, _, openssl = ssh_version.partition(", ")
    return Environment(
        **cpu_info(cpuinfo),
        cpus=os.cpu_count(),
        kernel=platform.release(),
        os=platform.platform(),
        openssh_client=openssh,
        openssl=openssl,
        python=platform.python_version(),
        sshbench=__version__,
        ssh_audit=audit.version(),
        uid=os.getuid(),
        client_host=socket.gethostname(),
    )
