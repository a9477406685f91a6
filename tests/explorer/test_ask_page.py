"""The Ask page: a question (and an optional instant) answered on the page, each hop
linked to its edge with the quote, source and revision; the plan and critique folded
away; the htmx partial; refusals in words; viewers only."""

from __future__ import annotations

from datetime import timedelta
from html import unescape

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from kgreview.graph import services
from kgreview.graph.asking import ModelUnavailable
from tests import ask_world

pytestmark = pytest.mark.django_db

URL = "/explore/ask/"


@pytest.fixture
def world():
    return ask_world.build()


def _client(f, role: str | None = "viewer") -> Client:
    c = Client()
    c.force_login(f.user(role=role))
    return c


def test_the_page_offers_a_form_and_examples_before_a_question(f, world):
    """The form, and questions about this graph's own concepts to start from."""
    html = unescape(_client(f).get(URL).content.decode())
    assert reverse("explorer:ask") == URL
    assert 'id="ask-form"' in html and 'name="q"' in html and 'name="as_of"' in html
    assert "Try one of these" in html and "What should I learn before Attention?" in html
    assert 'aria-current="page">Ask</a>' in html


def test_a_connection_links_each_hop_to_its_edge_with_the_evidence(f, world):
    response = _client(f).get(URL, {"q": "How is RAG connected to embeddings?"})
    html = unescape(response.content.decode())
    assert response.status_code == 200
    edge = world.edge("Embeddings", "prerequisite", "Vector search")
    assert f'href="{reverse("review:edge", args=[edge.pk])}"' in html
    assert "<p>Embeddings are a prerequisite for vector search.</p>" in html
    source = reverse("source-detail", args=["transformers-and-friends"])
    assert f'href="{source}?rev=1"' in html
    assert "revision 1" in html
    assert '<details class="ask-how" id="ask-how">' in html
    assert "connection" in html and "Critique" in html


def test_a_set_answer_lists_the_concepts_linked_to_the_explorer(f, world):
    html = _client(f).get(URL, {"q": "What is part of the transformer?"}).content.decode()
    assert f'href="{reverse("explorer:concept", args=[world.id("Attention")])}"' in html
    assert f'href="{reverse("explorer:concept", args=[world.id("Positional encoding")])}"' in html


def test_as_of_answers_from_the_graph_then(f, world):
    ask_world.backdate(hours=2)
    then = timezone.localtime(timezone.now() - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S")
    services.edge_invalidate(
        edge=world.edge("RLHF", "applies_to", "Alignment"), reason="Wrong.", acting_user=None
    )
    c = _client(f)
    past = c.get(URL, {"q": "What is RLHF used for?", "as_of": then}).content.decode()
    now = c.get(URL, {"q": "What is RLHF used for?"}).content.decode()
    assert 'data-status="answered"' in past and "as of" in past
    assert 'data-status="no_path"' in now


def test_htmx_gets_only_the_results_region(f, world):
    c = _client(f)
    response = c.get(URL, {"q": "What is RLHF used for?"}, headers={"HX-Request": "true"})
    html = response.content.decode().strip()
    assert html.startswith('<div id="ask-results"')
    assert "<html" not in html and 'id="ask-form"' not in html
    bad = c.get(URL, {"q": " "}, headers={"HX-Request": "true"})
    assert bad.status_code == 400 and bad.content.decode().strip().startswith(
        '<div id="ask-results"'
    )


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"q": ""}, "Write a question first"),
        ({"q": "Why? " * 150}, "at most 500 characters"),
        ({"q": "What is RLHF used for?", "as_of": "last tuesday"}, "is not a date and time"),
    ],
)
def test_bad_input_is_said_in_words(f, world, params, words):
    response = _client(f).get(URL, params)
    assert response.status_code == 400
    assert words in unescape(response.content.decode())


def test_an_unknown_concept_is_answered_as_such(f, world):
    html = unescape(
        _client(f).get(URL, {"q": "What is quantum networking part of?"}).content.decode()
    )
    assert "I do not know the concept 'quantum networking'." in html


def test_a_hostile_question_is_escaped(f, world):
    html = (
        _client(f).get(URL, {"q": "What is <img src=x onerror=alert(1)> part of?"}).content.decode()
    )
    assert "<img src=x" not in html


def test_only_people_with_a_role_may_ask(f, world):
    assert Client().get(URL).status_code == 302
    assert _client(f, role=None).get(URL, {"q": "What is RLHF used for?"}).status_code == 403


@pytest.mark.parametrize("headers", [{}, {"HX-Request": "true"}], ids=["plain", "htmx"])
def test_an_unavailable_model_is_said_in_place_as_a_400(f, world, monkeypatch, headers):
    """The refusal (a 503 in the API) is said where the answer would be, as a 400 that
    htmx swaps in, with and without htmx."""

    def unavailable(*args, **kwargs):
        raise ModelUnavailable("The model endpoint did not answer; nothing was asked.")

    monkeypatch.setattr("kgreview.explorer.views.ask_graph", unavailable)
    response = _client(f).get(URL, {"q": "What is RLHF used for?"}, headers=headers)
    assert response.status_code == 400
    html = unescape(response.content.decode())
    assert "The model endpoint did not answer; nothing was asked." in html
    assert html.strip().startswith('<div id="ask-results"') == bool(headers)
