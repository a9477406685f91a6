"""Runs of the competency questions: start one, ask every question, finish it.

Never two runs at once: an open run (queued or running) holds the table's one open slot
(a unique column), so a second "Run now", a schedule firing meanwhile, or a second
worker is refused in words or skips its turn. A run that has reported nothing for
``KG_ITEM_LEASE_SECONDS`` (its worker died) is failed in words when the next one is
asked for, and its slot freed.

Executing a run is safe twice and on two workers: the worker that claims it asks the
questions; a result is written once per question per run (a unique pair), so a run taken
over from a dead worker continues with the questions it had not answered yet.

Who acts: ``acting_user`` is the curator who pressed Run now (audited in the run's own
transaction); ``None`` is the schedule or the command line, whose runs are their own
record.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from construction.ask.types import Answer
from kgreview.core import audit
from kgreview.core.errors import DomainError, NotFound, StateConflict

from .judge import Judgement, expected_for, judge
from .models import CompetencyQuestion, CompetencyRun, QuestionResult
from .services import unknown_names

if TYPE_CHECKING:
    from django.contrib.auth.models import User

log = logging.getLogger(__name__)


def run_lease() -> timedelta:
    return timedelta(seconds=int(getattr(settings, "KG_ITEM_LEASE_SECONDS", 900)))


def ask_provider() -> str:
    return str(settings.KG_ASK_PROVIDER)


def _close_stale(now) -> None:
    """Fail, in words, an open run whose worker stopped reporting; frees the slot."""
    for run in CompetencyRun.objects.select_for_update().filter(
        status__in=CompetencyRun.OPEN, updated_at__lt=now - run_lease()
    ):
        _finish(
            run,
            status=CompetencyRun.Status.FAILED,
            error=(
                f"No progress for {int(run_lease().total_seconds())} s: its worker stopped "
                "or its task was lost. The next run starts afresh."
            ),
        )


def competency_run_current() -> CompetencyRun | None:
    """The open run, if one is going (a stale one is failed first)."""
    with transaction.atomic():
        _close_stale(timezone.now())
        return CompetencyRun.objects.filter(status__in=CompetencyRun.OPEN).first()


@transaction.atomic
def competency_run_create(
    *,
    trigger: str = CompetencyRun.Trigger.CLI,
    acting_user: User | None = None,
    question_id: int | None = None,
) -> CompetencyRun:
    """A queued run of every active question, or of one question (active or not).

    Raises ``StateConflict`` while another run is open, ``NotFound`` for an unknown
    question; nothing is written then. ``acting_user``: see the module.
    """
    _close_stale(timezone.now())
    question = None
    if question_id is not None:
        question = CompetencyQuestion.objects.filter(pk=question_id).first()
        if question is None:
            raise NotFound(f"There is no competency question #{question_id}.")
    total = 1 if question is not None else CompetencyQuestion.objects.filter(active=True).count()
    try:
        with transaction.atomic():
            run = CompetencyRun.objects.create(
                trigger=trigger,
                question=question,
                provider=ask_provider(),
                requested_by=acting_user
                if getattr(acting_user, "is_authenticated", False)
                else None,
                total=total,
            )
    except IntegrityError:
        current = CompetencyRun.objects.filter(status__in=CompetencyRun.OPEN).first()
        words = f"Run #{current.pk} is still going" if current else "A run is still going"
        raise StateConflict(f"{words}: its results will show here when it ends.") from None
    if acting_user is not None:
        scope = f"question #{question.pk}" if question is not None else f"{total} questions"
        audit.record(
            acting_user=acting_user,
            action="competency_run.start",
            subject=run,
            summary=f"Started competency run #{run.pk} ({scope}) by hand.",
            after={"trigger": trigger, "question": question_id, "total": total},
        )
    return run


def _claim(run_id: int, claim: str) -> CompetencyRun | None:
    """Take the run for this worker: a queued one, or a running one whose worker stopped
    reporting. None when it is finished or another live worker has it."""
    with transaction.atomic():
        run = CompetencyRun.objects.select_for_update().filter(pk=run_id).first()
        if run is None:
            raise NotFound(f"There is no competency run #{run_id}.")
        if run.is_finished:
            return None
        now = timezone.now()
        alive = run.updated_at >= now - run_lease()
        if run.status == CompetencyRun.Status.RUNNING and run.claimed_by != claim and alive:
            return None
        run.status = CompetencyRun.Status.RUNNING
        run.claimed_by = claim[:255]
        run.started_at = run.started_at or now
        run.save(update_fields=["status", "claimed_by", "started_at", "updated_at"])
        return run


def _questions(run: CompetencyRun) -> list[CompetencyQuestion]:
    if run.question_id is not None:
        return list(CompetencyQuestion.objects.filter(pk=run.question_id))
    return list(CompetencyQuestion.objects.filter(active=True).order_by("pk"))


def _resolved(questions: Sequence[CompetencyQuestion]) -> dict[str, int]:
    """Every expected name -> the active concept it means now (one batch of reads)."""
    names = list(dict.fromkeys(n for q in questions for n in q.expected_names))
    known, _ = unknown_names(names)
    return {name: concept.pk for name, concept in known.items()}


def _ask(text: str) -> tuple[Answer | None, str, float]:
    """The graph's answer (None and the refusal in words if it could not be asked)."""
    from kgreview.graph.asking import ask_graph

    started = time.perf_counter()
    try:
        answer = ask_graph(text, provider=ask_provider())
    except DomainError as exc:
        return None, str(exc), (time.perf_counter() - started) * 1000
    return answer, "", (time.perf_counter() - started) * 1000


