"""The self-healing agent: planted problems are found, clean data yields nothing."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.utils import timezone

from kgreview.agents.heal import heal_run, orphan_concepts
from kgreview.agents.models import AgentRun
from kgreview.agents.runs import agent_run_create
from kgreview.graph import services as graph
from kgreview.graph.models import Edge, RelationType
from kgreview.review.models import Proposal

pytestmark = pytest.mark.django_db

V1 = (
    "Before learning vector search you should understand embeddings.\n"
    "Chunking is part of retrieval-augmented generation.\n"
)
V2 = "Before learning vector search you should understand embeddings.\nNothing else.\n"


def heal() -> AgentRun:
    run = agent_run_create(agent=AgentRun.Agent.HEAL, trigger=AgentRun.Trigger.CLI)
    return heal_run(run)


def raw_edge(f, src, dst, rel="prerequisite", confidence=0.9):
    """An edge written without the services' checks, as imported legacy data would be."""
    now = timezone.now()
    return Edge.objects.create(
        source=src,
        target=dst,
        relation=f.relation(rel),
        is_symmetric=False,
        confidence=confidence,
        reason="Imported.",
        valid_at=now,
        recorded_at=now,
    )


def test_clean_graph_yields_no_proposals(f):
    """Distinct concepts, an acyclic graph and evidence that is still there: nothing to do."""
    doc = f.lesson(text=V1)
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    f.edge(emb, vs, evidence=f.evidence(doc.current_revision, V1.splitlines()[0]))
    f.edge(f.concept("Tokenization"), emb)
    run = heal()
    assert run.status == "succeeded" and run.progress_done == run.progress_total == 4
    assert not Proposal.objects.exists()
    assert run.stats["cycles"] == 0 and run.stats["duplicate_pairs"] == 0


def test_planted_duplicates_become_merge_proposals_naming_the_survivor(f):
    """Plural variants and abbreviations are proposed; the better-connected one survives."""
    big = f.concept("Vector database")
    small = f.concept("Vector databases")
    for other in ("Embeddings", "ANN", "Metadata filtering"):
        f.edge(f.concept(other), big, "part_of")
    rag = f.concept("Retrieval-augmented generation")
    abbr = f.concept("RAG")
    f.edge(rag, f.concept("LLM"), "applies_to")
    run = heal()
    merges = {
        (p.payload["survivor_id"], p.payload["loser_id"]): p
        for p in Proposal.objects.filter(kind="merge_concepts")
    }
    assert (big.pk, small.pk) in merges and (rag.pk, abbr.pk) in merges
    plural = merges[(big.pk, small.pk)]
    assert plural.payload["score"] >= 90 and "kept" in plural.payload["why"]
    assert plural.flags == ["duplicate"] and plural.origin.agent_run == run
    assert "abbreviat" in merges[(rag.pk, abbr.pk)].reason


def test_names_differing_only_in_a_number_are_never_proposed(f):
    """GPT-3 and GPT-4 are different models, however alike the names."""
    f.concept("GPT-3")
    f.concept("GPT-4")
    f.concept("Llama 2 chat")
    f.concept("Llama 3 chat")
    heal()
    assert not Proposal.objects.filter(kind="merge_concepts").exists()


def test_a_planted_cycle_proposes_retiring_its_weakest_edge_with_the_whole_cycle(f):
    """A → B → C → A: the weakest edge is proposed for invalidation, the cycle in words."""
    a, b, c = f.concept("Alpha"), f.concept("Beta"), f.concept("Gamma")
    e1 = f.edge(a, b, confidence=0.9)
    e2 = f.edge(b, c, confidence=0.8)
    weak = raw_edge(f, c, a, confidence=0.4)
    heal()
    (p,) = Proposal.objects.filter(kind="invalidate_edge")
    assert p.payload["edge_id"] == weak.pk and p.payload["reason_code"] == "cycle"
    assert set(p.payload["cycle_edge_ids"]) == {e1.pk, e2.pk, weak.pk}
    assert "Alpha" in p.reason and "Gamma" in p.reason and "0.40" in p.reason
    assert "contradiction" in p.flags


