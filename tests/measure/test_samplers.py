"""The steady rate of a transfer from I/O counter probes (pure), and a remote session's report of itself."""

import dataclasses
import itertools
import os
import socket
import subprocess
import sys
import time

import pytest

from sshbench.joboptions import JobOptions
from sshbench.measure.samplers import MIN_SIZE, RTT_ROUNDS, ThroughputSampler
from sshbench.measure.session import Session, parse_ss, session_report, socket_report, with_session_report
from sshbench.measure.steady import MB, steady_rate
from sshbench.model import Direction, Kind, Scenario
from sshbench.runkinds import RunKind
from sshbench.samples import Sample
from sshbench.ssh.hooks import at_exit
from sshbench.ssh.proc import run_timed
from sshbench.ssh.timed import Watching


def test_steady_rate_skips_the_start_of_the_stream() -> None:
    mib = 2**20
    # counters: baseline 1000 bytes before the command; a slow ramp to 8 MiB in 100 ms, then 100 MiB/100 ms
    progress = [(0.9, 1000, 500), (1.05, 1000 + 4 * mib, 0), (1.10, 1000 + 8 * mib, 0), (1.15, 1000 + 58 * mib, 0)]
    rate = steady_rate(progress, 1, 108 * mib, command_at=1.0, end=1.20)
    assert rate is not None and abs(rate - (108 - 21.6) * mib / 0.0864 / 1e6) / rate < 0.01
    assert steady_rate([], 1, 10 * mib, 1.0, 2.0) is None  # no counters: caller falls back


def test_a_first_probe_past_the_untimed_start_begins_the_timed_part() -> None:
    """Where no probe came before the threshold, the rate is timed from the first probe past it, with the bytes it
    read (not interpolated from the command across the start of the stream), and the crossing is that probe less
    its bytes past the threshold at the rate after it."""
    from sshbench.measure.steady import crossing, steady_point, steady_threshold

    mib = 2**20
    # the command at 1.0; nothing moves for 40 ms, then 100 MiB/s: the probe at 1.14 has read 10 of 40 MiB, past 8
    progress = [(0.9, 1000, 0), (1.14, 1000 + 10 * mib, 0)]
    end = 1.04 + 0.4
    rate = steady_rate(progress, 1, 40 * mib, command_at=1.0, end=end)
    assert rate == pytest.approx(100 * mib / 1e6)  # from the command: 32 MiB over 0.328 s, 2.4 % low
    assert steady_threshold(40 * mib) == 8 * mib
    start = steady_point(progress, 1, 40 * mib, command_at=1.0, end=end)
    assert start == (1.14, 10 * mib) and crossing(start, 40 * mib, end) == pytest.approx(1.12)


def test_an_upload_to_a_server_on_this_machine_is_timed_where_it_is_received() -> None:
    from sshbench.measure.steady import server_timed_rate, steady_threshold, upload_command, upload_count

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
        0.5, 20480 * 1024, 0.5
    )
    assert session_report(["sshbench-session: 1 1 2 2 100 ? max 100000"]) == Session(0.02, None, None)  # no quota
    assert session_report(["sshbench-session:     ? ?"]) == Session(None, None, None)  # not Linux: said, not guessed
    assert session_report(["nothing"]) is None
    done = subprocess.run(["sh", "-c", with_session_report("head -c 1000 /dev/zero")], capture_output=True, check=True)
    assert len(done.stdout) == 1000 and done.stderr.startswith(b"sshbench-session: ")
    with pytest.raises(ValueError):
        with_session_report("echo 'x'")


SS_LINE = (
    "0 0 10.9.0.2:22 10.9.0.1:40512 ts sack cubic wscale:7,7 rto:304 rtt:100.5/0.2 ato:40 mss:1448 cwnd:140 "
    "bytes_acked:52428801 bytes_received:3921 send 16Mbps delivery_rate 167.2Mbps app_limited busy:2900ms "
    "rwnd_limited:1450ms(50.0%) sndbuf_limited:12ms(0.4%) retrans:0/3 rcv_rtt:101 rcv_space:14480 minrtt:100.1 "
    "snd_wnd:3145728"
)


