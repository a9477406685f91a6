"""A fuzz pass over every page and form (issue 13): NUL and other control characters,
huge and non-finite numbers, bidi and zero-width text in every query parameter and form
field a page reads (and some it does not), sent as a curator. No answer may be a 5xx.

URL patterns come from the resolver, so a new page is fuzzed without being listed here;
the field names from the templates and forms, so a new field is too. The API's operations
are fuzzed against their schema in ``tests/api/test_schema_fuzz.py``; here they get the
same hostile parameters as the pages. Run on PostgreSQL as well (NUL bytes only broke
there): ``DATABASE_URL=postgres://... pytest tests/test_fuzz_forms.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client, override_settings
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone
from django_celery_beat.models import PeriodicTask
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgreview.agents.models import WorkerHeartbeat
from kgreview.agents.runs import agent_run_create
from kgreview.api.services import api_token_create
from kgreview.questions.services import QuestionSpec, question_create

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[1]
HUGE = "99999999999999999999"
HOSTILE = [
    "\x00",
    "a\x00b",
    "\x1b[31m",
    "\x7f",
    HUGE,
    "-" + HUGE,
    "1e400",
    "-1",
    "0",
    "inf",
    "nan",
    "²",
    f"{HUGE}:{HUGE}",
    "1e400:1",
    "Evil\u202egnp.exe",
    "\u200bEmbeddings",
    "\u2066x\u2069",
    "<script>alert(1)</script>",
    "",
    "x" * 3000,
]
# The pages hostile values are sent to by the sweep; the rest get them from hypothesis.
SWEEP = ["\x00", HUGE, "1e400", "Evil\u202egnp.exe"]
SKIP_NAMESPACES = {"admin"}  # Django's own admin: not ours to fuzz
SKIP_NAMES = {"logout"}  # would end the session the other requests need


def _patterns(resolver=None, prefix: str = "", namespaces: tuple[str, ...] = ()):
    resolver = resolver or get_resolver()
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            names = namespaces + ((entry.namespace,) if entry.namespace else ())
            if SKIP_NAMESPACES & set(names):
                continue
            yield from _patterns(entry, prefix + str(entry.pattern), names)
        elif isinstance(entry, URLPattern) and entry.name not in SKIP_NAMES:
            yield prefix + str(entry.pattern)


def _known_fields() -> list[str]:
    """Every field name a template sends or a form or view reads."""
    names: set[str] = set()
    for path in (ROOT / "templates").rglob("*.html"):
        names |= set(re.findall(r'\bname="([A-Za-z_]\w*)"', path.read_text()))
    for path in (ROOT / "kgreview").rglob("*.py"):
        text = path.read_text()
        names |= set(
            re.findall(r"""(?:GET|POST|query|data|source)\.get(?:list)?\(\s*["'](\w+)["']""", text)
        )
        if path.name.endswith("forms.py"):
            names |= set(re.findall(r"^    (\w+) = \w+(?:\.\w+)?Field\(", text, re.M))
    return sorted(names - {"csrfmiddlewaretoken", "password"})


FIELDS = _known_fields()


@pytest.fixture
def site(f):
    """A small graph with one of everything a URL can name, and a curator's client."""
    curator = f.user("fuzz-curator", role="curator")
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    doc = f.lesson("fuzz-lesson")
    edge = f.edge(
        emb, vs, evidence=f.evidence(doc.current_revision, "you should understand embeddings")
    )
    proposal = f.edge_proposal(vs, f.concept("Rerankers"), "related", doc=doc)
    run = agent_run_create(agent="heal", acting_user=None)
    token = api_token_create(owner=curator, name="fuzz", acting_user=None)
    question = question_create(
        spec=QuestionSpec(
            text="What should I learn before vector search?",
            expect="concepts",
            names=("Embeddings",),
        ),
        acting_user=curator,
    )
    ids = {
        "questions": question.pk,
        "concepts": emb.pk,
        "explore": emb.pk,
        "review/p": proposal.pk,
        "review/edges": edge.pk,
        "agents/runs": run.pk,
        "agents/schedules": PeriodicTask.objects.values_list("pk", flat=True).first() or 1,
        "ontology": f.relation("related").pk,
        "api/tokens": token.token.pk,
        "review/mend/concepts": emb.pk,
        "concept_id": emb.pk,
        "edge_id": edge.pk,
    }
    client = Client(raise_request_exception=False)
    client.force_login(curator)
    # A deployment whose every part answers, so /healthz is 200 however long the sweep.
    WorkerHeartbeat.objects.create(hostname="fuzz", last_seen=timezone.now(), pid=1)
    with override_settings(KG_WORKER_STALE_SECONDS=86_400, KG_BEAT_STALE_SECONDS=86_400):
        yield client, ids, doc.slug


def _url(route: str, ids: dict, slug: str) -> str:
    """A real URL for a route: its ids and slugs filled with rows that exist."""
    path = "/" + route.lstrip("^").rstrip("$")
    for converter, name in re.findall(r"<(?:(\w+):)?(\w+)>", path):
        if name in ids:  # the API's {concept_id}, {edge_id}
            value = str(ids[name])
        elif converter == "int":
            key = max((k for k in ids if path.startswith("/" + k)), key=len, default="")
            value = str(ids.get(key, 1))
        elif name == "agent":
            value = "heal"
        else:
            value = slug
        path = re.sub(rf"<(?:\w+:)?{name}>", value, path, count=1)
    return path


def _assert_no_server_error(client: Client, method: str, url: str, data: dict) -> None:
    response = client.get(url, data) if method == "get" else client.post(url, data)
    assert response.status_code < 500, (method, url, data, response.content[:500])


def _routes() -> list[str]:
    routes = sorted(set(_patterns()))
    assert len(routes) > 30  # the resolver was read, not an empty list
    return routes


def test_every_page_and_form_survives_each_hostile_value_in_every_field(site):
    """The sweep: every route, GET and POST, every known field at once set to one
    hostile value (a NUL, a huge number, a non-finite one, a bidi override)."""
    client, ids, slug = site
    for route in _routes():
        url = _url(route, ids, slug)
        for value in SWEEP:
            data = dict.fromkeys(FIELDS, value)
            for method in ("get", "post"):
                _assert_no_server_error(client, method, url, data)


def test_generated_requests_to_every_page_never_cause_a_server_error(site):
    """Hypothesis picks a route, a method and one to four fields (known names and stray
    ones) with hostile values or arbitrary text; bounded and derandomized. Few fields at
    a time, so one field's refusal does not hide what another would do."""
    client, ids, slug = site
    routes = _routes()
    names = st.one_of(st.sampled_from(FIELDS), st.text(min_size=1, max_size=8))
    values = st.one_of(
        st.sampled_from(HOSTILE),
        st.text(st.characters(codec="utf-8"), max_size=30),
        st.integers(min_value=-(2**70), max_value=2**70).map(str),
        st.floats().map(repr),
    )

    @given(
        route=st.sampled_from(routes),
        method=st.sampled_from(["get", "post"]),
        data=st.dictionaries(names, values, min_size=1, max_size=4),
    )
    @settings(
        max_examples=150,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=True,
        database=None,
    )
    def run(route, method, data):
        _assert_no_server_error(client, method, _url(route, ids, slug), data)

    run()
