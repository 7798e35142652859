"""docs/BENCHMARKS.md is today's results: under 40 KB, every table with its date, commit, machine and the command
that makes it, and every command it quotes a script or subcommand that exists with options its --help lists."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from functools import cache
from pathlib import Path

import click

from sshbench.cli.main import cli

ROOT = Path(__file__).parent.parent
DOC = ROOT / "docs" / "BENCHMARKS.md"
MOST_BYTES = 40_000
MEASURED = re.compile(r"^Measured: (\d{4}-\d{2}-\d{2}), commits? ([0-9a-f]{7,40})\b.*, the .+")
PROGRAMS = ("sshbench", "benchmarks/", "scripts/")  # what a quoted command starts with, once sudo and paths are off


def quoted_commands(text: str) -> list[str]:
    """Return every command the page quotes: indented and fenced lines (continuations joined) and code spans."""
    found, lines = [], text.replace("\\\n", " ").splitlines()
    fenced = False
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced or line.startswith("    "):
            found.append(line.strip())
    found += re.findall(r"`([^`]+)`", text)
    return [c for c in (program_part(c) for c in found) if c]


def program_part(command: str) -> str:
    """Return COMMAND from its program on (no sudo, runuser or interpreter), or "" when it names none of ours."""
    words = command.replace("[", " ").replace("]", " ").split()
    if words[:1] == ["runuser"] and "--" in words:  # runuser -u USER -- COMMAND
        words = words[words.index("--") + 1 :]
    if words[:1] == ["sudo"]:
        words = words[1:]
    if words and words[0].endswith("/python"):
        words = words[1:]
    if words and words[0].endswith("bin/sshbench"):
        words[0] = "sshbench"
    return " ".join(words) if words and words[0].startswith(PROGRAMS) else ""


def options(words: list[str]) -> set[str]:
    """Return the long options WORDS give (without their values)."""
    return {w.split("=", 1)[0] for w in words if w.startswith("--") and len(w) > 2}


@cache
def script_help(path: str) -> str:
    """Return a benchmark script's --help (it must parse its arguments before doing anything)."""
    assert "argparse" in (ROOT / path).read_text(), f"{path} has no --help to check its options against"
    done = subprocess.run([sys.executable, str(ROOT / path), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, (path, done.stderr)
    return done.stdout


def command_options(name: str) -> set[str]:
    """Return every option an sshbench subcommand takes."""
    with click.Context(cli) as ctx:
        command = cli.get_command(ctx, name)
    assert command is not None, f"sshbench has no command {name}"
    return {o for p in command.params for o in (*p.opts, *p.secondary_opts)}


def test_benchmarks_md_is_under_40_kb() -> None:
    assert len(DOC.read_bytes()) < MOST_BYTES


def test_every_table_has_its_date_commit_machine_and_command() -> None:
    measured, command, tables = "", False, 0
    previous = ""
    for number, line in enumerate(DOC.read_text().splitlines(), 1):
        if line.startswith("## "):
            measured, command = "", False
        elif line.startswith("Measured:"):
            assert MEASURED.match(line), f"line {number}: say 'Measured: DATE, commit HASH, the MACHINE'"
            measured, command = line, False
        elif line.startswith("    ") and program_part(line.strip()):
            command = True
        elif line.startswith("|") and not previous.startswith("|"):
            tables += 1
            assert measured, f"line {number}: a table without its Measured line (date, commit, machine)"
            assert command, f"line {number}: a table without the command that makes it"
        previous = line
    assert tables >= 20


def test_every_commit_named_is_in_the_history() -> None:
    shallow = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=ROOT, capture_output=True, text=True)
    if shallow.returncode != 0 or shallow.stdout.strip() != "false":
        return  # a shallow clone or no git: the commits cannot be looked up here (a full clone checks them)
    named = set(re.findall(r"commits? ([0-9a-f]{7,40})\b", DOC.read_text()))
    assert len(named) >= 15
    for commit in named:
        found = subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=ROOT, capture_output=True)
        assert found.returncode == 0, f"docs/BENCHMARKS.md names commit {commit}, which git does not have"


def test_every_quoted_command_names_a_real_program_and_its_options() -> None:
    commands = quoted_commands(DOC.read_text())
    assert len(commands) >= 25
    for command in commands:
        words = shlex.split(command, posix=False)
        program = words[0]
        if program == "sshbench":
            name = next((w for w in words[1:] if not w.startswith("-")), "run")
            name = name if name in cli.commands else "run"
            unknown = options(words) - command_options(name)
            assert not unknown, f"`{command}`: sshbench {name} takes no {sorted(unknown)}"
            continue
        assert (ROOT / program).exists(), f"`{command}`: there is no {program}"
        if program.endswith(".py") and options(words):
            listed = script_help(program)
            unknown = {o for o in options(words) if not re.search(rf"{re.escape(o)}\b", listed)}
            assert not unknown, f"`{command}`: {program} --help lists no {sorted(unknown)}"
