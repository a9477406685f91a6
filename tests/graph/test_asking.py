"""The ask loop's reader over the database (``graph.asking.DbGraphReader``) and the
question name index: hops with their evidence, paths whose walks mix directions, study
orders, concepts' status at an instant, and the graph before and after an edge retired."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from construction.ask.types import Walk
from construction.text import name_key
from kgreview.graph import services
from kgreview.graph.asking import DbGraphReader
from kgreview.graph.models import Edge
from kgreview.graph.name_index import QUESTION_INDEX
from tests import ask_world

pytestmark = pytest.mark.django_db

PREREQUISITES = (Walk("prerequisite", "in"), Walk("builds_on", "out"))


@pytest.fixture
def world():
    return ask_world.build()


def test_expand_is_one_query_and_cites_each_edge(world):
    """One hop into Transformer's prerequisites: the edge, its quote, source and revision."""
    reader = DbGraphReader()
    with CaptureQueriesContext(connection) as ctx:
        edges, more = reader.expand(
            [world.id("Transformer")], walks=(Walk("prerequisite", "in"),), limit=50
        )
    assert len(ctx.captured_queries) == 1
    assert more is False
    (fact,) = edges
    assert fact.edge_id == world.edge("Attention", "prerequisite", "Transformer").pk
    assert (fact.source_id, fact.target_id) == (world.id("Attention"), world.id("Transformer"))
    assert fact.relation == "prerequisite"
    assert fact.quote == "Attention is a prerequisite for the transformer."
    assert fact.source_slug == "transformers-and-friends"
    assert fact.revision == 1


def test_expand_mixes_directions_and_orders_edges_by_id(world):
    """prerequisite in and builds_on out from Fine-tuning and Transformer together."""
    reader = DbGraphReader()
    frontier = [world.id("Fine-tuning"), world.id("Transformer")]
    edges, _more = reader.expand(frontier, walks=PREREQUISITES, limit=50)
    want = [
        world.edge("Attention", "prerequisite", "Transformer").pk,
        world.edge("Fine-tuning", "builds_on", "Transformer").pk,
    ]
    assert [e.edge_id for e in edges] == sorted(want)


def test_expand_walks_symmetric_relations_both_ways(world):
    """contrasts_with asked "out" from Prompting still finds Fine-tuning's edge."""
    reader = DbGraphReader()
    edges, _ = reader.expand(
        [world.id("Prompting")], walks=(Walk("contrasts_with", "out"),), limit=5
    )
    assert [e.edge_id for e in edges] == [
        world.edge("Fine-tuning", "contrasts_with", "Prompting").pk
    ]
    assert edges[0].symmetric is True


def test_expand_reports_more_than_the_limit(world):
    reader = DbGraphReader()
    edges, more = reader.expand([world.id("Transformer")], walks=(Walk("part_of", "in"),), limit=1)
    assert len(edges) == 1 and more is True


def test_expand_ignores_relations_the_graph_does_not_hold(world):
    reader = DbGraphReader()
    assert reader.expand([world.id("LoRA")], walks=(Walk("teaches", "out"),), limit=5) == (
        (),
        False,
    )


def test_path_follows_walks_that_mix_directions(world):
    """LoRA needs Tokenization: builds_on out twice, then prerequisite against the edge
    three times — a chain no single direction walks."""
    reader = DbGraphReader()
    path = reader.path(world.id("LoRA"), world.id("Tokenization"), walks=PREREQUISITES, max_depth=6)
    assert path is not None
    assert [(e.relation, e.source_id, e.target_id) for e in path] == [
        ("builds_on", world.id("LoRA"), world.id("Fine-tuning")),
        ("builds_on", world.id("Fine-tuning"), world.id("Transformer")),
        ("prerequisite", world.id("Attention"), world.id("Transformer")),
        ("prerequisite", world.id("Embeddings"), world.id("Attention")),
        ("prerequisite", world.id("Tokenization"), world.id("Embeddings")),
    ]
    assert all(e.quote and e.source_slug == "transformers-and-friends" for e in path)


def test_path_is_none_beyond_the_hop_bound_or_across_islands(world):
    reader = DbGraphReader()
    assert (
        reader.path(world.id("LoRA"), world.id("Tokenization"), walks=PREREQUISITES, max_depth=4)
        is None
    )
    every = tuple(Walk(r.key, "both") for r in reader.relations())
    assert reader.path(world.id("RLHF"), world.id("RAG"), walks=every, max_depth=6) is None


