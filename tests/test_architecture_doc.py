"""docs/ARCHITECTURE.md's picture names every module under src/: a module added without a place in it fails here."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent
SRC = ROOT / "src" / "sshbench"


def test_every_module_is_in_the_architecture_picture() -> None:
    doc = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    start = doc.index("```\n")
    picture = doc[start : doc.index("```\n", start + 4)]
    named = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", picture))
    modules = [p for p in SRC.rglob("*.py") if p.stem not in ("__init__", "__main__")]
    assert len(modules) > 150
    missing = sorted(str(p.relative_to(SRC)) for p in modules if p.stem not in named)
    assert not missing, f"not in docs/ARCHITECTURE.md's picture: {missing}"
