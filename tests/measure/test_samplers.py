"""The steady rate of a transfer from I/O counter probes (pure)."""

from sshbench.measure.samplers import steady_rate


def test_steady_rate_skips_the_start_of_the_stream() -> None:
    mib = 2**20
    # counters: baseline 1000 bytes before the command; a slow ramp to 8 MiB in 100 ms, then 100 MiB/100 ms
    progress = [(0.9, 1000, 500), (1.05, 1000 + 4 * mib, 0), (1.10, 1000 + 8 * mib, 0), (1.15, 1000 + 58 * mib, 0)]
    rate = steady_rate(progress, 1, 108 * mib, command_at=1.0, end=1.20)
    assert rate is not None and abs(rate - (108 - 21.6) * mib / 0.0864 / 1e6) / rate < 0.01
    assert steady_rate([], 1, 10 * mib, 1.0, 2.0) is None  # no counters: caller falls back
