"""What ``tests/test_architecture.py`` reads in the source: which modules write the
graph's rows. Kept apart so the test module stays a list of rules."""

from __future__ import annotations

import ast
import re
from pathlib import Path

# The calls that write rows: on a manager or a queryset of a graph model, or, for
# ``save`` and ``delete``, on an instance of one.
QUERY_WRITES = {
    "create",
    "bulk_create",
    "bulk_update",
    "update",
    "delete",
    "get_or_create",
    "update_or_create",
}
INSTANCE_WRITES = {"save", "delete"}
_RAW_SQL = re.compile(r"""(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+["`]?graph_""", re.I)
_CONTAINERS = re.compile(r"QuerySet|Iterable|Sequence|list|dict|set|tuple|Mapping|\[")


def _root(node: ast.AST) -> tuple[str | None, list[str]]:
    """The name an attribute chain starts from, and the attributes on the way, outermost
    first: ``Edge.objects.filter(...).update`` is ("Edge", ["objects", "filter"])."""
    chain: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            chain.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Subscript):
            node = node.value
        else:
            break
    return (node.id if isinstance(node, ast.Name) else None), chain[::-1]


def _names_a_model(annotation: ast.AST | None, models: set[str]) -> bool:
    if annotation is None:
        return False
    text = ast.unparse(annotation)
    if _CONTAINERS.search(text):
        return False
    return any(re.search(rf"\b{m}\b", text) for m in models)


def _bound_to_models(scope: ast.AST, models: set[str]) -> set[str]:
    """Names in ``scope`` that hold a graph model's instance or queryset: assigned from
    an expression that starts at a model (``Edge.objects.filter(...)``,
    ``get_object_or_404(Edge, ...)``), a loop over one, or annotated with a model."""
    bound: set[str] = set()
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
        arguments = scope.args.posonlyargs + scope.args.args + scope.args.kwonlyargs
        bound |= {a.arg for a in arguments if _names_a_model(a.annotation, models)}
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign):
            value = node.value
            start, _ = _root(value)
            fetched = (
                isinstance(value, ast.Call)
                and getattr(value.func, "id", "") == "get_object_or_404"
                and bool(value.args)
                and getattr(value.args[0], "id", "") in models
            )
            if start in models or fetched:
                bound |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if _names_a_model(node.annotation, models):
                bound.add(node.target.id)
        elif isinstance(node, ast.For | ast.comprehension):
            start, _ = _root(node.iter)
            if start in models and isinstance(node.target, ast.Name):
                bound.add(node.target.id)
    return bound


def _write_of(call: ast.Call, models: set[str], bound: set[str]) -> str | None:
    if not isinstance(call.func, ast.Attribute):
        return None
    verb = call.func.attr
    start, chain = _root(call.func.value)
    through_manager = any(c.endswith("objects") or "manager" in c for c in chain)
    if verb in QUERY_WRITES and (
        (start in models and through_manager) or (start in bound and chain)
    ):
        return ".".join([str(start), *chain, verb])
    if verb in INSTANCE_WRITES and start in bound and not chain:
        return f"{start}.{verb}"
    return None


def graph_writes(source: str, models: set[str]) -> set[tuple[int, str]]:
    """(line, what) for every write of a graph model's rows in ``source``: through its
    manager or a queryset (``Edge.objects.create``, ``Concept.objects.filter(...).update``,
    ``qs = Edge.objects.filter(...)`` then ``qs.update``), ``instance.save()`` or
    ``instance.delete()`` on an instance the module got from a model, or raw SQL that
    inserts into, updates or deletes from a ``graph_`` table."""
    tree = ast.parse(source)
    scopes = [
        tree,
        *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)),
    ]
    found = set()
    for scope in scopes:
        bound = _bound_to_models(scope, models)
        for node in ast.walk(scope):
            if isinstance(node, ast.Call):
                what = _write_of(node, models, bound)
                if what:
                    found.add((node.lineno, what))
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and _RAW_SQL.search(node.value)
            ):
                found.add((node.lineno, "SQL " + " ".join(node.value.split())[:40]))
    return found


# --- URL names a module reverses -----------------------------------------------------------

_REVERSERS = {"reverse", "reverse_lazy", "redirect", "resolve_url"}


def reversed_url_names(source: str) -> set[str]:
    """The URL names ``source`` reverses with a string literal: ``reverse("a:b")``,
    ``redirect("home")``, ``reverse_lazy(...)``, ``resolve_url(...)``."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        first = node.args[0]
        literal = first.value if isinstance(first, ast.Constant) else None
        if name in _REVERSERS and isinstance(literal, str) and "/" not in literal:
            found.add(literal)
    return found


# --- Relations the models declare -----------------------------------------------------------


def model_relations() -> set[tuple[str, str, str, str]]:
    """(app, "app.Model.field", related app, "app.Model") for every relation a model of
    the apps declares: foreign keys, one-to-ones and many-to-manys, the auto-created
    tables of many-to-manys too; reverse relations are the other model's declaration."""
    from django.apps import apps

    found = set()
    for model in apps.get_models(include_auto_created=True):
        for field in model._meta.get_fields():
            forward = field.is_relation and not field.auto_created
            if not forward or field.related_model is None:
                continue
            theirs = field.related_model._meta
            found.add(
                (
                    model._meta.app_label,
                    f"{model._meta.label}.{field.name}",
                    theirs.app_label,
                    theirs.label,
                )
            )
    return found


# --- One name for the person who acts ------------------------------------------------------

# The modules that change state. Any other module that defines a function taking
# ``acting_user`` is one too (``_service_modules``).
SERVICE_MODULES = (
    "kgreview/core/audit.py",
    "kgreview/graph/services/*.py",
    "kgreview/graph/bulk*.py",
    "kgreview/graph/sources.py",
    "kgreview/review/decide/decisions.py",
    "kgreview/review/decide/bulk*.py",
    "kgreview/review/decide/undo*.py",
    "kgreview/review/decide/mend.py",
    "kgreview/review/decide/settle.py",
    "kgreview/review/services.py",
    "kgreview/review/decide/reconcile.py",
    "kgreview/review/kinds/*.py",
    "kgreview/agents/runs.py",
    "kgreview/agents/schedules.py",
    "kgreview/questions/services.py",
    "kgreview/api/services.py",
)
# Functions of those modules that only ask about a user (what may this user do, what could
# they undo) and act for nobody: they keep the name ``user``.
ASK_ABOUT_A_USER = {
    "kgreview.review.decide.decisions.can_decide_kind",
    "kgreview.review.decide.undo.undoable_batches",
    "kgreview.review.decide.undo._decision_batches",
    "kgreview.review.team.votes.newest_open_vote",
    "kgreview.review.team.assignments.open_for",
    "kgreview.review.team.assignments.with_work",
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
