"""No import cycles anywhere in src/: every import statement counts (module level, inside functions, under
TYPE_CHECKING), so a module graph read from the source text must be acyclic."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).parent.parent / "src"
PACKAGE = "sshbench"


def module_name(path: Path, src: Path = SRC) -> str:
    """Return the dotted name of a source file."""
    parts = path.relative_to(src).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_package(path: Path) -> bool:
    """Return True for a package's __init__.py."""
    return path.name == "__init__.py"


def imported(path: Path, known: set[str], src: Path = SRC) -> Iterator[str]:
    """Yield every module of ours that any import statement in a file names (a `from P import m` counts m
    when m is a module, else P)."""
    name = module_name(path, src)
    base = name.split(".") if is_package(path) else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.split(".")[0] == PACKAGE)
        elif isinstance(node, ast.ImportFrom):
            anchor = base[: len(base) - node.level + 1] if node.level else []
            source = ".".join([*anchor, *([node.module] if node.module else [])])
            if source.split(".")[0] != PACKAGE:
                continue
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                yield sub if sub in known else source


def graph(src: Path = SRC) -> dict[str, set[str]]:
    """Return module -> the modules of ours it imports, read from every import statement of every file."""
    files = {module_name(p, src): p for p in (src / PACKAGE).rglob("*.py")}
    known = set(files)
    return {m: {t for t in imported(p, known, src) if t in known and t != m} for m, p in files.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Return the strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_imports_inside_functions_under_type_checking_and_relative_count(tmp_path: Path) -> None:
    pkg = tmp_path / PACKAGE
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from sshbench.sub import b\n")
    (pkg / "sub" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import c\n")
    (pkg / "sub" / "c.py").write_text("import sshbench.a\n")
    edges = graph(tmp_path)
    assert edges["sshbench.a"] == {"sshbench.sub.b"}
    assert edges["sshbench.sub.b"] == {"sshbench.sub.c"}
    assert cycles(edges) == [["sshbench.a", "sshbench.sub.b", "sshbench.sub.c"]]


def test_no_import_cycles_in_src() -> None:
    found = cycles(graph())
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)
