"""The construction package stays pure: no Django, no database."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = ("django", "kgreview", "psycopg", "celery")


def test_construction_imports_no_django_in_a_fresh_interpreter():
    """Importing every construction module, subpackages included, loads no Django module."""
    modules = [
        ".".join(p.relative_to(ROOT).with_suffix("").parts)
        for p in (ROOT / "construction").rglob("*.py")
        if p.stem != "__init__"
    ]
    assert "construction.offline.reader" in modules
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
            offenders += [
                f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] in FORBIDDEN
            ]
    assert offenders == []


# --- Apps as layers ---------------------------------------------------------------------

# core -> graph -> review -> agents -> the read apps -> web. A module may import its own
# app and lower layers; the read apps are peers and import none of each other; web, the
# pages that combine apps, sits on top and nothing imports it.
LAYERS = {
    "core": 0,
    "graph": 1,
    "review": 2,
    "agents": 3,
    "api": 4,
    "explorer": 4,
    "exports": 4,
    "insights": 4,
    "questions": 4,
    "web": 5,
}
# Upward imports allowed: none. Issue 12 removed the last ones (pages that combine apps
# moved to ``web``; review tells agents through a signal). Keep it empty.
KNOWN_UPWARD: set[tuple[str, str]] = set()


def imported_modules(source: str, module: str) -> set[str]:
    """Every module ``source`` (the text of module ``module``) imports, anywhere in it:
    at the top, inside a function or a class, under ``if TYPE_CHECKING``. Relative
    imports are resolved against ``module``. ``from a.b import c`` names ``a.b``, and
    ``from kgreview import web`` names ``kgreview.web``."""
    package = module.split(".")
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level] + ([base] if base else []))
            if "." in base:
                found.add(base)
            else:  # the top package: what it imports from it are the apps
                found |= {f"{base}.{a.name}" for a in node.names if a.name != "*"}
    return found


def _layer_of(name: str) -> str | None:
    bits = name.split(".")
    if bits[0] == "kgreview" and len(bits) > 1 and bits[1] in LAYERS:
        return bits[1]
    return None


def upward_imports() -> set[tuple[str, str]]:
    found = set()
    for path in (ROOT / "kgreview").rglob("*.py"):
        parts = path.relative_to(ROOT / "kgreview").parts
        if len(parts) < 2 or parts[0] not in LAYERS or "migrations" in parts:
            continue
        mine = parts[0]
        # A package's __init__ resolves relative imports like a module inside it.
        module = ".".join(("kgreview", *parts[:-1], path.stem))
        for name in imported_modules(path.read_text(), module):
            theirs = _layer_of(name)
            if theirs is None:
                continue
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


def test_the_scan_sees_lazy_and_relative_imports():
    """An import hidden in a function, a method or a relative ``from ..x import y`` counts
    like one at the top of the module."""
    source = (
        "def f():\n"
        "    from kgreview.agents.tasks import requeue\n"
        "class C:\n"
        "    def m(self):\n"
        "        import kgreview.explorer.views\n"
        "from ..web import views\n"
        "from .. import insights\n"
        "from . import selectors\n"
    )
    assert imported_modules(source, "kgreview.graph.views") == {
        "kgreview.agents.tasks",
        "kgreview.explorer.views",
        "kgreview.web",
        "kgreview.insights",
        "kgreview.graph",
    }


def test_web_sits_above_every_app_and_every_app_is_placed():
    """The pages that combine apps are the one top layer; every app package under
    kgreview/ has a layer, so a new app cannot slip past the contract."""
    apps = {p.parent.name for p in (ROOT / "kgreview").glob("*/apps.py")}
    assert apps == set(LAYERS)
    top = max(LAYERS.values())
    assert [a for a, n in LAYERS.items() if n == top] == ["web"]


def test_no_app_imports_the_benchmarks_but_the_command_that_runs_them():
    """Benchmarks sit above every app; only ``manage.py bench`` reaches for them."""
    users = []
    for path in (ROOT / "kgreview").rglob("*.py"):
        text = path.read_text()
        if "import benchmarks" in text or "from benchmarks" in text:
            users.append(str(path.relative_to(ROOT)))
    assert users == ["kgreview/agents/management/commands/bench.py"]


# --- No private name crosses a module ------------------------------------------------------


def _private_imports(base: str) -> list[str]:
    """``from x import _name`` in ``base``'s modules, as "importer <- module._name"."""
    found = []
    for path in (ROOT / base).rglob("*.py"):
        if "migrations" in path.parts:
            continue
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        package = module if path.stem == "__init__" else module.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            source = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(parts + ([node.module] if node.module else []))
            found += [
                f"{module} <- {source}.{alias.name}"
                for alias in node.names
                if alias.name.startswith("_") and not alias.name.startswith("__")
            ]
    return found