def test_an_ss_reading_of_the_session_socket_becomes_the_tcp_info_fields_with_units() -> None:
    r = parse_ss(SS_LINE)
    assert r is not None and (r.local_port, r.peer_port, r.cc) == (22, 40512, "cubic")
    assert r.info == {
        "app_limited": 1,
        "rtt_us": 100500,
        "snd_mss": 1448,
        "snd_cwnd": 140,
        "bytes_acked": 52428801,
        "bytes_received": 3921,
        "delivery_rate": 20900000,
        "busy_us": 2900000,
        "rwnd_limited_us": 1450000,
        "sndbuf_limited_us": 12000,
        "total_retrans": 3,
        "rcv_rtt_us": 101000,
        "rcv_space": 14480,
        "min_rtt_us": 100100,
        "snd_wnd": 3145728,
    }
    assert parse_ss("") is None and parse_ss("garbage") is None


def test_a_remote_session_reports_its_own_socket_as_ss_sees_it_while_the_command_runs() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server, socket.create_connection(server.getsockname()) as client:
        accepted, _ = server.accept()
        with accepted:
            here, there = client.getsockname()[1], server.getsockname()[1]
            env = dict(os.environ, SSH_CONNECTION=f"127.0.0.1 {here} 127.0.0.1 {there}")
            # 3 s: the polls run at nice 19, and beside a clean clone's Go and Rust builds 1.5 s held only one
            done = subprocess.run(
                ["sh", "-c", with_session_report("head -c 1000 /dev/zero; sleep 3")],
                env=env,
                capture_output=True,
                check=True,
            )
    assert len(done.stdout) == 1000  # the payload alone on stdout: the polls went to stderr, after it
    texts = done.stderr.decode().splitlines()
    report = socket_report(texts)
    assert report is not None and report["polls"] >= 2 and report["read_by"] == "ss over the login"
    assert texts[-1].startswith("sshbench-session: ")


def test_the_cpu_a_process_spent_before_its_mark_line_is_read_apart() -> None:
    from sshbench.ssh.hooks import at_mark
    from sshbench.ssh.proc import run_timed

    spin = "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"  # CPU before and after the mark
    calls: list[int] = []
    with at_mark(lambda: calls.append(1)):
        done = run_timed(
            ["sh", "-c", f"{spin}; echo 'Sending command: x' >&2; {spin}"], watch=Watching(mark="Sending command:")
        )
    total = done.cpu_user + done.cpu_system
    assert done.returncode == 0 and calls == [1]
    assert done.cpu_at_mark is not None and 0.2 * total < done.cpu_at_mark < 0.8 * total
    assert run_timed(["sh", "-c", "echo 'Sending command: x' >&2"]).cpu_at_mark is None  # not asked: not read


def test_dense_probes_start_at_the_mark_and_thin_out_once_the_steady_part_is_under_way() -> None:
    """The I/O counters are read as the mark line arrives (the baseline), every 10 ms until 4 MiB moved, then
    every SPARSE_PROBE seconds: a wake-up is CPU taken from the measured client (issue 40)."""
    from sshbench.ssh.timed import SPARSE_PROBE, Dense

    writes = "for i in $(seq 30); do head -c 262144 /dev/zero; sleep 0.02; done"  # 256 KiB each 20 ms, 0.6 s or more
    argv = ["sh", "-c", f"sleep 0.1; echo 'Sending command: x' >&2; {writes}"]
    done = run_timed(argv, watch=Watching(probe=0.01, mark="Sending command:", dense=Dense(2, 4 * 2**20)))
    mark = next(t for t, text in done.lines if "Sending command" in text)
    assert done.progress[0][0] == mark, (done.progress[0], mark)  # nothing before the mark; the baseline at it
    base = done.progress[0][2]
    dense = [p for p in done.progress[1:] if p[2] - base < 4 * 2**20]
    after = [p for p in done.progress if p[2] - base >= 4 * 2**20]
    assert len(dense) >= 10, done.progress  # about 16 writes' worth at 10 ms
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(after)][:-1]  # the last: the exit's reading
    assert gaps and min(gaps) >= SPARSE_PROBE * 0.9, gaps


