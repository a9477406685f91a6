"""Concept types in the explorer: each node takes its type's colour and shows the type
under its name, the panel's legend says the types in words, the type filter keeps a type
and its subtypes (and the centre), and as of a past instant a node has the type it had
then. No accessibility violation with the legend open."""

from __future__ import annotations

from django.utils import timezone
from playwright.sync_api import expect

from kgreview.graph import services as graph
from tests.browser.axe import axe_violations, report
from tests.browser.explorer.support import MARKS, drawn

pytestmark = MARKS


def _typed_world(curriculum):
    """technique > retrieval (a subtype); representation. Vector search is a retrieval
    technique, Keyword search a retrieval one too, Embeddings a representation; RAG and
    Tokenization stay untyped."""
    graph.concept_type_create(key="technique", label="Technique", acting_user=None)
    graph.concept_type_create(
        key="retrieval", label="Retrieval", parent_key="technique", acting_user=None
    )
    graph.concept_type_create(key="representation", label="Representation", acting_user=None)
    c = curriculum
    for concept, key in (
        (c["vs"], "retrieval"),
        (c["kw"], "retrieval"),
        (c["emb"], "representation"),
    ):
        graph.concept_set_type(concept=concept, type_key=key, acting_user=None)


def _nodes(page) -> dict:
    return page.evaluate(
        """() => Object.fromEntries(window.kgExplorer.cy.nodes().map(n => [n.data('name'), {
            type: n.data('type'), colour: n.style('background-color'),
            label: n.style('label')}]))"""
    )


def test_nodes_are_coloured_and_labelled_by_type_with_a_legend(
    page, live_server, login, curriculum, shot
):
    _typed_world(curriculum)
    login("viewer")
    page.goto(f"{live_server.url}/explore/{curriculum['vs'].pk}/")
    drawn(page, curriculum["vs"].pk)
    nodes = _nodes(page)
    assert nodes["Vector search"]["colour"] == nodes["Keyword search"]["colour"]
    assert nodes["Vector search"]["colour"] != nodes["Embeddings"]["colour"]
    assert nodes["RAG"]["colour"] != nodes["Embeddings"]["colour"]
    assert "Retrieval" in nodes["Vector search"]["label"]  # never by colour alone
    assert nodes["RAG"]["label"] == "RAG"
    key = page.locator("#ex-type-key")
    expect(key.locator('li[data-type="retrieval"]')).to_contain_text("Keyword search")
    expect(key.locator('li[data-type=""]')).to_contain_text("untyped")
    shot("types-explorer-1366")
    found = axe_violations(page)
    assert not found, report(found, "the typed explorer")


def test_the_type_filter_keeps_a_type_and_its_subtypes_and_the_address(
    page, live_server, login, curriculum
):
    _typed_world(curriculum)
    login("viewer")
    page.goto(f"{live_server.url}/explore/{curriculum['emb'].pk}/")
    drawn(page, curriculum["emb"].pk)
    page.select_option("#ex-type", "technique")
    page.wait_for_function("() => window.kgExplorer.state().type === 'technique'")
    names = sorted(_nodes(page))
    # Embeddings stays as the centre; retrieval is a kind of technique.
    assert names == ["Embeddings", "Keyword search", "Vector search"], names
    assert "type=technique" in page.url
    expect(page.locator("#ex-status")).to_contain_text("only Technique and the types below it")
    page.reload()
    drawn(page, curriculum["emb"].pk)
    expect(page.locator("#ex-type")).to_have_value("technique")
    assert sorted(_nodes(page)) == ["Embeddings", "Keyword search", "Vector search"]


def test_as_of_a_past_instant_a_node_has_the_type_it_had_then(page, live_server, login, curriculum):
    _typed_world(curriculum)
    before = timezone.now()
    graph.concept_type_create(key="method", label="Method", acting_user=None)
    graph.concept_set_type(concept=curriculum["kw"], type_key="method", acting_user=None)
    login("viewer")
    page.goto(f"{live_server.url}/explore/{curriculum['vs'].pk}/")
    drawn(page, curriculum["vs"].pk)
    assert _nodes(page)["Keyword search"]["type"] == "method"
    page.goto(
        f"{live_server.url}/explore/{curriculum['vs'].pk}/?as_of={before.isoformat()}".replace(
            "+", "%2B"
        )
    )
    drawn(page, curriculum["vs"].pk)
    assert _nodes(page)["Keyword search"]["type"] == "retrieval"
