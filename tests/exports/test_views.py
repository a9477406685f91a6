"""The exports page and downloads over HTTP: sign-in, each format, instants, errors."""

from __future__ import annotations

import html as htmllib
import io
import json
import re
from datetime import timedelta

import networkx as nx
import pytest
from django.http import StreamingHttpResponse
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from kgreview.exports import vocabulary
from tests.exports.support import backdate, csv_rows, rdf_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def viewer(f) -> Client:
    client = Client()
    client.force_login(f.user(role="viewer"))
    return client


def body(response) -> bytes:
    return b"".join(response.streaming_content)


def text(response) -> str:
    return htmllib.unescape(response.content.decode())


@pytest.mark.parametrize("name", ["exports:home", "exports:download"])
def test_anonymous_users_are_sent_to_login(client, name):
    """The page and the download need a signed-in user."""
    response = client.get(reverse(name), {"format": "jsonld"})
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_a_user_without_a_role_is_refused_in_words(f):
    """Signed in but with no role: 403 with the reason, as on every other page."""
    client = Client()
    client.force_login(f.user())
    response = client.get(reverse("exports:download"), {"format": "jsonld"})
    assert response.status_code == 403
    assert "no role yet" in response.content.decode()


def test_page_shows_the_form_counts_and_the_context(viewer, graph):
    """Formats as radios, the as-of field, counts of now, the term table and context link."""
    response = viewer.get(reverse("exports:home"))
    page = text(response)
    assert response.status_code == 200
    for key in ("jsonld", "csv", "graphml"):
        assert f'type="radio" name="format" value="{key}"' in page
    assert 'type="datetime-local" name="as_of"' in page
    assert re.search(r'id="count-concepts">5<', page) and re.search(r'id="count-edges">4<', page)
    assert reverse("exports:context") in page and "css/exports.css" in page
    assert "skos:prefLabel" in page and "prov:wasDerivedFrom" in page
    assert "--multiline-fields=true" in page


def test_page_keeps_the_chosen_format_without_an_instant(viewer):
    """?format=csv alone comes back with CSV chosen and the counts of now."""
    page = text(viewer.get(reverse("exports:home"), {"format": "csv"}))
    assert re.search(r'value="csv"[^>]*checked', page)
    assert re.search(r'id="count-edges">0<', page)


def test_page_shows_counts_as_of_an_instant(viewer, f):
    """?as_of= shows what an export at that instant would hold."""
    a, b = f.concept("A"), f.concept("B")
    for c in (a, b):
        backdate(c, "created_at", days=10)
    f.concept("C")
    then = (timezone.now() - timedelta(days=5)).strftime("%Y-%m-%dT%H:%M")
    page = text(viewer.get(reverse("exports:home"), {"as_of": then, "format": "csv"}))
    assert re.search(r'id="count-concepts">2<', page)
    assert f'value="{then}"' in page


@pytest.mark.parametrize("fmt", ["jsonld", "csv", "graphml"])
def test_each_format_downloads_as_a_streamed_attachment(viewer, graph, fmt):
    """The download streams, names the format and instant, and parses with the graph's counts."""
    response = viewer.get(reverse("exports:download"), {"format": fmt})
    assert response.status_code == 200 and isinstance(response, StreamingHttpResponse)
    disposition = response["Content-Disposition"]
    extension = {"jsonld": "jsonld", "csv": "zip", "graphml": "graphml"}[fmt]
    assert re.fullmatch(
        rf'attachment; filename="kgreview-graph-\d{{8}}T\d{{6}}Z\.{extension}"', disposition
    )
    data = body(response)
    if fmt == "jsonld":
        assert response["Content-Type"].startswith("application/ld+json")
        doc = json.loads(data)
        assert sum(1 for i in doc["@graph"] if i["@type"] == "skos:Concept") == 5
        assert len(rdf_of(data.decode())) > 0
    elif fmt == "csv":
        assert response["Content-Type"] == "application/zip"
        assert len(csv_rows(data, "nodes.csv")) == 5 and len(csv_rows(data, "edges.csv")) == 4
    else:
        g = nx.read_graphml(io.BytesIO(data))
        assert (g.number_of_nodes(), g.number_of_edges()) == (5, 4)