def test_a_transfers_cpu_share_leaves_its_login_out() -> None:
    from sshbench.analyse.results import _busy
    from sshbench.model import Direction, Kind, Scenario
    from sshbench.samples import Sample

    sc = Scenario(Kind.THROUGHPUT, cipher="aes128-gcm@openssh.com", direction=Direction.DOWN)
    s = Sample(
        sc,
        1,
        False,
        True,
        500.0,
        wall=0.5,
        nbytes=100_000_000,
        client_cpu=0.35,
        client_cpu_setup=0.07,
        phases=(("login", 0.2),),
    )
    assert _busy(s, s.client_cpu, s.client_cpu_setup) == pytest.approx(0.28 / 0.3)
    assert _busy(s, s.client_cpu, None) is None  # an older sample: not read apart
    assert _busy(dataclasses.replace(s, phases=()), s.client_cpu, 0.07) is None


class _Warm(ThroughputSampler):
    """A sampler whose transfers move at `rates` MB/s in turn, over a path of `rtt` seconds (no ssh)."""

    def __init__(self, rtt: float, rates: list[float]) -> None:
        self.opts = JobOptions(command=RunKind.THROUGHPUT, target="backup", sample_seconds=0.2)
        self.rtt, self.sizes, self.rates, self.sizes_sent = rtt, {}, rates, []
        self.ssh, self.target, self.payload, self.ramps = "ssh", None, None, {}  # type: ignore[assignment]

    def transfer(self, sc: Scenario, size: int, rnd: int, warmup: bool) -> Sample:
        """Return a sample of `size` bytes at the next rate."""
        self.sizes_sent.append(size)
        return Sample(sc, rnd, warmup, ok=True, value=self.rates.pop(0), wall=1.0, nbytes=size)


def test_a_warm_up_still_in_tcps_start_up_on_a_long_path_is_taken_again_larger() -> None:
    sc = Scenario(Kind.THROUGHPUT, direction=Direction.DOWN)
    long_path = _Warm(0.1, [6.3, 16.0])  # 4 MiB in 6.7 round trips: a ramp; then 32 MiB in 21
    long_path(sc, 0, True)
    assert long_path.sizes_sent == [MIN_SIZE, 8 * MIN_SIZE]
    assert long_path.sizes[sc.key] // 2**20 == int(16.0 * MB * RTT_ROUNDS * 0.1) // 2**20  # 20 round trips of it
    slow_line = _Warm(0.01, [1.2])  # 4 MiB over a 10 Mbit/s line: 350 round trips, sized from the first
    slow_line(sc, 0, True)
    assert slow_line.sizes_sent == [MIN_SIZE]


def test_a_process_whose_counters_stop_moving_is_stopped_at_the_stall_limit_not_its_timeout() -> None:
    """A transfer the server stopped answering (asyncssh with TinySSH) waited out its whole timeout, 34 s a sample;
    with `stall` it is stopped once its I/O counters have not moved for that long, and says so."""
    quiet = [sys.executable, "-c", "import sys, time; sys.stdout.write('x' * 1000); sys.stdout.flush(); time.sleep(30)"]
    done = run_timed(quiet, timeout=20, watch=Watching(probe=0.01, stall=0.5))
    assert done.stalled == 0.5 and done.timed_out and done.wall < 10, (done.stalled, done.wall)
    busy = "import time\nfor _ in range(30):\n    open('/dev/null', 'w').write('x' * 4096); time.sleep(0.05)"
    done = run_timed([sys.executable, "-c", busy], timeout=20, watch=Watching(probe=0.01, stall=0.5))
    assert done.returncode == 0 and done.stalled is None and not done.timed_out and done.wall > 1.4


def test_the_exit_calls_are_made_once_for_a_process_that_exits_and_for_one_killed_at_its_deadline() -> None:
    """A watcher borrows the ssh client's socket and lets it go when told the process is gone: it must be told for
    a process killed at its deadline too, or the copy would keep the connection open."""
    told: list[int] = []
    with at_exit(told.append):
        quick = run_timed(["true"])
        killed = run_timed(["sleep", "30"], timeout=0.3)
    assert quick.returncode == 0 and killed.timed_out
    assert len(told) == 2 and told[0] != told[1]


