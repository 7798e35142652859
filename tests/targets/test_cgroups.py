"""A cgroup per embedded server counts the CPU of every process it forks (v1 and v2), and is removed after."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from sshbench.ssh.proc import run_timed
from sshbench.targets.limits import cgroups
from sshbench.targets.servers import registry

pytestmark = pytest.mark.integration


@pytest.mark.skipif(os.geteuid() != 0, reason="creating cgroups needs root here")
@pytest.mark.parametrize("version", ["v1", "v2"])
def test_server_cpu_is_counted_by_cgroup(version: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cgroups.ENV, version)
    group, why = cgroups.create("sshbench-probe")
    if group is None:
        pytest.skip(f"cgroup {version} unavailable: {why}")
    group.remove()
    server = registry.make_server("local:dropbear")
    with server as target:
        assert server.group is not None and server.group.version == version
        path = server.group.path
        before = server.cpu_seconds()
        done = run_timed(target.argv("ssh", [], "head -c 50000000 /dev/zero"), timeout=60)
        assert done.returncode == 0
        assert server.wait_idle()
        used = server.cpu_seconds()
        assert before is not None and used is not None and used - before > 0.01
        with server.cpu_counter() as cpu:  # held open for a sample: one pread a reading, the same count
            again = cpu()
            assert again is not None and 0 <= again - used < 0.01 and server.connection_pids() == frozenset()
    assert not path.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="creating cgroups needs root")
def test_a_quota_group_limits_what_runs_in_it_and_is_removed() -> None:
    group, how = cgroups.limit(f"sshbench-test-quota-{os.getpid()}", 0.25)
    if group is None:
        pytest.skip(how)
    try:
        assert "25000" in how
        busy = "import time\nend = time.time() + 1.5\nwhile time.time() < end: pass"
        spin = subprocess.Popen([sys.executable, "-c", busy])
        group.add(spin.pid)
        _, _, usage = os.wait4(spin.pid, 0)
    finally:
        cgroups.release(group)
    assert usage.ru_utime + usage.ru_stime < 0.75  # 1.5 s of spinning at a quarter of a CPU (start-up unlimited)
    assert not group.path.exists()
