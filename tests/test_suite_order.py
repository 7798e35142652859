"""The suite's order of longest tests names tests that exist: a test renamed would quietly lose its early start."""

from __future__ import annotations

from pathlib import Path

from conftest import LONGEST_FIRST


def test_every_longest_first_name_is_a_test_of_the_suite() -> None:
    files = {p.name: p.read_text() for p in Path(__file__).parent.rglob("test_*.py")}
    for name in LONGEST_FIRST:
        module, _, test = name.partition("::")
        assert module in files, f"LONGEST_FIRST names {module}, which is no test module"
        assert f"def {test.split('[')[0]}" in files[module], f"LONGEST_FIRST names {name}, which is no test"
