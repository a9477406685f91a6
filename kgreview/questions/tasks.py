"""Celery tasks for competency questions. Thin: load by key, call a service, return early
if already done; safe to run twice and on any number of workers (see ``runs``)."""

from __future__ import annotations

import logging

from kgreview.agents.models import AgentRun
from kgreview.agents.tasks import kgreview_task
from kgreview.core.errors import StateConflict

from . import gaps, runs
from .models import CompetencyRun, QuestionResult

log = logging.getLogger(__name__)


@kgreview_task(name="questions.run")
def run_questions(self, *, run_id: int) -> str:
    """Ask the run's questions; then queue a gap search for each failing one."""
    run = runs.competency_run_execute(run_id=run_id, claim=f"task:{self.request.id}")
    if run.status == CompetencyRun.Status.FINISHED:
        trigger = (
            AgentRun.Trigger.SCHEDULE
            if run.trigger == CompetencyRun.Trigger.SCHEDULE
            else AgentRun.Trigger.MANUAL
        )
        for result in runs.failing_results(run):
            search_gap.delay(result_id=result.pk, trigger=trigger)
    return run.status


@kgreview_task(name="questions.run_scheduled")
def run_scheduled(self) -> int | None:
    """The beat entry: a run of every active question, unless one is going."""
    try:
        run = runs.competency_run_create(trigger=CompetencyRun.Trigger.SCHEDULE)
    except StateConflict as exc:
        log.info("competency questions: %s; the schedule skips this turn", exc)
        return None
    run_questions.delay(run_id=run.pk)
    return run.pk


@kgreview_task(name="questions.search_gap")
def search_gap(self, *, result_id: int, trigger: str = AgentRun.Trigger.SCHEDULE) -> int | None:
    """The missing-link search for one failing result; once per result."""
    result = QuestionResult.objects.filter(pk=result_id).first()
    if result is None or result.passed or not result.gaps:
        return None
    run = gaps.gap_run_for(result, trigger=trigger)
    if run is None:
        return None
    gaps.gap_search(run=run)
    return run.pk
