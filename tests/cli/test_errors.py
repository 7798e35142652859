"""Errors are one clear line with the right exit code, and leave nothing behind (real CLI, real ssh)."""

from __future__ import annotations

import pytest

from conftest import private_dirs, sshbench
from sshbench.errors import ExitCode

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (["throughput", "--cipher", "rot13-cbc"], ExitCode.UNSUPPORTED_ALGORITHM, "does not support cipher"),
        (["throughput", "--cipher", "aes128-ctr;rm"], ExitCode.USAGE, "not a valid cipher"),
        (["throughput", "--size", "lots"], ExitCode.USAGE, "bad --size"),
        (["latency", "127.0.0.1:1"], ExitCode.CONNECTION_FAILED, "Connection refused"),
        (["run", "--db", "/proc/sshbench/x.db"], ExitCode.STORAGE, "results database"),
        (["run", "--resume", "99"], ExitCode.USAGE, "there is no run 99"),
        (["show", "12345"], ExitCode.USAGE, "sshbench history"),
    ],
)
def test_errors_are_one_clear_line(cli_env: dict[str, str], args: list[str], code: int, words: str) -> None:
    before = private_dirs()
    done = sshbench(cli_env, *args)
    assert done.returncode == code, done.stderr
    assert words in done.stderr
    assert "Traceback" not in done.stderr
    assert private_dirs() - before == set()
