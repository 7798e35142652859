"""Destinations are validated and normalised before ssh sees them (no option injection)."""

import shutil
from pathlib import Path

import pytest

from sshbench.errors import ExitCode, SshbenchError
from sshbench.ssh.destination import MARKS_ONLY, Target, knows_log_verbose, login_timeout, normalize_destination


def test_destination_normalisation() -> None:
    assert normalize_destination("host:2222") == "ssh://host:2222"
    assert normalize_destination("user@host:22") == "ssh://user@host:22"
    assert normalize_destination("alias") == "alias"
    assert normalize_destination("user@host") == "user@host"
    for bad in ("-oProxyCommand=touch /tmp/x", "host;rm", "a b"):
        with pytest.raises(SshbenchError):
            normalize_destination(bad)


def test_a_transfer_logs_only_its_marks_where_the_client_knows_log_verbose(tmp_path: Path) -> None:
    """ssh -v's ~54 login lines are as many wake-ups of sshbench; a transfer asks for its command-sent line alone
    (LogVerbose) where the client takes it, else -v as before (issue 40)."""
    target = Target("x", "x", ("-p", "22"), "x", 22, embedded=False)
    system = shutil.which("ssh")
    assert system is not None and knows_log_verbose(system)  # this machine's OpenSSH (9.2)
    argv = target.argv(system, [], "true", marks_only=True)
    assert "-v" not in argv and argv[1:5] == list(MARKS_ONLY)
    assert target.argv(system, [], "true")[1] == "-v"
    old = tmp_path / "ssh"  # a client that refuses the option, as an older OpenSSH does
    old.write_text(f'#!/bin/sh\ncase "$*" in *LogVerbose*) exit 255;; esac\nexec {system} "$@"\n')
    old.chmod(0o755)
    assert not knows_log_verbose(str(old)) and target.argv(str(old), [], "true", marks_only=True)[1] == "-v"


def test_a_login_timeout_is_30_s_or_what_the_environment_says_and_a_wrong_one_is_refused() -> None:
    from click.testing import CliRunner

    from sshbench.cli.main import cli

    assert (login_timeout(None), login_timeout(""), login_timeout("45")) == (30.0, 30.0, 45.0)
    for wrong in ("abc", "0", "-5", "1e9", "nan"):
        with pytest.raises(SshbenchError, match="SSHBENCH_LOGIN_TIMEOUT") as caught:
            login_timeout(wrong)
        assert caught.value.code == ExitCode.USAGE
    done = CliRunner().invoke(cli, ["history"], env={"SSHBENCH_LOGIN_TIMEOUT": "soon"})
    assert isinstance(done.exception, SshbenchError) and "e.g. SSHBENCH_LOGIN_TIMEOUT=60" in str(done.exception.fix)
