"""The steady rate of a transfer from I/O counter probes (pure), and a remote session's report of itself."""

import subprocess

import pytest

from sshbench.measure.samplers import steady_rate
from sshbench.measure.session import Session, session_report, with_session_report


def test_steady_rate_skips_the_start_of_the_stream() -> None:
    mib = 2**20
    # counters: baseline 1000 bytes before the command; a slow ramp to 8 MiB in 100 ms, then 100 MiB/100 ms
    progress = [(0.9, 1000, 500), (1.05, 1000 + 4 * mib, 0), (1.10, 1000 + 8 * mib, 0), (1.15, 1000 + 58 * mib, 0)]
    rate = steady_rate(progress, 1, 108 * mib, command_at=1.0, end=1.20)
    assert rate is not None and abs(rate - (108 - 21.6) * mib / 0.0864 / 1e6) / rate < 0.01
    assert steady_rate([], 1, 10 * mib, 1.0, 2.0) is None  # no counters: caller falls back


def test_an_upload_to_a_server_on_this_machine_is_timed_where_it_is_received() -> None:
    from sshbench.measure.samplers import server_timed_rate, steady_threshold, upload_command, upload_count

    size = 64 * 2**20
    first = steady_threshold(size)
    assert first == int(0.2 * size)
    assert upload_command(size, False) == "wc -c"
    assert upload_command(size, True).startswith(f"head -c {first} >/dev/null && date +%s.%N && wc -c")
    out = f"1000.000000000\n{size - first}\n1004.000000000\n".encode()
    assert upload_count(out, size) == size
    assert server_timed_rate(out, size) == (size - first) / 4.0 / 1e6
    assert upload_count(b"123\n", size) == 123 and server_timed_rate(b"123\n", size) is None
    assert upload_count(b"", size) is None and upload_count(b"x y z", size) is None


def test_tools_plan_each_pair_both_ways_then_the_plaintext_baselines() -> None:
    from sshbench.measure.tools import plan_tools
    from sshbench.model import Direction

    both = (Direction.DOWN, Direction.UP)
    planned = plan_tools(("scp", "rsync"), [("aes128-gcm@openssh.com", None), ("aes128-ctr", "umac-64")], both)
    assert len(planned) == 2 * 2 * 2 + 2 * 2
    labels = [sc.label for sc in planned]
    assert "scp + aes128-ctr + umac-64 down" in labels and "tcp + no SSH up" in labels
    assert len({sc.key for sc in planned}) == len(planned)


def test_a_remote_session_reports_its_own_cpu_memory_and_quota() -> None:
    assert session_report(["debug1: x", "sshbench-session: 10 5 40 25 100 20480 50000 100000"]) == Session(
        0.5, 20480 * 1024, 0.5)  # fmt: skip
    assert session_report(["sshbench-session: 1 1 2 2 100 ? max 100000"]) == Session(0.02, None, None)  # no quota
    assert session_report(["sshbench-session:     ? ?"]) == Session(None, None, None)  # not Linux: said, not guessed
    assert session_report(["nothing"]) is None
    done = subprocess.run(["sh", "-c", with_session_report("head -c 1000 /dev/zero")], capture_output=True, check=True)
    assert len(done.stdout) == 1000 and done.stderr.startswith(b"sshbench-session: ")
    with pytest.raises(ValueError):
        with_session_report("echo 'x'")