def test_connection_path_walks_every_relation_both_ways(world):
    """RAG to Embeddings: RAG builds on vector search, which needs embeddings."""
    reader = DbGraphReader()
    every = tuple(Walk(r.key, "both") for r in reader.relations())
    path = reader.path(world.id("RAG"), world.id("Embeddings"), walks=every, max_depth=3)
    assert [e.edge_id for e in path] == [
        world.edge("RAG", "builds_on", "Vector search").pk,
        world.edge("Embeddings", "prerequisite", "Vector search").pk,
    ]


def test_study_order_puts_foundations_first(world):
    reader = DbGraphReader()
    retrieval, truncated = reader.study_order(world.id("LoRA"), limit=100)
    assert truncated is False and retrieval.exhausted is True
    names = {c.concept_id: c.name for c in retrieval.concepts}
    assert [names[i] for i in retrieval.order] == [
        "Tokenization",
        "Embeddings",
        "Attention",
        "Transformer",
        "Fine-tuning",
    ]
    assert dict(retrieval.from_start)[world.id("Tokenization")] == 5
    assert {e.relation for e in retrieval.edges} == {"prerequisite", "builds_on"}
    assert all(e.quote for e in retrieval.edges)


def test_concepts_are_inactive_from_their_merge_or_retirement(world):
    before = timezone.now()
    services.concept_retire(concept=world.concepts["Quantization"], acting_user=None)
    now_reader, past_reader = DbGraphReader(), DbGraphReader(before)
    qid = world.id("Quantization")
    assert now_reader.concepts([qid, 10**9])[qid].active is False
    assert set(now_reader.concepts([qid, 10**9])) == {qid}
    assert past_reader.concepts([qid])[qid].active is True


def test_as_of_reads_the_graph_before_and_after_an_edge_retired(world):
    """Before the retirement the hop is there (with its evidence); after, it is not."""
    ab = world.edge("Attention", "prerequisite", "Transformer")
    ask_world.backdate(hours=2)
    then = timezone.now() - timedelta(hours=1)
    services.edge_invalidate(edge=Edge.objects.get(pk=ab.pk), reason="Wrong.", acting_user=None)
    walks = (Walk("prerequisite", "in"),)
    past, _ = DbGraphReader(then).expand([world.id("Transformer")], walks=walks, limit=5)
    now, _ = DbGraphReader().expand([world.id("Transformer")], walks=walks, limit=5)
    assert [e.edge_id for e in past] == [ab.pk] and past[0].quote
    assert now == ()
    assert DbGraphReader(then).path(
        world.id("Embeddings"),
        world.id("Transformer"),
        walks=(Walk("prerequisite", "out"),),
        max_depth=3,
    )
    assert (
        DbGraphReader().path(
            world.id("Embeddings"),
            world.id("Transformer"),
            walks=(Walk("prerequisite", "out"),),
            max_depth=3,
        )
        is None
    )


def test_relations_are_the_active_vocabulary_now_and_all_of_them_for_the_past(world):
    from kgreview.graph.models import RelationType

    services.relation_type_retire(
        relation=RelationType.objects.get(key="related"), acting_user=None
    )
    assert "related" not in {r.key for r in DbGraphReader().relations()}
    assert "related" in {r.key for r in DbGraphReader(timezone.now()).relations()}


def test_question_index_holds_accepted_names_and_aliases_only(world, f):
    f.concept_proposal("Speculative decoding")
    index = QUESTION_INDEX.get()
    assert index.exact(name_key("Retrieval-augmented generation")).concept_id == world.id("RAG")
    assert index.exact(name_key("Speculative decoding")) is None
    assert {"prerequisite", "part_of"} <= {r.key for r in DbGraphReader().relations()}


def test_question_index_follows_new_names_and_retirements(world, f):
    index = QUESTION_INDEX.get()
    assert index.exact(name_key("Quantization")) is not None
    services.concept_add_alias(
        concept=world.concepts["Quantization"], name="Int8", acting_user=None
    )
    index = QUESTION_INDEX.get()
    assert index.exact(name_key("Int8")).concept_id == world.id("Quantization")
    services.concept_retire(concept=world.concepts["Quantization"], acting_user=None)
    index = QUESTION_INDEX.get()
    assert index.exact(name_key("Quantization")) is None


def test_question_index_costs_one_query_when_nothing_changed(world):
    QUESTION_INDEX.get()
    with CaptureQueriesContext(connection) as ctx:
        QUESTION_INDEX.get()
    assert len(ctx.captured_queries) == 1


# --- The service ------------------------------------------------------------------------


def asked(question: str, **kwargs) -> dict:
    from kgreview.graph.asking import ask_graph

    return ask_graph(question, **kwargs).as_json()


