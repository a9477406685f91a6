"""The Ask page's suggestions come from the graph itself: its own well-connected concepts
and its own active relations' words; each suggestion, asked, is answered; an empty graph
gets none and says so; the page works with and without htmx."""

from __future__ import annotations

from html import unescape

import pytest
from django.test import Client

from kgreview.explorer.suggestions import ask_suggestions, question_shapes
from kgreview.graph.asking import ask_graph
from kgreview.graph.vocabulary_files import load_preset
from kgreview.review.vocabulary import vocabulary_install
from tests import ask_world, doc_world

pytestmark = pytest.mark.django_db

URL = "/explore/ask/"
CURRICULUM_WORDS = ("learn before", "prerequisite", "affected if", "used for", "builds on")


def _client(f) -> Client:
    c = Client()
    c.force_login(f.user(role="viewer"))
    return c


def _examples(html: str) -> str:
    start = html.index('id="ask-examples"')
    return html[start : html.index("</section>", start)]


def test_an_empty_graph_suggests_nothing_and_says_why(f):
    """No concept at all: nothing to ask yet, in words, and no question link."""
    found = ask_suggestions()
    assert found.questions == ()
    assert found.empty.startswith("There is nothing to ask yet: this graph holds no concepts.")
    html = unescape(_client(f).get(URL).content.decode())
    section = _examples(html)
    assert "Nothing to ask yet" in section and "this graph holds no concepts" in section
    assert "?q=" not in section


def test_concepts_without_accepted_edges_are_still_nothing_to_ask(f):
    """Concepts alone answer nothing: the words say edges must be accepted first."""
    f.concept("Autovacuum")
    found = ask_suggestions()
    assert found.questions == () and "no edge between concepts has been accepted" in found.empty


def test_a_documentation_graph_suggests_questions_in_its_own_words(f):
    """Its concepts and its relations' verbs; nothing of the curriculum."""
    doc_world.build()
    found = ask_suggestions()
    assert found.empty == "" and 4 <= len(found.questions) <= 8
    text = " ".join(found.questions)
    assert "What is a kind of Index?" in found.questions
    assert "What does Autovacuum use?" in text or "What uses Statistics collector?" in text
    assert any(q.startswith("How is ") for q in found.questions)
    assert any(q.startswith(("Is ", "Does ")) for q in found.questions)
    for words in CURRICULUM_WORDS:
        assert words not in text


def test_every_suggestion_is_answered_from_the_graph(f):
    """Asked as written, each one is answered (a set found, a path, a yes)."""
    doc_world.build()
    for question in ask_suggestions().questions:
        answer = ask_graph(question)
        assert answer.status == "answered", (question, answer.message)
        assert answer.yes is not False, question


def test_a_curriculum_graph_suggests_the_curriculums_idioms(f):
    """The curriculum's relations are asked the phrasebook's way, about its own concepts,
    and each is answered."""
    ask_world.build()
    found = ask_suggestions()
    assert "What is part of Transformer?" in found.questions
    assert "What is RLHF used for?" in found.questions
    assert any(q.startswith("What should I learn before ") for q in found.questions)
    assert len(found.questions) == 8
    for question in found.questions:
        assert ask_graph(question).status == "answered", question


def test_retired_relations_are_not_suggested(f):
    """Only active relations are asked about: after the documentation vocabulary replaces
    an unused curriculum, nothing suggests prerequisites."""
    vocabulary_install(vocabulary=load_preset("documentation"), acting_user=None)
    shapes = " ".join(question_shapes())
    assert "learn before" not in shapes and "What does X require?" in shapes


def test_a_question_the_planner_would_misread_is_left_out(f):
    """ "Server?" holds the most parts, but "What is part of Server??" reads as the
    concept "Server": that suggestion is dropped for the next concept's, which reads back."""
    concepts = doc_world.build()
    odd = f.concept("Server?")
    f.edge(f.concept("Checkpointer"), odd, "part_of")
    f.edge(f.concept("Background writer"), odd, "part_of")
    found = ask_suggestions()
    assert "What is part of Server??" not in found.questions
    assert "What is part of Server?" in found.questions
    assert ask_graph("What is part of Server?").concepts[0].concept_id == (
        concepts["WAL writer"].pk
    )


def test_suggestions_are_kept_while_the_graph_stands_and_rebuilt_when_it_changes(f):
    """A second look costs the three reads of the graph's version; retiring an edge (a
    service's curation log row) rebuilds them, and its question goes."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from kgreview.graph import services
    from kgreview.graph.models import Edge

    doc_world.build()
    first = ask_suggestions()
    assert "What is a kind of Index?" in first.questions
    with CaptureQueriesContext(connection) as reads:
        assert ask_suggestions() is first
    assert len(reads.captured_queries) == 3
    for edge in Edge.objects.filter(relation__key="is_a", target__name="Index"):
        services.edge_invalidate(edge=edge, reason="Not in this release.", acting_user=None)
    again = ask_suggestions()
    assert "What is a kind of Index?" not in again.questions


# --- the page, with and without htmx --------------------------------------------------------


def test_the_page_lists_the_documentation_graphs_suggestions_as_links(f):
    """Each suggestion is a link that asks it; the help names this graph's shapes; the
    empty box's placeholder is the first suggestion."""
    doc_world.build()
    found = ask_suggestions()
    html = unescape(_client(f).get(URL).content.decode())
    section = _examples(html)
    assert "Try one of these" in section and "this graph's own concepts" in section
    for question in found.questions:
        assert question in section
    assert f'placeholder="{found.questions[0]}"' in html
    help_text = html[html.index('id="ask-help"') :].split("</p>", 1)[0]
    assert "What does X require?" in help_text and "learn before" not in help_text


def test_a_suggestion_followed_answers_with_htmx_and_without(f):
    """The link's question, asked through htmx (the results region only) and as a page."""
    doc_world.build()
    question = ask_suggestions().questions[0]
    c = _client(f)
    partial = c.get(URL, {"q": question}, headers={"HX-Request": "true"}).content.decode()
    assert partial.strip().startswith('<div id="ask-results"')
    assert 'data-status="answered"' in partial and "ask-examples" not in partial
    page = c.get(URL, {"q": question}).content.decode()
    assert 'data-status="answered"' in page and 'id="ask-form"' in page


def test_htmx_without_a_question_gets_the_suggestions_region(f):
    """The results region alone, holding the suggestions (or the words for none)."""
    c = _client(f)
    empty = c.get(URL, headers={"HX-Request": "true"}).content.decode()
    assert empty.strip().startswith('<div id="ask-results"') and "Nothing to ask yet" in empty
    doc_world.build()
    full = unescape(c.get(URL, headers={"HX-Request": "true"}).content.decode())
    assert "Try one of these" in full and "<html" not in full


def test_an_empty_question_asks_for_words_not_a_curriculum_example(f):
    """The refusal no longer suggests a curriculum question."""
    doc_world.build()
    html = unescape(_client(f).get(URL, {"q": " "}).content.decode())
    assert "Write a question first." in html and "LoRA" not in html


def test_the_curriculum_page_offers_its_idioms(f):
    """A curriculum graph's page suggests "What should I learn before …?"."""
    ask_world.build()
    html = unescape(_client(f).get(URL).content.decode())
    assert "What should I learn before " in _examples(html)
