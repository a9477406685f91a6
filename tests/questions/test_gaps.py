"""Gap proposals: a failing question's missing link, searched in the sources and sent
through the construction loop; what survives is queued, linked to the question."""

from __future__ import annotations

import pytest

from kgreview.agents.models import AgentRun
from kgreview.questions import gaps
from kgreview.questions.models import QuestionResult
from kgreview.questions.runs import competency_run_create, competency_run_execute
from kgreview.review.decide.decisions import proposal_accept
from kgreview.review.models import Proposal

pytestmark = pytest.mark.django_db

QUESTION = "What should I learn before quantization?"


def run_once() -> list[QuestionResult]:
    run = competency_run_create()
    competency_run_execute(run_id=run.pk, claim="test")
    return list(run.results.order_by("pk"))


def search(result: QuestionResult) -> AgentRun:
    run = gaps.gap_run_for(result, trigger="manual")
    assert run is not None
    return gaps.gap_search(run=run)


def test_a_failing_question_yields_a_verified_gap_proposal_that_makes_it_pass(
    world, gap_lesson, ask, curator_user
):
    """The issue's test: fail, search, propose (evidence naming both ends), accept, pass."""
    question = ask(QUESTION, "concepts", ["Embeddings"])
    (first,) = run_once()
    assert not first.passed and first.missing == ["Embeddings"]

    searched = search(first)
    assert searched.status == "succeeded" and searched.agent == "gaps"
    assert searched.stats["proposals"] == 1 and searched.stats["sentences"] == 1
    (proposal,) = Proposal.objects.filter(competency_question=question)
    assert proposal.kind == "add_edge" and proposal.status == "pending"
    assert proposal.source_concept == world.concepts["Embeddings"]
    assert proposal.target_concept == world.concepts["Quantization"]
    assert proposal.relation_key == "prerequisite"
    revision = gap_lesson.current_revision
    assert proposal.evidence_revision == revision and proposal.document == gap_lesson
    quote = revision.text[proposal.evidence_start : proposal.evidence_end]
    assert quote == proposal.evidence_quote == "Embeddings are a prerequisite for quantization."
    assert proposal.origin.agent_run == searched

    proposal_accept(proposal_id=proposal.pk, acting_user=curator_user)
    (second,) = run_once()
    assert second.passed and second.words.startswith("All 1 expected concept found")


def test_twins_collapse_into_the_open_proposal_and_the_result_says_so(world, gap_lesson, ask, f):
    """The same link already waiting: no second proposal; the twin is linked, and said."""
    question = ask(QUESTION, "concepts", ["Embeddings"])
    waiting = f.edge_proposal(
        world.concepts["Embeddings"],
        world.concepts["Quantization"],
        doc=gap_lesson,
        quote="Embeddings are a prerequisite for quantization.",
    )
    (result,) = run_once()
    searched = search(result)
    assert searched.stats["proposals"] == 0 and searched.stats["twins"] == 1
    assert "already waiting in the queue" in searched.stats["words"]
    waiting.refresh_from_db()
    assert waiting.gap_link.question == question
    assert Proposal.objects.filter(kind="add_edge").count() == 1


def test_a_gap_no_source_mentions_proposes_nothing_and_says_so(world, ask):
    """No sentence names both ends: the search succeeds with nothing queued, in words."""
    ask("What is part of the transformer?", "concepts", ["Attention", "Quantization"])
    (result,) = run_once()
    searched = search(result)
    assert searched.status == "succeeded" and searched.stats["proposals"] == 0
    assert searched.stats["words"] == "No sentence of the current sources names both ends."
    assert not Proposal.objects.filter(competency_question__isnull=False).exists()


def test_a_link_between_other_concepts_in_the_same_sentence_is_left_out(world, ask, f):
    """Only edges joining the gap's two ends are queued from its sentences."""
    f.source(
        slug="mixed",
        text="Tokenization is a prerequisite for quantization, and so are embeddings.\n"
        "Embeddings are a prerequisite for quantization.\n",
    )
    question = ask(QUESTION, "concepts", ["Embeddings"])
    (result,) = run_once()
    search(result)
    linked = Proposal.objects.filter(competency_question=question)
    assert {(p.source_concept.name, p.target_concept.name) for p in linked} == {
        ("Embeddings", "Quantization")
    }


def test_a_result_is_searched_once_whoever_asks(world, gap_lesson, ask):
    """A second search of the same result, and the same gap unchanged since, is skipped."""
    ask(QUESTION, "concepts", ["Embeddings"])
    (result,) = run_once()
    search(result)
    assert gaps.gap_run_for(result, trigger="manual") is None
    (again,) = run_once()  # still failing: the proposal waits for a decision
    assert not again.passed
    assert gaps.gap_run_for(again, trigger="schedule") is None


def test_a_new_revision_lets_the_same_gap_be_searched_again(world, gap_lesson, ask, f):
    """Sources changed since the last search: search again."""
    ask(QUESTION, "concepts", ["Embeddings"])
    (result,) = run_once()
    search(result)
    f.source(slug="another", text="Embeddings must come before quantization.\n")
    (again,) = run_once()
    assert gaps.gap_run_for(again, trigger="schedule") is not None


def test_a_finished_search_is_returned_as_it_is(world, gap_lesson, ask):
    """Searching a finished run writes nothing more."""
    ask(QUESTION, "concepts", ["Embeddings"])
    (result,) = run_once()
    done = search(result)
    count = Proposal.objects.count()
    assert gaps.gap_search(run=done).status == "succeeded" and Proposal.objects.count() == count


def test_a_failing_extractor_fails_the_search_in_words(world, gap_lesson, ask):
    """An extractor error fails the search run with the error; nothing is queued."""

    class Broken:
        name, model, local = "broken", "b", True

        def extract(self, *args, **kwargs):
            raise RuntimeError("the extractor fell over")

    ask(QUESTION, "concepts", ["Embeddings"])
    (result,) = run_once()
    run = gaps.gap_run_for(result, trigger="manual")
    failed = gaps.gap_search(run=run, extractor=Broken())
    assert failed.status == "failed" and "the extractor fell over" in failed.error
    assert not Proposal.objects.filter(competency_question__isnull=False).exists()
