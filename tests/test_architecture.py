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


# --- Apps as layers ---------------------------------------------------------------------

# core -> graph -> review -> agents -> the read apps. A module may import its own app and
# lower layers; the read apps are peers and import none of each other.
LAYERS = {
    "core": 0,
    "graph": 1,
    "review": 2,
    "agents": 3,
    "api": 4,
    "explorer": 4,
    "exports": 4,
    "insights": 4,
}
# Upward imports that exist today, each to be removed by moving the code to the layer it
# belongs to (issue 12). The list may only shrink: a new one fails the test below.
KNOWN_UPWARD = {
    # The source page lists the proposals quoting a revision and offers a "read now"
    # run: a page that combines apps, to move to the highest app it needs.
    ("kgreview/graph/views.py", "kgreview.agents.selectors"),
    ("kgreview/graph/views.py", "kgreview.review.models"),
    ("kgreview/graph/views.py", "kgreview.review.selectors"),
    # Graph history and selectors read proposals to explain an edge.
    ("kgreview/graph/history.py", "kgreview.review.models"),
    ("kgreview/graph/selectors.py", "kgreview.review.models"),
    # Evidence excerpts share the clipping helpers of the review tags.
    ("kgreview/graph/templatetags/markup_tags.py", "kgreview.review.templatetags.review_tags"),
}


def upward_imports() -> set[tuple[str, str]]:
    found = set()
    for path in (ROOT / "kgreview").rglob("*.py"):
        parts = path.relative_to(ROOT / "kgreview").parts
        if len(parts) < 2 or parts[0] not in LAYERS or "migrations" in parts:
            continue
        mine = parts[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                bits = name.split(".")
                if bits[0] != "kgreview" or len(bits) < 2 or bits[1] not in LAYERS:
                    continue
                theirs = bits[1]
                peers = LAYERS[theirs] == LAYERS[mine] == 4 and theirs != mine
                if LAYERS[theirs] > LAYERS[mine] or peers:
                    found.add((str(path.relative_to(ROOT)), name))
    return found


def test_no_app_imports_a_higher_layer_beyond_the_known_few():
    """Lower layers never import higher ones (at module level or inside a function);
    the few that still do are listed, and the list only shrinks."""
    assert upward_imports() - KNOWN_UPWARD == set()


def test_the_list_of_known_upward_imports_holds_no_stale_entry():
    """An import that was moved away comes off the list, so it cannot come back."""
    assert KNOWN_UPWARD - upward_imports() == set()


def test_no_app_imports_the_benchmarks_but_the_command_that_runs_them():
    """Benchmarks sit above every app; only ``manage.py bench`` reaches for them."""
    users = []
    for path in (ROOT / "kgreview").rglob("*.py"):
        text = path.read_text()
        if "import benchmarks" in text or "from benchmarks" in text:
            users.append(str(path.relative_to(ROOT)))
    assert users == ["kgreview/agents/management/commands/bench.py"]