def test_a_vanished_quote_proposes_invalidation_of_its_edge(f):
    """Revision 2 dropped the sentence an active edge quoted."""
    doc = f.lesson(slug="rag", text=V1)
    chunking, rag = f.concept("Chunking"), f.concept("Retrieval-augmented generation")
    gone = f.edge(
        chunking, rag, "part_of", evidence=f.evidence(doc.current_revision, V1.splitlines()[1])
    )
    kept = f.edge(
        f.concept("Embeddings"),
        f.concept("Vector search"),
        evidence=f.evidence(doc.current_revision, V1.splitlines()[0]),
    )
    graph.source_import(slug="rag", title="RAG", text=V2, acting_user=None)
    run = heal()
    (p,) = Proposal.objects.filter(kind="invalidate_edge")
    assert p.payload == {"edge_id": gone.pk, "reason_code": "evidence_gone", "cycle_edge_ids": []}
    assert "no longer appears in revision 2" in p.reason
    assert run.stats["evidence_gone"] == 1 and kept.pk != gone.pk


def _twins_recorded_before_the_pair() -> None:
    """Undeclare the starting vocabulary's inverse pair, so both statements of one fact
    can be recorded, as in a graph that held them before the pair was declared; heal's
    support counting then reads the pair as declared again (``_declare_pair``)."""
    RelationType.objects.filter(key__in=["prerequisite", "builds_on"]).update(inverse=None)


def _declare_pair() -> None:
    graph.relation_type_pair(
        relation=RelationType.objects.get(key="prerequisite"),
        inverse=RelationType.objects.get(key="builds_on"),
        acting_user=None,
    )


def test_a_fact_still_supported_by_an_equivalent_edge_is_kept(f):
    """Support counting: B builds on A still stands, so A-before-B is not proposed away."""
    _twins_recorded_before_the_pair()
    doc = f.lesson(slug="rag", text=V1)
    other = f.lesson(slug="other", text="Retrieval-augmented generation builds on chunking.\n")
    chunking, rag = f.concept("Chunking"), f.concept("Retrieval-augmented generation")
    f.edge(
        chunking, rag, "prerequisite", evidence=f.evidence(doc.current_revision, V1.splitlines()[1])
    )
    f.edge(
        rag,
        chunking,
        "builds_on",
        evidence=f.evidence(
            other.current_revision, "Retrieval-augmented generation builds on chunking."
        ),
    )
    _declare_pair()
    graph.source_import(slug="rag", title="RAG", text=V2, acting_user=None)
    run = heal()
    assert not Proposal.objects.filter(kind="invalidate_edge").exists()
    assert run.stats["evidence_gone"] == 1 and run.stats["still_supported"] == 1


def test_orphans_are_counted_for_curators(f):
    """Concepts without active edges are listed, not proposed."""
    f.edge(f.concept("A1"), f.concept("B1"))
    lonely = f.concept("Lonely")
    run = heal()
    assert run.stats["orphans"] == 1
    assert list(orphan_concepts()) == [lonely]


def test_running_twice_queues_nothing_new_and_rejected_merges_stay_rejected(f):
    """Idempotent: open proposals are not repeated; a rejected merge is not proposed again."""
    f.concept("Vector database")
    f.concept("Vector databases")
    heal()
    (p,) = Proposal.objects.filter(kind="merge_concepts")
    heal()
    assert Proposal.objects.filter(kind="merge_concepts").count() == 1
    from kgreview.review.decide.decisions import proposal_reject

    proposal_reject(
        proposal_id=p.pk,
        acting_user=f.user("c", role="curator"),
        reason_code="other",
        note="Different things here.",
    )
    heal()
    assert Proposal.objects.filter(kind="merge_concepts").count() == 1


