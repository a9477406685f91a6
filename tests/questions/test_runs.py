"""Runs of the competency questions: results per question, pass / fail by the rules,
one open run at a time, safe twice and on two workers, stale runs failed in words."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from kgreview.core.errors import NotFound, StateConflict
from kgreview.core.models import AuditEntry
from kgreview.questions.models import CompetencyRun, QuestionResult
from kgreview.questions.runs import (
    competency_run_create,
    competency_run_current,
    competency_run_execute,
    competency_run_not_queued,
    failing_results,
)

pytestmark = pytest.mark.django_db


def run_all(**kwargs) -> CompetencyRun:
    run = competency_run_create(**kwargs)
    return competency_run_execute(run_id=run.pk, claim="test")


def test_a_run_asks_every_active_question_and_judges_each(world, ask):
    """Set, path and yes/no questions pass or fail by their rules, with the answer kept."""
    before = ask("What should I learn before LoRA?", "concepts", ["Fine-tuning", "Tokenization"])
    path = ask("How is RAG connected to tokenization?", "path", ["RAG", "Tokenization"])
    yes = ask("Is attention a prerequisite for the transformer?", "yes_no", yes=True)
    wrong = ask("What is part of the transformer?", "concepts", ["Attention", "Quantization"])
    run = run_all()
    assert run.status == "finished" and run.total == 4
    assert (run.passed, run.failed) == (3, 1) and run.open_slot is None
    results = {r.question_id: r for r in run.results.all()}
    assert results[before.pk].passed and results[before.pk].answer["status"] == "answered"
    assert "Tokenization" in results[before.pk].answer["answer"]["concepts"]
    assert results[path.pk].passed and results[path.pk].answer["answer"]["paths"]
    assert results[yes.pk].passed and results[yes.pk].answer["yes"] is True
    failed = results[wrong.pk]
    assert not failed.passed and failed.missing == ["Quantization"]
    assert failed.words.startswith("Missing 1 of 2: Quantization.")
    assert failed.gaps == [
        {
            "ends": [world.id("Transformer"), world.id("Quantization")],
            "names": ["Transformer", "Quantization"],
        }
    ]
    assert failed.latency_ms > 0 and failed.graph_at <= timezone.now()
    assert failing_results(run) == [failed]


def test_a_retired_question_is_not_asked(world, ask, curator_user):
    """Only active questions are asked by a full run."""
    from kgreview.questions.services import question_retire

    kept = ask("What should I learn before LoRA?", "concepts", ["Fine-tuning"])
    gone = ask("What is RLHF used for?", "concepts", ["Alignment"])
    question_retire(question_id=gone.pk, acting_user=curator_user)
    run = run_all()
    assert list(run.results.values_list("question_id", flat=True)) == [kept.pk]


def test_one_question_can_be_run_alone(world, ask):
    """A run of one question writes one result, retired or not."""
    ask("What should I learn before LoRA?", "concepts", ["Fine-tuning"])
    only = ask("What is RLHF used for?", "concepts", ["Alignment"])
    run = run_all(question_id=only.pk)
    assert run.total == 1 and list(run.results.values_list("question_id", flat=True)) == [only.pk]
    with pytest.raises(NotFound, match="no competency question #999"):
        competency_run_create(question_id=999)


def test_a_question_the_graph_cannot_read_fails_in_words(world, ask):
    """An unknown concept in the question: not understood, no gap to search."""
    q = ask("What should I learn before quantum networking?", "concepts", ["Embeddings"])
    result = run_all().results.get(question=q)
    assert not result.passed and result.status == "not_understood" and result.gaps == []
    assert result.words.startswith("Not understood:")


def test_an_expected_name_that_no_longer_means_a_concept_is_missing(world, ask):
    """A concept retired after the question was written is missing, said so."""
    from kgreview.graph.services import concept_retire

    q = ask("What should I learn before LoRA?", "concepts", ["Quantization"])
    concept_retire(concept=world.concepts["Quantization"], acting_user=None)
    result = run_all().results.get(question=q)
    assert not result.passed and "No longer an active concept of the graph: Quantization" in (
        result.words
    )


def test_a_run_started_by_hand_is_audited_and_one_by_the_schedule_is_not(world, ask, curator_user):
    """Run now writes a curation-log row naming the curator; the schedule writes none."""
    ask("What should I learn before LoRA?", "concepts", ["Fine-tuning"])
    manual = run_all(trigger="manual", acting_user=curator_user)
    assert manual.requested_by == curator_user
    entry = AuditEntry.objects.get(action="competency_run.start")
    assert entry.subject_id == str(manual.pk) and entry.user == curator_user
    run_all(trigger="schedule")
    assert AuditEntry.objects.filter(action="competency_run.start").count() == 1


def test_never_two_runs_open_at_once(world, ask):
    """A second run while one is open is refused in words; after it ends, one may start."""
    ask("What should I learn before LoRA?", "concepts", ["Fine-tuning"])
    first = competency_run_create()
    with pytest.raises(StateConflict, match=f"Run #{first.pk} is still going"):
        competency_run_create()
    assert competency_run_current() == first
    competency_run_execute(run_id=first.pk, claim="a")
    assert competency_run_current() is None
    assert competency_run_create().pk != first.pk


def test_executing_a_run_twice_writes_each_result_once(world, ask):
    """The second execution of a finished run changes nothing."""
    ask("What should I learn before LoRA?", "concepts", ["Fine-tuning"])
    ask("What is RLHF used for?", "concepts", ["Alignment"])
    run = competency_run_create()
    competency_run_execute(run_id=run.pk, claim="a")
    again = competency_run_execute(run_id=run.pk, claim="b")
    assert again.status == "finished" and QuestionResult.objects.filter(run=run).count() == 2


def test_a_second_worker_leaves_a_run_another_live_worker_holds(world, ask):
    """A run claimed by a live worker is not asked by another."""
    ask("What should I learn before LoRA?", "concepts", ["Fine-tuning"])
    run = competency_run_create()
    CompetencyRun.objects.filter(pk=run.pk).update(status="running", claimed_by="task:a")
    other = competency_run_execute(run_id=run.pk, claim="task:b")
    assert other.status == "running" and other.claimed_by == "task:a"
    assert not QuestionResult.objects.filter(run=run).exists()


def test_a_run_whose_worker_died_is_taken_over_and_finishes_what_was_left(world, ask):
    """A stale running run is claimed again; answered questions are not asked twice."""
    q1 = ask("What should I learn before LoRA?", "concepts", ["Fine-tuning"])
    ask("What is RLHF used for?", "concepts", ["Alignment"])
    run = competency_run_create()
    competency_run_execute(run_id=run.pk, claim="task:a")
    # Pretend the first worker died after one question: reopen the run, keep one result.
    done = QuestionResult.objects.get(run=run, question=q1)
    reopened = CompetencyRun.objects.create(trigger="cli", total=2)
    QuestionResult.objects.create(
        run=reopened,
        question=q1,
        passed=done.passed,
        status=done.status,
        words=done.words,
        graph_at=done.graph_at,
    )
    stale = timezone.now() - timedelta(hours=2)
    CompetencyRun.objects.filter(pk=reopened.pk).update(
        status="running", claimed_by="task:dead", updated_at=stale
    )
    finished = competency_run_execute(run_id=reopened.pk, claim="task:b")
    assert finished.status == "finished" and finished.claimed_by == "task:b"
    assert QuestionResult.objects.filter(run=reopened).count() == 2
    assert (finished.passed, finished.failed) == (2, 0)


def test_a_stale_open_run_is_failed_in_words_when_the_next_is_asked_for(world, ask):
    """No progress for the lease: failed with the reason, its slot freed."""
    ask("What should I learn before LoRA?", "concepts", ["Fine-tuning"])
    stuck = competency_run_create()
    CompetencyRun.objects.filter(pk=stuck.pk).update(updated_at=timezone.now() - timedelta(hours=2))
    fresh = competency_run_create()
    stuck.refresh_from_db()
    assert stuck.status == "failed" and "its worker stopped" in stuck.error
    assert fresh.status == "queued"


def test_a_run_the_broker_refused_fails_in_words(world, ask):
    """Not queued: failed now, the slot freed; a run already going is left alone."""
    run = competency_run_create()
    failed = competency_run_not_queued(run_id=run.pk, reason="the broker is down.")
    assert failed.status == "failed" and "the broker is down" in failed.error
    assert competency_run_current() is None


def test_a_large_answer_is_stored_cut_but_judged_whole(world, ask, monkeypatch):
    """A result keeps at most KEEP_CONCEPTS names, and says how many there were."""
    from kgreview.questions import runs

    monkeypatch.setattr(runs, "KEEP_CONCEPTS", 2)
    q = ask("What should I learn before LoRA?", "concepts", ["Tokenization"])
    result = run_all().results.get(question=q)
    found = result.answer["answer"]
    assert result.passed and len(found["concepts"]) == 2 and found["concepts_total"] == 5
    assert len(result.extra) == 2
