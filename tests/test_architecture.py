"""The construction package stays pure: no Django, no database."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = ("django", "kgreview", "psycopg", "celery")


def test_construction_imports_no_django_in_a_fresh_interpreter():
    """Importing every construction module loads no Django module."""
    modules = [
        "construction." + p.stem
        for p in (ROOT / "construction").glob("*.py")
        if p.stem != "__init__"
    ]
    code = (
        "import sys, importlib\n"
        "import construction\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        f"{FORBIDDEN!r})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == ""


def test_construction_source_has_no_forbidden_import_statements():
    """No module in construction/ even mentions Django in an import, lazily or not."""
    offenders = []
    for path in (ROOT / "construction").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in FORBIDDEN]
    assert offenders == []