def test_cancel_stops_between_steps(f):
    """A cancel request stops the run at the next step boundary, with what it found."""
    f.concept("Vector database")
    f.concept("Vector databases")
    run = agent_run_create(agent=AgentRun.Agent.HEAL)
    AgentRun.objects.filter(pk=run.pk).update(cancel_requested=True)
    run.refresh_from_db()
    run = heal_run(run)
    assert run.status == "cancelled" and run.finished_at is not None
    assert run.progress_done == 0


def test_heal_command_prints_the_run_and_its_proposals_as_json(f):
    """manage.py heal --json has the same shape as construct's."""
    f.concept("Vector database")
    f.concept("Vector databases")
    out = io.StringIO()
    call_command("heal", "--json", stdout=out)
    report = json.loads(out.getvalue())
    assert set(report) == {"run", "proposals", "dropped"}
    (p,) = report["proposals"]
    assert p["kind"] == "merge_concepts" and {p["source"], p["target"]} == {
        "Vector database",
        "Vector databases",
    }


def test_the_cycle_card_shows_every_edge_of_the_cycle_with_its_evidence(f, client):
    """The reviewer sees A → B → C → A edge by edge, quotes included, the weakest marked."""
    from django.urls import reverse

    doc = f.lesson(slug="cyc", text="Alpha comes first. Beta follows Alpha. Gamma needs Beta.\n")
    rev = doc.current_revision
    a, b, c = f.concept("Alpha"), f.concept("Beta"), f.concept("Gamma")
    f.edge(a, b, confidence=0.9, evidence=f.evidence(rev, "Beta follows Alpha."))
    f.edge(b, c, confidence=0.8, evidence=f.evidence(rev, "Gamma needs Beta."))
    weak = raw_edge(f, c, a, confidence=0.4)
    heal()
    (p,) = Proposal.objects.filter(kind="invalidate_edge")
    client.force_login(f.user("rita", role="reviewer"))
    html = client.get(reverse("review:proposal", args=[p.pk]), follow=True).content.decode()
    assert 'aria-label="The cycle"' in html and html.count("data-edge=") == 3
    assert "<mark>Beta follows Alpha.</mark>" in html and "<mark>Gamma needs Beta.</mark>" in html
    assert f'class="weakest" data-edge="{weak.pk}"' in html
    assert "No quoted evidence: Imported." in html


# --- Issue 15: skipped blocks said, evidence checked source by source, cycles in spans ----


def test_a_name_block_over_the_bound_is_skipped_and_named_in_the_stats_and_on_the_run_page(
    f, client, settings
):
    """KG_HEAL_MAX_BLOCK bounds a block; the one left out is listed with its size, in the
    run's stats and in words on the run's page, while a pair in a small block is found."""
    from django.urls import reverse

    settings.KG_HEAL_MAX_BLOCK = 3
    for tail in ("alpha", "beta", "gamma", "delta", "omega"):
        f.concept(f"Vector index {tail}")
    tokenizer, plural = f.concept("Tokenizer"), f.concept("Tokenizers")
    run = heal()
    assert run.stats["max_block"] == 3 and run.stats["oversized_blocks_skipped"] >= 1
    listed = {b["key"]: b for b in run.stats["skipped_blocks"]}
    assert listed["w:index vector"]["names"] == 5
    assert listed["w:index vector"]["words"] == 'names with the words "index vector"'
    (merge,) = Proposal.objects.filter(kind="merge_concepts")
    assert {merge.payload["survivor_id"], merge.payload["loser_id"]} == {tokenizer.pk, plural.pk}
    client.force_login(f.user("vera", role="viewer"))
    html = client.get(reverse("agents:run", args=[run.pk])).content.decode()
    said = html.split('id="skipped-blocks">')[1].split("</p>")[0]
    count = run.stats["oversized_blocks_skipped"]
    assert f"{count} name blocks over 3 names were not compared" in said
    assert "names with the words &quot;index vector&quot; (5 names)" in said
    assert "KG_HEAL_MAX_BLOCK" in said