# What a result keeps of an answer: enough to show and compare, never megabytes (a
# prerequisite closure in a large graph holds thousands of concepts). The pass rule is
# judged on the whole answer before it is trimmed.
KEEP_CONCEPTS = 200
KEEP_PATHS = 3


def stored_answer(answer: Answer) -> dict:
    """``Answer.as_json()`` of the answer with its concepts and paths cut to what a page
    shows (cut before serialising: a large closure cites thousands of hops); a cut says
    how many there were (``concepts_total``, ``paths_total``)."""
    concepts, paths = len(answer.concepts), len(answer.paths)
    if concepts <= KEEP_CONCEPTS and paths <= KEEP_PATHS:
        return answer.as_json()
    cut = replace(answer, concepts=answer.concepts[:KEEP_CONCEPTS], paths=answer.paths[:KEEP_PATHS])
    data = cut.as_json()
    data["answer"] = {**data["answer"], "concepts_total": concepts, "paths_total": paths}
    return data


def _result_for(run: CompetencyRun, question: CompetencyQuestion, resolved) -> QuestionResult:
    """Ask one question and judge the answer (unsaved: the caller writes it)."""
    graph_at = timezone.now()
    answer, refusal, latency = _ask(question.text)
    status: str = QuestionResult.Status.ERROR
    answer_json: dict = {}
    if answer is None:
        verdict = Judgement(passed=False, words=f"Could not be asked: {refusal}")
    else:
        verdict = judge(expected_for(question, resolved), answer)
        status, answer_json = answer.status, stored_answer(answer)
    return QuestionResult(
        run=run,
        question=question,
        passed=verdict.passed,
        status=status,
        answer=answer_json,
        missing=list(verdict.missing)[:KEEP_CONCEPTS],
        extra=list(verdict.extra)[:KEEP_CONCEPTS],
        gaps=[g.as_json() for g in verdict.gaps],
        words=verdict.words,
        latency_ms=round(latency, 3),
        graph_at=graph_at,
    )


def _keep(result: QuestionResult, claim: str) -> bool:
    """Write one result while this worker still holds the run; False if it lost it."""
    with transaction.atomic():
        run = CompetencyRun.objects.select_for_update().get(pk=result.run_id)
        if run.is_finished or run.claimed_by != claim:
            return False
        try:
            with transaction.atomic():
                result.save(force_insert=True)
        except IntegrityError:
            return True  # a worker before this one answered it already
        if result.passed:
            run.passed += 1
        else:
            run.failed += 1
        run.save(update_fields=["passed", "failed", "updated_at"])
        return True


def competency_run_execute(*, run_id: int, claim: str) -> CompetencyRun:
    """Ask every question of the run and write a result for each, then finish it.

    The system's work (the run is the record): not audited. A run finished, or held by
    another live worker, is returned as it is.
    """
    run = _claim(run_id, claim)
    if run is None:
        return CompetencyRun.objects.get(pk=run_id)
    questions = _questions(run)
    done = set(QuestionResult.objects.filter(run=run).values_list("question_id", flat=True))
    resolved = _resolved(questions)
    for question in questions:
        if question.pk in done:
            continue
        try:
            result = _result_for(run, question, resolved)
        except Exception as exc:  # a bug asking one question fails that question only
            log.exception("competency run %s: question %s failed", run.pk, question.pk)
            result = QuestionResult(
                run=run,
                question=question,
                passed=False,
                status=QuestionResult.Status.ERROR,
                words=f"Internal error ({exc.__class__.__name__}): {exc}",
                graph_at=timezone.now(),
            )
        if not _keep(result, claim):
            return CompetencyRun.objects.get(pk=run_id)
    with transaction.atomic():
        locked = CompetencyRun.objects.select_for_update().get(pk=run_id)
        if locked.claimed_by == claim:
            return _finish(locked, status=CompetencyRun.Status.FINISHED, total=len(questions))
        return locked


def _finish(run: CompetencyRun, *, status: str, error: str = "", total: int | None = None):
    """End a run (called with it locked): counts from its results, slot freed."""
    if run.is_finished:
        return run
    results = QuestionResult.objects.filter(run=run)
    run.passed = results.filter(passed=True).count()
    run.failed = results.filter(passed=False).count()
    if total is not None:
        run.total = total
    run.status = status
    run.error = error
    run.open_slot = None
    now = timezone.now()
    run.started_at = run.started_at or now
    run.finished_at = now
    run.save()
    return run


@transaction.atomic
def competency_run_not_queued(*, run_id: int, reason: str) -> CompetencyRun:
    """The broker refused the run's task: it fails now, in words, instead of waiting
    "queued" for a message that will never arrive. Not audited again (its start was)."""
    run = CompetencyRun.objects.select_for_update().get(pk=run_id)
    if run.status != CompetencyRun.Status.QUEUED:
        return run
    return _finish(
        run,
        status=CompetencyRun.Status.FAILED,
        error=f"Could not be queued for the workers: {reason}",
    )


def failing_results(run: CompetencyRun) -> list[QuestionResult]:
    """The run's failing results that point at a gap (where a gap search may look)."""
    return [
        r for r in QuestionResult.objects.filter(run=run, passed=False).order_by("pk") if r.gaps
    ]