def test_ticks_ride_on_run_timed_wake_ups_from_the_mark_until_stderr_closes() -> None:
    """A watcher's readings come from run_timed's own wake-ups (no thread): at the mark, as the steady part begins
    (the probe that finds it under way), then as asked, riding on a probe within half their interval, and none
    once stderr is found closed (issue 40): past its mark a dense run's stderr wakes nothing, it is read at sparse
    probes (the first after its end finds it) and at the exit. Dense probes begin `after` seconds past the mark."""
    from sshbench.ssh.hooks import ticking
    from sshbench.ssh.timed import SPARSE_PROBE, Dense

    writes = "for i in $(seq 40); do head -c 131072 /dev/zero; sleep 0.02; done"  # 128 KiB each 20 ms, 0.8 s or more
    argv = ["sh", "-c", f"sleep 0.05; echo 'Sending command: x' >&2; {writes}; exec 2>&-; sleep 0.3"]
    ticks: list[float] = []

    def tick() -> float:
        ticks.append(time.perf_counter())
        return SPARSE_PROBE

    with ticking(tick):
        done = run_timed(argv, watch=Watching(probe=0.01, mark="Sending command:", dense=Dense(2, 2**20, after=0.05)))
    mark = next(t for t, text in done.lines if "Sending command" in text)
    first_probe = done.progress[1][0]
    assert first_probe - mark >= 0.05 * 0.9, (mark, done.progress[:3])
    assert abs(ticks[0] - mark) < 0.005, (ticks, mark)  # at the mark
    steady = next(p[0] for p in done.progress if p[2] - done.progress[0][2] >= 2**20)
    at_steady = [i for i, t in enumerate(ticks) if abs(t - steady) < 0.005]
    assert at_steady, (ticks, steady)  # as the steady part begins
    gaps = [b - a for a, b in itertools.pairwise(ticks[at_steady[0] :])]  # then as asked, riding up to half early
    assert gaps and min(gaps) >= SPARSE_PROBE / 2 * 0.9, gaps
    closed = done.ended - 0.3  # `exec 2>&-`, then 0.3 s more: a sparse probe finds stderr's end, none comes after
    assert ticks[-1] <= closed + SPARSE_PROBE + 0.05, (ticks, done.ended)  # a loaded machine wakes late
    assert len([t for t in ticks if t > closed]) <= 1, (ticks, done.ended)


def test_a_dense_runs_stderr_past_its_mark_is_read_without_waking_and_kept_to_its_end() -> None:
    """Past its mark a dense run's stderr wakes nothing (ssh's second mark line, µs after the first, cost a wake-up
    of its own): what follows is read at its probes and at the exit, and where a child still holds the pipe, until
    its end; a command that says more than a pipe holds does not stall the transfer (issue 40)."""
    from sshbench.ssh.timed import Dense

    script = "echo 'Sending command: x' >&2; echo second >&2; head -c 4194304 /dev/zero; (sleep 0.3; echo late >&2) &"
    done = run_timed(["sh", "-c", script], watch=Watching(probe=0.01, mark="Sending command:", dense=Dense(2, 2**20)))
    assert done.returncode == 0 and done.texts[:2] == ["Sending command: x", "second"], done.texts
    assert done.texts[-1] == "late" and done.lines[-1][0] >= done.ended + 0.2, (done.lines, done.ended)
    chatty = "echo 'Sending command: x' >&2; head -c 300000 /dev/zero | tr '\\0' x >&2; head -c 4194304 /dev/zero"
    done = run_timed(
        ["sh", "-c", chatty], timeout=20, watch=Watching(probe=0.01, mark="Sending command:", dense=Dense(2, 2**20))
    )
    assert done.returncode == 0 and not done.timed_out and len(done.texts[-1]) == 300000  # more than a pipe holds