def test_a_run_that_compared_every_block_says_nothing_of_skipped_blocks(f, client):
    """No warning when nothing was left out."""
    from django.urls import reverse

    f.concept("Tokenizer")
    f.concept("Tokenizers")
    run = heal()
    assert run.stats["oversized_blocks_skipped"] == 0 and run.stats["skipped_blocks"] == []
    client.force_login(f.user("vera", role="viewer"))
    html = client.get(reverse("agents:run", args=[run.pk])).content.decode()
    assert 'id="skipped-blocks"' not in html


def test_skipped_blocks_are_said_in_words_whatever_the_stats_hold():
    """The sentence copes with old runs' stats and odd values: never an error."""
    from kgreview.agents.heal import skipped_blocks_in_words

    assert skipped_blocks_in_words({}) == ""
    assert skipped_blocks_in_words({"oversized_blocks_skipped": 0}) == ""
    old = skipped_blocks_in_words({"oversized_blocks_skipped": 569})
    assert old.startswith("569 name blocks were not compared")
    one = skipped_blocks_in_words(
        {
            "oversized_blocks_skipped": 3,
            "max_block": 2000,
            "skipped_blocks": [{"key": "p:dist:8", "names": 4330, "words": "names x"}, "junk"],
        }
    )
    assert one.startswith("3 name blocks over 2,000 names were not compared")
    assert "names x (4,330 names), and 2 more." in one


def test_vanished_quotes_are_found_in_every_reimported_source_and_kept_where_still_there(f):
    """Twelve lessons (more than the finders kept at once) each lose one of two quoted
    lines on re-import: exactly the edges quoting the lost lines are proposed."""
    gone, kept = set(), set()
    for n in range(12):
        first, second = f"Lesson {n} keeps this line.", f"Lesson {n} loses this line."
        doc = f.lesson(slug=f"l{n}", text=f"{first}\n{second}\n")
        a, b, c = f.concept(f"Keep a{n}"), f.concept(f"Keep b{n}"), f.concept(f"Lose c{n}")
        kept.add(f.edge(a, b, evidence=f.evidence(doc.current_revision, first)).pk)
        gone.add(f.edge(b, c, evidence=f.evidence(doc.current_revision, second)).pk)
        graph.source_import(
            slug=f"l{n}", title=f"L{n}", text=f"{first}\nChanged.\n", acting_user=None
        )
    run = heal()
    proposed = set(
        Proposal.objects.filter(kind="invalidate_edge").values_list("payload__edge_id", flat=True)
    )
    assert proposed == gone and not proposed & kept
    assert run.stats["edges_on_old_revisions"] == 24 and run.stats["evidence_gone"] == 12
    (p,) = Proposal.objects.filter(payload__edge_id=min(gone))
    assert "no longer appears in revision 2" in p.reason and p.document.slug == "l0"


def test_a_cycle_through_a_concept_without_a_place_in_the_order_is_found(f):
    """Rows written past the services can reach a concept the order never placed."""
    a, b, x = f.concept("Alpha"), f.concept("Beta"), f.concept("Stray")
    f.edge(a, b, confidence=0.9)
    raw_edge(f, b, x, confidence=0.8)
    weak = raw_edge(f, x, a, confidence=0.4)
    run = heal()
    (p,) = Proposal.objects.filter(kind="invalidate_edge")
    assert p.payload["edge_id"] == weak.pk and len(p.payload["cycle_edge_ids"]) == 3
    assert run.stats["cycles"] == 1


def test_cycles_needing_two_backward_edges_are_found_through_overlapping_spans(f):
    """a→c, c⇢b, b→d, d⇢a (⇢ written past the services, against the order a<b<c<d):
    the spans of the two backward edges overlap, so both cycles are read whole."""
    a, b, c, d = (f.concept(n) for n in ("Aa one", "Bb two", "Cc three", "Dd four"))
    f.edge(a, b)
    f.edge(b, c)
    f.edge(c, d)
    f.edge(a, c)
    f.edge(b, d)
    back_cb = raw_edge(f, c, b, confidence=0.3)
    back_da = raw_edge(f, d, a, confidence=0.4)
    run = heal()
    retired = set(
        Proposal.objects.filter(kind="invalidate_edge").values_list("payload__edge_id", flat=True)
    )
    assert retired == {back_cb.pk, back_da.pk} and run.stats["cycles"] == 2


