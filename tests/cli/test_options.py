"""Option values are parsed and validated before anything is measured."""

import pytest

from sshbench.cli.options import parse_cpu_period, parse_duration, parse_fail_if, parse_percent, parse_size
from sshbench.errors import ExitCode, SshbenchError


def test_parse_size_duration_percent() -> None:
    assert parse_size("auto") is None
    assert parse_size("512M") == 512 * 2**20 and parse_size("1GiB") == 2**30
    assert parse_duration("3m") == 180 and parse_duration("90") == 90
    assert parse_percent("5%") == pytest.approx(0.05)
    for bad in ("abc", "0", "100T", "-5M"):
        with pytest.raises(SshbenchError):
            parse_size(bad)
    with pytest.raises(SshbenchError):
        parse_percent("150%")


def test_parse_fail_if() -> None:
    assert parse_fail_if("slower:5%") == pytest.approx(5.0)
    for bad in ("faster:5%", "slower:", "slower:lots"):
        with pytest.raises(SshbenchError) as err:
            parse_fail_if(bad)
        assert err.value.code is ExitCode.USAGE and err.value.place == "--fail-if"


def test_a_cpu_period_needs_a_quota_the_kernel_accepts() -> None:
    """A quota shorter than the kernel's smallest (1 ms) would be raised to it silently, and the share with it."""
    assert parse_cpu_period(None, None, None) is None
    assert parse_cpu_period("10ms", "10%", None) == 10 and parse_cpu_period("100", None, "50%") == 100
    cases = {
        ("5ms", "10%", None): "use --cpu-period 10ms or more",
        ("10ms", None, None): "give --server-cpu or --client-cpu",
        ("0ms", "10%", None): "from 1ms to 1000ms",
        ("2s", "10%", None): "from 1ms to 1000ms",
        ("40ms", "50%", "2%"): "2% of 40ms is 0.8 ms",
    }
    for (period, server, client), fix in cases.items():
        with pytest.raises(SshbenchError) as err:
            parse_cpu_period(period, server, client)
        assert err.value.code is ExitCode.USAGE and fix in str(err.value.fix), (period, err.value.fix)