def test_a_transfer_long_enough_ticks_from_its_steady_part_not_its_mark() -> None:
    """Where dense probes begin late (a known ramp), the watchers' readings begin at the probe that finds the steady
    part under way, told first (`at_steady`): no reading at the mark, whose wake-up then does no more than time the
    login's end (issue 40)."""
    from sshbench.ssh.hooks import at_steady, ticking
    from sshbench.ssh.timed import SPARSE_PROBE, Dense

    writes = "for i in $(seq 30); do head -c 131072 /dev/zero; sleep 0.02; done"
    argv = ["sh", "-c", f"sleep 0.05; echo 'Sending command: x' >&2; {writes}; exec 2>&-; sleep 0.2"]
    calls: list[tuple[str, float]] = []
    told = at_steady(lambda: calls.append(("steady", time.perf_counter())))
    with told, ticking(lambda: calls.append(("tick", time.perf_counter())) or SPARSE_PROBE):
        done = run_timed(argv, watch=Watching(probe=0.01, mark="Sending command:", dense=Dense(2, 2**20, 0.05, True)))
    mark = next(t for t, text in done.lines if "Sending command" in text)
    steady = next(p[0] for p in done.progress if p[2] - done.progress[0][2] >= 2**20)
    assert calls[0][0] == "steady" and calls[1][0] == "tick", calls  # told first, then read
    assert calls[0][1] > mark + 0.05 and abs(calls[1][1] - steady) < 0.005, (calls[:2], mark, steady)
    assert [name for name, _ in calls].count("steady") == 1


def test_dense_probes_begin_a_little_after_the_quickest_ramp_of_the_same_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each probe is a wake-up taken from the measured pair: a row's transfers of one size begin theirs at 1.4
    times the quickest time one of them took to reach its steady part (a stalled one moves it no later), where one
    probe most often finds it begun, but no later than a quarter of that transfer's steady part past it (a ramp
    that was most of a transfer); a new size starts from the mark again (issue 40)."""
    from sshbench.measure import samplers

    firsts: list[float] = []
    ramps = iter([0.050, 0.090, 0.040, 0.060, 0.030, 0.180, 0.180])

    def transfer(
        ssh: str, target: object, sc: Scenario, size: int, payload: object, rnd: int, warm: bool, first: float
    ) -> Sample:
        firsts.append(first)
        phases = (("login", 0.1), ("ramp", next(ramps)))  # the steady part: what is left of 0.3 s
        return Sample(sc, rnd, warm, ok=True, value=400.0, wall=0.3, nbytes=size, phases=phases)

    monkeypatch.setattr(samplers, "throughput_sample", transfer)
    sampler = _Warm(0.0, [])
    sc = Scenario(Kind.THROUGHPUT, direction=Direction.DOWN)
    for size in (64, 64, 64, 64):
        ThroughputSampler.transfer(sampler, sc, size * 2**20, 1, False)
    ThroughputSampler.transfer(sampler, sc, 128 * 2**20, 1, False)
    assert firsts == pytest.approx([0.0, 0.07, 0.07, 0.056, 0.0])
    for _ in range(2):  # a ramp of 0.18 s in a 0.2 s transfer: 0.02 s of steady part left, aimed a quarter in
        ThroughputSampler.transfer(sampler, sc, 256 * 2**20, 1, False)
    assert firsts[-2:] == pytest.approx([0.0, 0.185])


def test_a_download_whose_mark_was_read_late_is_not_a_short_transfer() -> None:
    """On a busy machine sshbench reads the client's counters at the mark after part of the payload was written
    (1.8 MB of 8 MiB in one run): the payload is what the client wrote in all, so only a real shortfall fails."""
    from sshbench.measure.samplers import COMMAND_MARKER, _transfer_problem
    from sshbench.ssh.timed import Finished

    size, login = 8 * 2**20, 3_000

    def done(at_mark: int, at_exit: int) -> Finished:
        lines = ((0.1, f"debug1: {COMMAND_MARKER} head -c {size} /dev/zero"),)
        return Finished(("ssh",), 0, 0.0, 1.0, lines, b"", 0.1, 0.1, progress=((0.1, 0, at_mark), (1.0, 0, at_exit)))

    assert _transfer_problem(done(login, login + size), Direction.DOWN, size) is None  # read on time
    assert _transfer_problem(done(login + 1_800_000, login + size), Direction.DOWN, size) is None  # read late
    short = _transfer_problem(done(login, login + size // 2), Direction.DOWN, size)
    assert short == f"short transfer: the client wrote {login + size // 2} bytes in all for {size}"