def test_the_cycle_step_reads_only_the_span_a_backward_edge_covers(f):
    """A chain of thirty concepts in order, one edge written back over three of them: the
    step reads the four edges of that cycle, not the whole relation."""
    chain = [f.concept(f"Step {n:02d}") for n in range(30)]
    for x, y in zip(chain, chain[1:], strict=False):
        f.edge(x, y)
    weak = raw_edge(f, chain[13], chain[10], confidence=0.2)
    run = heal()
    (p,) = Proposal.objects.filter(kind="invalidate_edge")
    assert p.payload["edge_id"] == weak.pk and len(p.payload["cycle_edge_ids"]) == 4
    assert run.stats["cycle_edges_read"] == 4


def test_a_relation_without_an_order_is_searched_whole(f):
    """A relation whose order is not kept (``ordered`` off) is read edge by edge."""
    from kgreview.graph.models import RelationType

    a, b, c = f.concept("Alpha"), f.concept("Beta"), f.concept("Gamma")
    f.edge(a, b)
    f.edge(b, c)
    weak = raw_edge(f, c, a, confidence=0.4)
    RelationType.objects.filter(key="prerequisite").update(ordered=False)
    run = heal()
    (p,) = Proposal.objects.filter(kind="invalidate_edge")
    assert p.payload["edge_id"] == weak.pk and run.stats["cycle_edges_read"] == 3


def test_only_the_equivalent_statement_keeps_a_fact_whose_quote_vanished(f):
    """B builds on A keeps "A before B"; D builds on A (ends of two other facts, crossed)
    keeps neither "A before B" nor "C before D"."""
    _twins_recorded_before_the_pair()
    text = "A comes first.\nC comes first.\n"
    doc = f.lesson(slug="facts", text=text)
    other = f.lesson(slug="other", text="B builds on A.\nD builds on A.\n")
    a, b, c, d = (f.concept(n) for n in ("Aaa", "Bbb", "Ccc", "Ddd"))
    rev = doc.current_revision
    kept = f.edge(a, b, evidence=f.evidence(rev, "A comes first."))
    gone = f.edge(c, d, evidence=f.evidence(rev, "C comes first."))
    f.edge(b, a, "builds_on", evidence=f.evidence(other.current_revision, "B builds on A."))
    f.edge(d, a, "builds_on", evidence=f.evidence(other.current_revision, "D builds on A."))
    _declare_pair()
    graph.source_import(slug="facts", title="Facts", text="Nothing now.\n", acting_user=None)
    run = heal()
    proposed = set(
        Proposal.objects.filter(kind="invalidate_edge").values_list("payload__edge_id", flat=True)
    )
    assert proposed == {gone.pk} and kept.pk not in proposed
    assert run.stats["evidence_gone"] == 2 and run.stats["still_supported"] == 1


def test_support_counting_reads_the_vocabularys_inverse_pairs(f):
    """Without a declared pair, "B builds on A" is another fact: it keeps nothing alive."""
    _twins_recorded_before_the_pair()
    doc = f.lesson(slug="rag", text=V1)
    other = f.lesson(slug="other", text="Retrieval-augmented generation builds on chunking.\n")
    chunking, rag = f.concept("Chunking"), f.concept("Retrieval-augmented generation")
    f.edge(
        chunking, rag, "prerequisite", evidence=f.evidence(doc.current_revision, V1.splitlines()[1])
    )
    f.edge(
        rag,
        chunking,
        "builds_on",
        evidence=f.evidence(
            other.current_revision, "Retrieval-augmented generation builds on chunking."
        ),
    )
    graph.source_import(slug="rag", title="RAG", text=V2, acting_user=None)
    run = heal()
    assert Proposal.objects.filter(kind="invalidate_edge").count() == 1
    assert run.stats["evidence_gone"] == 1 and run.stats.get("still_supported", 0) == 0
