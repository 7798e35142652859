"""A kernel that gives a normal user no namespace of its own is named by its setting, with the line that allows it."""

from __future__ import annotations

from pathlib import Path

import pytest

from sshbench.targets.link import userns


@pytest.mark.parametrize(
    ("name", "value", "allow"),
    [
        ("kernel.unprivileged_userns_clone", "0", "sysctl -w kernel.unprivileged_userns_clone=1"),
        ("user.max_user_namespaces", "0", "sysctl -w user.max_user_namespaces=15000"),
        (
            "kernel.apparmor_restrict_unprivileged_userns",
            "1",
            "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0",
        ),
    ],
)
def test_the_setting_that_forbids_namespaces_is_named_with_its_fix(
    tmp_path: Path, name: str, value: str, allow: str
) -> None:
    path = tmp_path / name.replace(".", "/")
    path.parent.mkdir(parents=True)
    path.write_text(value + "\n")
    said = userns.forbidding(tmp_path)
    assert said is not None and said.startswith(f"{name} = {value}") and allow in said


def test_an_allowing_kernel_names_no_setting(tmp_path: Path) -> None:
    path = tmp_path / "user" / "max_user_namespaces"
    path.parent.mkdir(parents=True)
    path.write_text("96363\n")
    assert userns.forbidding(tmp_path) is None