def test_no_module_of_the_product_imports_another_modules_private_name():
    """A name that starts with "_" belongs to its module: a helper two modules share is
    public, where a reader looks for it (issue 26: split views and services had left
    35 private imports behind)."""
    offenders = [
        line
        for base in ("kgreview", "construction", "benchmarks")
        for line in _private_imports(base)
    ]
    assert offenders == []


def test_the_private_import_check_sees_relative_and_absolute_imports(tmp_path, monkeypatch):
    package = tmp_path / "kgreview" / "demo"
    package.mkdir(parents=True)
    (package / "a.py").write_text(
        "from .b import _helper\nfrom kgreview.demo.b import _OTHER, public\n"
    )
    (package / "b.py").write_text("_helper = _OTHER = public = 1\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert sorted(_private_imports("kgreview")) == [
        "kgreview.demo.a <- kgreview.demo.b._OTHER",
        "kgreview.demo.a <- kgreview.demo.b._helper",
    ]


# --- One name for the person who acts ------------------------------------------------------

# The modules that change state. Any other module that defines a function taking
# ``acting_user`` is one too (``_service_modules``).
SERVICE_MODULES = (
    "kgreview/core/audit.py",
    "kgreview/graph/services/*.py",
    "kgreview/graph/bulk*.py",
    "kgreview/graph/sources.py",
    "kgreview/review/decisions.py",
    "kgreview/review/bulk*.py",
    "kgreview/review/undo*.py",
    "kgreview/review/mend.py",
    "kgreview/review/settle.py",
    "kgreview/review/services.py",
    "kgreview/review/reconcile.py",
    "kgreview/review/kinds/*.py",
    "kgreview/agents/runs.py",
    "kgreview/agents/schedules.py",
    "kgreview/questions/services.py",
    "kgreview/api/services.py",
)
# Functions of those modules that only ask about a user (what may this user do, what could
# they undo) and act for nobody: they keep the name ``user``.
ASK_ABOUT_A_USER = {
    "kgreview.review.decisions.can_decide_kind",
    "kgreview.review.undo.undoable_batches",
}
OTHER_NAMES = ("reviewer", "user")


def _functions(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _service_modules(root: Path) -> list[Path]:
    listed = {path for pattern in SERVICE_MODULES for path in root.glob(pattern)}
    acting = {
        path
        for path in (root / "kgreview").rglob("*.py")
        if "migrations" not in path.parts
        and any(
            arg.arg == "acting_user"
            for fn in _functions(path)
            for arg in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
        )
    }
    return sorted(listed | acting)


def actor_names(root: Path) -> list[str]:
    """Where a service names the person who acts otherwise than ``acting_user``, or takes
    ``acting_user`` positionally or untyped; and every ``**x.by`` unpacking."""
    found = []
    for path in _service_modules(root):
        module = ".".join(path.relative_to(root).with_suffix("").parts)
        for fn in _functions(path):
            a = fn.args
            for arg in a.posonlyargs + a.args + a.kwonlyargs:
                where = f"{module}.{fn.name}({arg.arg})"
                if arg.arg in OTHER_NAMES and f"{module}.{fn.name}" not in ASK_ABOUT_A_USER:
                    found.append(f"{where}: call it acting_user")
                if arg.arg == "acting_user" and arg not in a.kwonlyargs:
                    found.append(f"{where}: keyword-only")
                if arg.arg == "acting_user" and arg.annotation is None:
                    found.append(f"{where}: typed")
    for path in (root / "kgreview").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                found += [
                    f"{path.relative_to(root)}:{node.lineno}: **{ast.unparse(k.value)}"
                    for k in node.keywords
                    if k.arg is None and isinstance(k.value, ast.Attribute) and k.value.attr == "by"
                ]
    return found


def test_every_service_names_the_person_who_acts_acting_user():
    """One actor, one name (issue 26): every service and kind step takes the person who
    acts as a keyword-only, typed ``acting_user`` (``None``: the system), never
    ``reviewer`` or ``user`` or a dict unpacked from ``step.by``."""
    assert actor_names(ROOT) == []


def test_the_actor_check_sees_other_names_positions_and_unpacking(tmp_path):
    package = tmp_path / "kgreview" / "review"
    package.mkdir(parents=True)
    (package / "decisions.py").write_text(
        "def decide(*, reviewer): ...\n"
        "def can_decide_kind(user, kind): ...\n"
        "def settle(out, acting_user: object): ...\n"
    )
    (package / "elsewhere.py").write_text(
        "def change(*, acting_user, user): ...\nchange(**step.by)\n"
    )
    assert sorted(actor_names(tmp_path)) == [
        "kgreview.review.decisions.decide(reviewer): call it acting_user",
        "kgreview.review.decisions.settle(acting_user): keyword-only",
        "kgreview.review.elsewhere.change(acting_user): typed",
        "kgreview.review.elsewhere.change(user): call it acting_user",
        "kgreview/review/elsewhere.py:2: **step.by",
    ]
