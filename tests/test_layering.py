"""The layout is the architecture: each package, imported in a fresh interpreter, pulls in only the layers
below it; modules and functions stay small; `--help` loads no heavy library."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).parent.parent / "src" / "sshbench"
GROUND = (
    "sshbench.errors",
    "sshbench.model",
    "sshbench.records",
    "sshbench.discovery",
    "sshbench.samples",
    "sshbench.environment",
    "sshbench.stats",
    "sshbench.ratios",
    "sshbench.units",
    "sshbench.exact",
    "sshbench.hints",
    "sshbench.leases",
    "sshbench.payloads",
    "sshbench.kex",
    "sshbench.hostkeys",
    "sshbench.products",
    "sshbench.joboptions",
    "sshbench.runkinds",
    "sshbench.builds",
    "sshbench.arrivals",
    "sshbench.loadsteps",
    "sshbench.loadwords",
    "sshbench.authnames",
    "sshbench.remedy",
    "sshbench.clienttypes",
)
STORE = ("sshbench.storage",)
RATINGS = ("sshbench.ssh", "sshbench.ssh.audit")  # analyse/policy reads ssh-audit's ratings through the adapter
READING = ("sshbench.analyse",)
# package -> what its modules may import of ours (besides themselves and `sshbench` itself)
ALLOWED = {
    "ground": GROUND,
    "sshbench.storage": GROUND,
    "sshbench.guardian": (*GROUND, *STORE),  # the process that reaps a killed sshbench's lease
    "sshbench.ssh": GROUND,
    "sshbench.targets": (*GROUND, "sshbench.ssh"),
    "sshbench.clients": (*GROUND, "sshbench.ssh"),
    "sshbench.measure": (*GROUND, "sshbench.ssh"),
    # jobs/tune.py reads the reading side's diagnosis of its defaults to choose its remedies (analyse is pure)
    "sshbench.jobs": (
        *GROUND,
        *STORE,
        *READING,
        "sshbench.ssh",
        "sshbench.targets",
        "sshbench.clients",
        "sshbench.measure",
    ),
    "sshbench.analyse": (*GROUND, *RATINGS),
    "sshbench.render": (*GROUND, *RATINGS, "sshbench.analyse"),
}
HEAVY = ("rich", "psutil", "ssh_audit", "altair", "vl_convert", "jinja2", "sqlite3", "scipy", "numpy")


def modules(package: str) -> list[str]:
    """Return every module of a package (or of the ground: the top-level modules)."""
    if package == "ground":
        return list(GROUND)
    folder = SRC.joinpath(*package.split(".")[1:])
    if folder.is_dir():
        found = [p.relative_to(SRC).with_suffix("") for p in sorted(folder.rglob("*.py"))]
        return [".".join(("sshbench", *(p.parts[:-1] if p.name == "__init__" else p.parts))) for p in found]
    return [package]


def imported_by(names: list[str]) -> set[str]:
    """Import modules in a fresh interpreter and return every module loaded (ours and others)."""
    code = "import importlib, json, sys\n" + "".join(f"importlib.import_module({n!r})\n" for n in names)
    code += "print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout))


def within(name: str, prefixes: tuple[str, ...]) -> bool:
    """Return True when a module is one of the prefixes or inside one of them."""
    return any(name == p or name.startswith(p + ".") for p in prefixes)


@pytest.mark.parametrize("package", list(ALLOWED))
def test_each_package_imports_only_the_layers_below(package: str) -> None:
    own = modules(package)
    ours = {m for m in imported_by(own) if m.startswith("sshbench.")}
    allowed = (*ALLOWED[package], *own) if package != "ground" else GROUND
    strays = sorted(m for m in ours if not within(m, allowed))
    assert not strays, f"{package} pulls in {strays}"


# The taking tower reads the reading tower in two deliberate loops only (measure -> read -> measure): `tune` reads
# the diagnosis of its defaults to choose its remedies and its remedies' gains to choose the one it checks at
# another copy size, and `load` reads each step back to stop at the SLO.
CROSSINGS = {
    "jobs/tune.py": "sshbench.analyse.tune",
    "jobs/tunecheck.py": "sshbench.analyse.sizes",
    "jobs/load.py": "sshbench.analyse.load",
}


def test_jobs_read_the_analysis_only_where_a_loop_needs_it() -> None:
    found = {}
    for path in sorted((SRC / "jobs").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            named = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            named += [a.name for a in node.names] if isinstance(node, ast.Import) else []
            for module in named:
                if within(module, READING):
                    found[str(path.relative_to(SRC))] = module
    assert found == CROSSINGS


def test_help_loads_no_heavy_library() -> None:
    loaded = imported_by(["sshbench.cli.main"])
    assert not [m for m in loaded if within(m, HEAVY)]


def test_every_module_is_in_a_layer() -> None:
    packages = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    top = {p.stem for p in SRC.glob("*.py")} - {"__init__", "__main__"}
    assert packages == {"storage", "ssh", "targets", "clients", "measure", "jobs", "analyse", "render", "cli"}
    assert {f"sshbench.{m}" for m in top} == {*GROUND, "sshbench.guardian"}


def test_modules_and_functions_stay_small() -> None:
    too_big = []
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text()
        name = path.relative_to(SRC)
        if len(text.splitlines()) > 400:
            too_big.append(f"{name}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > 50:
                    too_big.append(f"{name}:{node.lineno} {node.name}(): {length} lines")
    assert not too_big


@pytest.mark.parametrize("script", sorted((SRC.parent.parent / "benchmarks").glob("*.py")), ids=lambda p: p.name)
def test_benchmarks_still_import(script: Path) -> None:
    """Benchmarks run by hand; importing them catches a moved or renamed module before anyone needs them."""
    code = (
        "import importlib.util as u, sys; s = u.spec_from_file_location('bench', sys.argv[1]); "
        "m = u.module_from_spec(s); sys.modules['bench'] = m; s.loader.exec_module(m); assert callable(m.main)"
    )
    done = subprocess.run([sys.executable, "-c", code, str(script)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
