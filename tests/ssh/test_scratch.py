"""The remote scratch directory's path is the only value put into its remote commands: only a plain mktemp path
under a `sshbench-tools.` name is accepted, and such a path needs no shell quoting at all."""

from __future__ import annotations

import shlex

from hypothesis import given
from hypothesis import strategies as st

from sshbench.ssh.scratch import guardian, path_pattern

GUARDIAN, _PATH = guardian("tools"), path_pattern("tools")


def test_mktemp_paths_are_accepted_and_anything_else_is_not() -> None:
    assert _PATH.match("/dev/shm/sshbench-tools.qh6WSL")
    assert _PATH.match("/tmp/user/1000/sshbench-tools.AbC123xyz")
    for bad in (
        "",
        "dev/shm/sshbench-tools.qh6WSL",  # relative
        "/dev/shm/sshbench-tools.qh6WSL; rm -rf ~",
        "/dev/shm/sshbench-tools.qh6WSL/..",
        "/dev/shm/other.qh6WSL",
        "/dev/shm/sshbench-tools.",
        "/dev/shm/$(reboot)/sshbench-tools.qh6WSL",
        "/dev/shm/sshbench-tools.qh6WSL\n/",
        "/",
    ):
        assert not _PATH.match(bad), bad


@given(st.text(min_size=1, max_size=80))
def test_an_accepted_path_is_inert_in_a_shell(text: str) -> None:
    path = f"/{text}/sshbench-tools.abcdef"
    if _PATH.match(path):
        assert shlex.quote(path) == path  # no character a shell would treat specially


def test_the_guardian_removes_the_directory_after_its_input_ends() -> None:
    assert GUARDIAN.index("cat >/dev/null") < GUARDIAN.index('rm -rf -- "$d"')
    assert "; rm -rf" in GUARDIAN  # runs whether cat ended by EOF or by a dropped connection


def test_a_payload_scratch_directory_is_named_for_what_it_holds_and_removed_alike() -> None:
    assert path_pattern("payload").match("/dev/shm/sshbench-payload.qh6WSL")
    assert not path_pattern("payload").match("/dev/shm/sshbench-tools.qh6WSL")
    assert guardian("payload") == GUARDIAN.replace("sshbench-tools.", "sshbench-payload.")
