"""The construction package stays pure: no Django, no database."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from tests.architecture_scan import (
    actor_names,
    graph_writes,
    model_relations,
    reversed_url_names,
)

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


def test_no_app_imports_a_higher_layer():
    """Lower layers never import higher ones (at module level or inside a function), and
    peers never import each other. There are no exceptions."""
    assert upward_imports() == set()


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


def test_every_service_names_the_person_who_acts_acting_user():
    """One actor, one name (issue 26): every service and kind step takes the person who
    acts as a keyword-only, typed ``acting_user`` (``None``: the system), never
    ``reviewer`` or ``user`` or a dict unpacked from ``step.by``."""
    assert actor_names(ROOT) == []


def test_the_actor_check_sees_other_names_positions_and_unpacking(tmp_path):
    package = tmp_path / "kgreview" / "review"
    (package / "decide").mkdir(parents=True)
    (package / "decide" / "decisions.py").write_text(
        "def decide(*, reviewer): ...\n"
        "def can_decide_kind(user, kind): ...\n"
        "def settle(out, acting_user: object): ...\n"
    )
    (package / "elsewhere.py").write_text(
        "def change(*, acting_user, user): ...\nchange(**step.by)\n"
    )
    assert sorted(actor_names(tmp_path)) == [
        "kgreview.review.decide.decisions.decide(reviewer): call it acting_user",
        "kgreview.review.decide.decisions.settle(acting_user): keyword-only",
        "kgreview.review.elsewhere.change(acting_user): typed",
        "kgreview.review.elsewhere.change(user): call it acting_user",
        "kgreview/review/elsewhere.py:2: **step.by",
    ]


# --- Templates and URL names keep the layers too -------------------------------------------

# ``{% url 'name' %}``, ``{% page_url "role" %}``, ``{% load library %}``, ``{% include
# "app/..." %}`` and ``{% extends "app/..." %}`` in a template; ``reverse("name")``,
# ``redirect("name")`` and the like in a module.
_URL_TAG = re.compile(r"""\{%\s*url\s+(['"])([^'"]+)\1""")
_ROLE_TAG = re.compile(r"""\{%\s*page_url\s+(['"])([^'"]+)\1""")
_LOAD_TAG = re.compile(r"\{%\s*load\s+([^%]+?)\s*%\}")
_TEMPLATE_TAG = re.compile(r"""\{%\s*(?:include|extends)\s+(['"])([a-z_]+)/[^'"]*\1""")


def url_owners() -> dict[str, str]:
    """Every URL name (``namespace:name`` where it has one) with the app whose page it
    is: the app of the view's module, else the app whose ``urls`` module included it
    (the API's operations, made by django-ninja)."""
    from django.urls import URLPattern, URLResolver, get_resolver

    owners: dict[str, str] = {}

    def walk(patterns, prefix: str, owner: str | None) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                conf = pattern.urlconf_name
                conf = conf if isinstance(conf, str) else getattr(conf, "__name__", "")
                mine = _layer_of(conf)
                space = f"{prefix}{pattern.namespace}:" if pattern.namespace else prefix
                walk(pattern.url_patterns, space, mine or owner)
            elif isinstance(pattern, URLPattern) and pattern.name:
                module = getattr(pattern.callback, "__module__", "")
                app = _layer_of(module) or owner
                if app is not None:
                    owners[prefix + pattern.name] = app

    walk(get_resolver().url_patterns, "", None)
    return owners


def tag_libraries() -> dict[str, str]:
    """Every template tag library of the apps, with its app."""
    return {
        path.stem: path.parts[-3]
        for path in (ROOT / "kgreview").glob("*/templatetags/*.py")
        if path.stem != "__init__"
    }


def _is_above(theirs: str, mine: str) -> bool:
    peers = LAYERS[theirs] == LAYERS[mine] == 4 and theirs != mine
    return LAYERS[theirs] > LAYERS[mine] or peers


def app_templates() -> list[tuple[str, Path]]:
    """Every template of an app, with its app: ``templates/<app>/`` and
    ``kgreview/<app>/templates/``. The templates at the top of ``templates/`` (the site's
    frame and its error pages) belong to the site, above every app."""
    found = []
    for path in (ROOT / "templates").rglob("*.html"):
        parts = path.relative_to(ROOT / "templates").parts
        if len(parts) > 1 and parts[0] in LAYERS:
            found.append((parts[0], path))
    for path in (ROOT / "kgreview").glob("*/templates/**/*.html"):
        found.append((path.relative_to(ROOT / "kgreview").parts[0], path))
    return found


def upward_template_references(owners: dict[str, str]) -> set[tuple[str, str]]:
    """(template, what it names) for every URL, tag library or template of a higher app
    (or of a peer) that an app's template names."""
    libraries = tag_libraries()
    found = set()
    for mine, path in app_templates():
        text = path.read_text()
        named = [("url", m.group(2), owners.get(m.group(2))) for m in _URL_TAG.finditer(text)]
        named += [
            ("load", lib, libraries.get(lib))
            for m in _LOAD_TAG.finditer(text)
            for lib in m.group(1).split()
        ]
        named += [("template", m.group(2), m.group(2)) for m in _TEMPLATE_TAG.finditer(text)]
        for what, name, theirs in named:
            if theirs in LAYERS and _is_above(theirs, mine):
                found.add((str(path.relative_to(ROOT)), f"{what} {name}"))
    return found


def upward_reversed_urls(owners: dict[str, str]) -> set[tuple[str, str]]:
    """(module, URL name) for every page of a higher app (or a peer) a module reverses."""
    found = set()
    for path in (ROOT / "kgreview").rglob("*.py"):
        parts = path.relative_to(ROOT / "kgreview").parts
        if len(parts) < 2 or parts[0] not in LAYERS or "migrations" in parts:
            continue
        for name in reversed_url_names(path.read_text()):
            theirs = owners.get(name)
            if theirs is not None and _is_above(theirs, parts[0]):
                found.add((str(path.relative_to(ROOT)), name))
    return found


def test_no_template_of_an_app_links_to_a_higher_apps_page():
    """A lower app's template names no higher app's (or a peer's) page, tag library or
    template. It asks for a page by its role (``{% page_url "concept" pk %}``), and the
    app that owns the page provides the role (``kgreview.core.links``)."""
    owners = url_owners()
    assert owners["questions:detail"] == "questions" and owners["concept-detail"] == "web"
    assert owners["concept-unmerge"] == "review" and owners["api:relations"] == "api"
    assert upward_template_references(owners) == set()


def test_no_module_reverses_a_higher_apps_page():
    """``reverse("concept-detail")`` in review names web's page as surely as a template
    does: a lower app's module asks ``links.url("concept", pk)`` instead."""
    assert upward_reversed_urls(url_owners()) == set()


def test_every_page_role_asked_for_is_provided():
    """A role nobody provides would render an empty link: every role a template or a
    module asks for is provided by an installed app."""
    from kgreview.core import links

    asked = {
        m.group(2) for _, path in app_templates() for m in _ROLE_TAG.finditer(path.read_text())
    }
    for path in (ROOT / "kgreview").rglob("*.py"):
        asked |= set(re.findall(r"""links\.url\(\s*["']([^"']+)["']""", path.read_text()))
    assert {"concept", "source", "question", "api-relations"} <= asked
    assert asked - set(links.provided()) == set()


def test_the_template_scan_sees_upward_urls_libraries_and_templates(tmp_path, monkeypatch):
    """A planted review template that links to a question, loads the explorer's tags and
    includes a web template is caught, each of the three; a link down is not."""
    folder = tmp_path / "templates" / "review"
    folder.mkdir(parents=True)
    (folder / "planted.html").write_text(
        "{% load explorer_tags isolate %}\n"
        "<a href=\"{% url 'questions:detail' 1 %}\">q</a>\n"
        "<a href=\"{% url 'review:queue' %}\">queue</a>\n"
        '{% include "web/_outline.html" %}\n'
    )
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    monkeypatch.setattr(
        sys.modules[__name__],
        "tag_libraries",
        lambda: {"explorer_tags": "explorer", "isolate": "core"},
    )
    owners = {"questions:detail": "questions", "review:queue": "review"}
    assert upward_template_references(owners) == {
        ("templates/review/planted.html", "url questions:detail"),
        ("templates/review/planted.html", "load explorer_tags"),
        ("templates/review/planted.html", "template web"),
    }


def test_the_module_scan_sees_reverse_and_redirect():
    source = (
        "from django.shortcuts import redirect\n"
        "from django.urls import reverse\n"
        "def v(request, pk):\n"
        "    reverse('questions:detail', args=[pk])\n"
        '    return redirect("concept-detail", pk=pk)\n'
        "redirect('/plain/path/')\n"
    )
    assert reversed_url_names(source) == {"questions:detail", "concept-detail"}


# --- Who writes the graph ------------------------------------------------------------------

# The graph's writers: the modules that write its rows (concepts, aliases, relation types,
# sources and their revisions and files, edges, the topological order, the name journal).
# Every other module, in graph or above it, changes the graph by calling one of them.
# This is the list of the graph's services, not a list of exceptions: a module joins it
# only as a service of the graph, with its reason, and ARCHITECTURE.md names it.
GRAPH_WRITERS = {
    # The services proper: one transaction per call, locks in order, one audit row.
    "kgreview/graph/services/": "the graph services",
    # A bulk accept's batch: many rows in few statements, under the services' locks.
    "kgreview/graph/bulk.py": "the bulk accept's rows",
    "kgreview/graph/bulk_admit.py": "the bulk accept's admission to the order",
    # Importing a source: its original file, its revisions, and the concepts it grounds.
    "kgreview/graph/sources.py": "the source import service",
    # The topological order of acyclic relations, moved by ``rows.admit_fact`` under the
    # relation's lock and rebuilt whole by ``manage.py order_relations``.
    "kgreview/graph/order.py": "the order keeper",
}


def _graph_models() -> set[str]:
    from django.apps import apps

    return {m.__name__ for m in apps.get_app_config("graph").get_models()}


def graph_writes_outside_the_services() -> set[str]:
    """ "path:line: what" for every write of a graph row by a module that is not one of
    the graph's writers (migrations write their own rows and are left out)."""
    models = _graph_models()
    found = set()
    for path in (ROOT / "kgreview").rglob("*.py"):
        name = str(path.relative_to(ROOT))
        if "migrations" in path.parts or any(name.startswith(w) for w in GRAPH_WRITERS):
            continue
        for line, what in graph_writes(path.read_text(), models):
            found.add(f"{name}:{line}: {what}")
    return found


def test_only_the_graphs_services_write_the_graph():
    """Nothing outside the graph's writers creates, updates or deletes a graph row: an
    agent records what a source grounds through ``graph.sources.source_ground``, not by
    writing ``SourceConcept`` rows itself."""
    assert {"Concept", "Edge", "SourceConcept", "ConceptOrder"} <= _graph_models()
    assert graph_writes_outside_the_services() == set()


def test_every_graph_writer_exists_and_writes():
    """A writer that was moved or stopped writing comes off the list, so the list stays
    the set of modules that write."""
    models = _graph_models()
    for prefix in GRAPH_WRITERS:
        paths = sorted(ROOT.glob(prefix + "*.py" if prefix.endswith("/") else prefix))
        assert paths, prefix
        assert any(graph_writes(p.read_text(), models) for p in paths), prefix


def test_the_write_scan_sees_managers_querysets_instances_and_sql():
    """A planted module writing graph rows every way is caught, each way; reads and
    writes of other models are not."""
    source = (
        "from django.shortcuts import get_object_or_404\n"
        "def f(pk, proposal, concept: Concept):\n"
        "    Edge.objects.create(source_id=1)\n"  # 3
        "    Concept.objects.filter(pk=pk).update(name='x')\n"  # 4
        "    active = Edge.objects.filter(status='active')\n"
        "    active.filter(in_order=False).update(in_order=True)\n"  # 6
        "    source = get_object_or_404(Source, pk=pk)\n"
        "    source.save(update_fields=['title'])\n"  # 8
        "    concept.save()\n"  # 9
        "    for alias in ConceptAlias.objects.filter(concept=concept):\n"
        "        alias.delete()\n"  # 11
        "    cursor.execute('UPDATE graph_edge SET weight = 1')\n"  # 12
        "    Proposal.objects.filter(pk=pk).update(status='x')\n"
        "    proposal.save()\n"
        "    Edge.objects.filter(pk=pk).exists()\n"
    )
    models = {"Edge", "Concept", "Source", "ConceptAlias"}
    assert {line for line, _ in graph_writes(source, models)} == {3, 4, 6, 8, 9, 11, 12}


# --- The schema keeps the layers too -------------------------------------------------------

# A foreign key, one-to-one or many-to-many field names the model it points at as surely
# as an import does: a lower app's model never points at a higher app's (or a peer's).
# Where both must be linked, the link lives in the higher app (``questions.GapProposal``,
# ``agents.AgentRun.origin``, ``review.EdgeProvenance``). There are no exceptions.


def upward_relations(relations) -> set[str]:
    """ "app.Model.field -> app.Model" for every relation that points at a higher layer or
    a peer."""
    return {
        f"{field} -> {target}"
        for mine, field, theirs, target in relations
        if mine in LAYERS and theirs in LAYERS and _is_above(theirs, mine)
    }


def test_no_model_points_at_a_higher_app():
    """A model of a lower app holds no relation to a higher app's model (or a peer's); the
    scan reads the real models."""
    relations = model_relations()
    assert ("graph", "graph.Edge.source", "graph", "graph.Concept") in relations
    assert ("questions", "questions.GapProposal.proposal", "review", "review.Proposal") in (
        relations
    )
    assert ("review", "review.EdgeProvenance.edge", "graph", "graph.Edge") in relations
    assert upward_relations(relations) == set()


def test_the_relation_scan_catches_upward_and_peer_relations():
    """Planted relations: review up to agents and explorer up to web are caught, a peer
    (exports to insights) too; down or within an app, or to Django's own, are not."""
    planted = {
        ("review", "review.Proposal.agent_run", "agents", "agents.AgentRun"),
        ("exports", "exports.Job.chart", "insights", "insights.Chart"),
        ("explorer", "explorer.View.page", "web", "web.Page"),
        ("agents", "agents.AgentRun.origin", "review", "review.ProposalOrigin"),
        ("graph", "graph.Edge.source", "graph", "graph.Concept"),
        ("graph", "graph.Edge.decided_by", "auth", "auth.User"),
    }
    assert upward_relations(planted) == {
        "review.Proposal.agent_run -> agents.AgentRun",
        "exports.Job.chart -> insights.Chart",
        "explorer.View.page -> web.Page",
    }
