"""Destinations are validated and normalised before ssh sees them (no option injection)."""

import shutil
from pathlib import Path

import pytest

from sshbench.errors import SshbenchError
from sshbench.ssh.destination import MARKS_ONLY, Target, knows_log_verbose, normalize_destination


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