def test_each_family_is_answered_from_the_database(world):
    assert asked("What should I learn before LoRA?")["answer"]["concepts"] == [
        "Tokenization",
        "Embeddings",
        "Attention",
        "Transformer",
        "Fine-tuning",
    ]
    assert set(
        asked("Which topics are affected if my understanding of tokenization is wrong?")["answer"][
            "concepts"
        ]
    ) == {"Embeddings", "Attention", "Vector search", "RAG", "Transformer", "Fine-tuning", "LoRA"}
    assert asked("What is part of the transformer?")["answer"]["concepts"] == [
        "Attention",
        "Positional encoding",
    ]
    assert asked("What is attention part of?")["answer"]["concepts"] == ["Transformer"]
    assert asked("What does prompting contrast with?")["answer"]["concepts"] == ["Fine-tuning"]
    assert asked("What is RLHF used for?")["answer"]["concepts"] == ["Alignment"]


def test_a_connection_cites_each_hop_with_its_evidence(world):
    answer = asked("How is retrieval-augmented generation connected to embeddings?")
    assert answer["status"] == "answered"
    (path,) = answer["answer"]["paths"][:1]
    assert [(h["from"], h["relation"], h["to"]) for h in path] == [
        ("RAG", "builds_on", "Vector search"),
        ("Vector search", "prerequisite", "Embeddings"),
    ]
    assert path[1]["edge"] == world.edge("Embeddings", "prerequisite", "Vector search").pk
    assert path[1]["quote"] == "Embeddings are a prerequisite for vector search."
    assert (path[1]["source_slug"], path[1]["revision"]) == ("transformers-and-friends", 1)


def test_yes_no_questions_answer_yes_with_a_chain_and_no_after_the_search(world):
    yes = asked("Is embeddings a prerequisite for the transformer?")
    assert yes["yes"] is True and len(yes["answer"]["paths"][0]) == 2
    no = asked("Is attention a prerequisite for positional encoding?")
    assert no["yes"] is False and no["answer"]["paths"] == []


def test_unknown_concepts_and_absent_paths_are_said_so(world):
    unknown = asked("What is quantum networking part of?")
    assert unknown["status"] == "not_understood"
    assert "quantum networking" in unknown["message"] and unknown["answer"]["concepts"] == []
    apart = asked("How is RLHF connected to RAG?")
    assert apart["status"] == "no_path" and apart["answer"]["paths"] == []


def test_as_of_answers_before_and_after_an_edge_was_retired(world):
    ask_world.backdate(hours=2)
    then = timezone.now() - timedelta(hours=1)
    gone = world.edge("Embeddings", "prerequisite", "Vector search")
    services.edge_invalidate(edge=gone, reason="Not in the lesson.", acting_user=None)
    before = asked("How is RAG connected to embeddings?", at=then)
    after = asked("How is RAG connected to embeddings?")
    assert before["status"] == "answered" and before["as_of"]
    assert gone.pk in [h["edge"] for h in before["answer"]["paths"][0]]
    assert after["status"] == "no_path"
    assert (
        "Vector search" in asked("What should I learn before RAG?", at=then)["answer"]["concepts"]
    )
    assert "Embeddings" not in asked("What should I learn before RAG?")["answer"]["concepts"]


def test_the_same_question_gives_the_same_json(world):
    import json

    first = json.dumps(asked("How is LoRA connected to tokenization?"), sort_keys=True)
    QUESTION_INDEX.clear()
    assert json.dumps(asked("How is LoRA connected to tokenization?"), sort_keys=True) == first


@pytest.mark.parametrize(
    ("question", "words"),
    [("", "empty"), ("   \t ", "empty"), ("Why " * 200, "at most 500 characters")],
)
def test_bad_questions_are_refused_in_words(question, words):
    from kgreview.core.errors import ValidationFailed

    with pytest.raises(ValidationFailed, match=words):
        asked(question)


def test_an_unknown_provider_is_refused_in_words():
    from kgreview.core.errors import ValidationFailed

    with pytest.raises(ValidationFailed, match="offline or openai"):
        asked("What is RLHF used for?", provider="oracle")


def test_a_long_prerequisite_chain_is_read_in_a_few_queries(f):
    """Fifteen concepts in a row: the walk reads the rest of the chain at its second hop,
    and the study order comes from what it read; the answer is the whole chain."""
    chain = [f.concept(f"Step {i:02d}") for i in range(15)]
    for a, b in zip(chain, chain[1:], strict=False):
        f.edge(a, b)
    QUESTION_INDEX.get()
    with CaptureQueriesContext(connection) as ctx:
        answer = asked("What should I learn before Step 14?")
    assert answer["answer"]["concepts"] == [f"Step {i:02d}" for i in range(14)]
    assert len(ctx.captured_queries) <= 10
