"""The README teaches by task in at most 8 KB, its command list is the CLI's, every command has its page, and every
schema version the docs name is the one the code writes."""

from __future__ import annotations

import json
import re
from pathlib import Path

from sshbench.cli.main import cli
from sshbench.records import SCHEMA_VERSION

ROOT = Path(__file__).parent.parent
README = ROOT / "README.md"
MOST_BYTES = 8 * 1024


def listed_commands() -> list[str]:
    """Return the commands of the README's command table, in its order."""
    text = README.read_text()
    table = text.split("## Commands", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `sshbench (\w+)", table, flags=re.M)


def test_the_readme_fits_in_8_kb() -> None:
    assert len(README.read_bytes()) <= MOST_BYTES


def test_the_quick_start_is_two_commands_and_ci_runs_the_second() -> None:
    text = README.read_text()
    block = text.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#", 1)[0].strip() for line in block.splitlines()]
    assert commands == ["scripts/quickstart", "scripts/test"]
    assert "scripts/test" in (ROOT / ".ci" / "run").read_text()


def test_the_readme_lists_every_command_once() -> None:
    listed = listed_commands()
    assert len(listed) == len(set(listed))
    assert set(listed) == set(cli.commands)


def test_every_command_has_a_page_and_every_page_a_command() -> None:
    pages = {p.stem for p in (ROOT / "docs" / "commands").glob("*.md")}
    assert pages == set(cli.commands)
    for name in pages:
        assert (ROOT / "docs" / "commands" / f"{name}.md").read_text().startswith(f"# sshbench {name}\n")


def test_every_page_the_readme_and_the_docs_link_exists() -> None:
    for page in [README, *(ROOT / "docs").rglob("*.md")]:
        for link in re.findall(r"\]\(([^)#:]+)\)", page.read_text()):
            assert (page.parent / link).exists(), (page.name, link)


def test_every_schema_version_named_is_the_one_written() -> None:
    texts = [README, *(ROOT / "docs").rglob("*.md"), *(ROOT / "docs" / "schema").glob("*.json")]
    named = {p.name: re.findall(r"schema_version`? (\d+)", p.read_text()) for p in texts}
    assert any(named.values())
    assert {p: v for p, v in named.items() if set(v) - {str(SCHEMA_VERSION)}} == {}
    consts = [json.loads(p.read_text())["properties"].get("schema_version") for p in texts if p.suffix == ".json"]
    assert {"const": SCHEMA_VERSION} in consts
    assert [c for c in consts if c not in (None, {"const": SCHEMA_VERSION})] == []


PARTS = ("## What it answers", "## Options", "## Output", "## Needs", "## JSON")
PAGE_BYTES = (800, 10_000)  # every page about the same depth: no stub of a line, no manual


def test_every_command_page_has_the_same_parts_and_depth() -> None:
    for page in sorted((ROOT / "docs" / "commands").glob("*.md")):
        text = page.read_text()
        headings = [line for line in text.splitlines() if line.startswith("## ")]
        assert headings == list(PARTS), f"{page.name}: its parts are {headings}, not {list(PARTS)}"
        output = text.split("## Output", 1)[1].split("\n## ", 1)[0]
        excerpt = output.split("```text\n", 1)[1].split("```", 1)[0] if "```text\n" in output else ""
        assert excerpt.count("\n") >= 3, f"{page.name}: its Output part holds no real output excerpt"
        assert PAGE_BYTES[0] <= len(text.encode()) <= PAGE_BYTES[1], f"{page.name}: {len(text.encode())} bytes"