def test_download_as_of_names_the_instant_and_exports_that_graph(viewer, f):
    """as_of from the datetime-local input (project time zone) picks the graph and the filename."""
    a, b = f.concept("A"), f.concept("B")
    for c in (a, b):
        backdate(c, "created_at", days=10)
    old = f.edge(a, b)
    backdate(old, "recorded_at", "valid_at", days=10)
    f.edge(b, f.concept("C"), "related")
    response = viewer.get(
        reverse("exports:download"), {"format": "csv", "as_of": "2020-01-01T12:00"}
    )
    assert 'filename="kgreview-graph-20200101T120000Z.zip"' in response["Content-Disposition"]
    assert csv_rows(body(response), "edges.csv") == []
    then = (timezone.now() - timedelta(days=5)).strftime("%Y-%m-%dT%H:%M:%S")
    response = viewer.get(reverse("exports:download"), {"format": "csv", "as_of": then})
    (row,) = csv_rows(body(response), "edges.csv")
    assert row["edgeId:long"] == str(old.pk)


@pytest.mark.parametrize("as_of", ["next tuesday", "2024-13-40T99:99"])
def test_a_bad_as_of_shows_the_page_again_with_the_error_in_words(viewer, as_of):
    """400, no attachment, the form again with what went wrong and what works."""
    response = viewer.get(reverse("exports:download"), {"format": "graphml", "as_of": as_of})
    assert response.status_code == 400
    assert "Content-Disposition" not in response
    page = text(response)
    assert 'id="id_as_of_error"' in page and f'"{as_of}" is not a date or time' in page
    assert "ISO 8601" in page
    assert re.search(r'value="graphml"[^>]*checked', page)  # the choice is kept
    assert 'aria-describedby="id_as_of_helptext id_as_of_error"' in page


def test_a_bad_as_of_on_the_page_is_a_400_too(viewer):
    """Asking for counts at an unreadable instant says so instead of guessing."""
    response = viewer.get(reverse("exports:home"), {"as_of": "soon"})
    assert response.status_code == 400
    assert '"soon" is not a date or time' in text(response)


def test_an_unknown_format_is_a_400_in_words(viewer):
    """A format outside the three is refused with the list of those that exist."""
    response = viewer.get(reverse("exports:download"), {"format": "rdfxml"})
    assert response.status_code == 400
    assert "Choose one of the formats" in text(response)


def test_hostile_names_render_inert_on_the_page_and_stay_text_in_the_download(viewer, f):
    """The page never echoes a bad instant as markup; exported names keep their characters."""
    evil = '<script>alert("x")</script>'
    f.concept(evil)
    response = viewer.get(reverse("exports:download"), {"format": "jsonld", "as_of": evil})
    assert response.status_code == 400
    assert "<script>alert" not in response.content.decode()
    data = body(viewer.get(reverse("exports:download"), {"format": "jsonld"}))
    assert any(i.get("prefLabel") == evil for i in json.loads(data)["@graph"])


def test_context_document_is_public_json_ld(client):
    """/exports/context.jsonld serves the bare context, no sign-in, as application/ld+json."""
    response = client.get(reverse("exports:context"))
    assert response.status_code == 200
    assert response["Content-Type"] == "application/ld+json"
    assert json.loads(response.content) == {"@context": vocabulary.context()}


@pytest.mark.parametrize(
    ("fmt", "suffix"),
    [("turtle", "ttl"), ("skos", "skos.ttl"), ("owl", "owl.ttl"), ("shacl", "shapes.ttl")],
)
def test_the_rdf_formats_are_listed_and_download_as_turtle(viewer, graph, fmt, suffix):
    """The Exports page offers each Turtle format; its download parses with rdflib and
    (but the shapes) holds the five concepts as skos:Concept."""
    from rdflib import Graph
    from rdflib.namespace import RDF, SKOS

    assert f'value="{fmt}"' in text(viewer.get(reverse("exports:home")))
    response = viewer.get(reverse("exports:download"), {"format": fmt})
    assert response["Content-Type"] == "text/turtle; charset=utf-8"
    assert response["Content-Disposition"].endswith(f'Z.{suffix}"')
    g = Graph().parse(data=body(response).decode(), format="turtle")
    concepts = set(g.subjects(RDF.type, SKOS.Concept))
    assert len(concepts) == (0 if fmt == "shacl" else 5)
