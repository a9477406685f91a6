"""The competency tasks and their beat entry: runs on a schedule beside the agents',
safe twice, never overlapping; failing questions start their gap search."""

from __future__ import annotations

import json

import pytest
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from kgreview.agents.models import AgentRun
from kgreview.celery import app
from kgreview.questions import tasks
from kgreview.questions.models import CompetencyRun, QuestionResult
from kgreview.questions.runs import competency_run_create
from kgreview.questions.schedule import SCHEDULE_NAME, SCHEDULE_TASK, schedule_sync
from kgreview.review.models import Proposal

pytestmark = pytest.mark.django_db


def test_the_schedule_asks_every_question_and_searches_the_failing_ones_gaps(
    world, gap_lesson, ask
):
    """One scheduled turn: a run, its results, and a gap search per failing question."""
    passing = ask("What should I learn before LoRA?", "concepts", ["Fine-tuning"])
    failing = ask("What should I learn before quantization?", "concepts", ["Embeddings"])
    run_id = tasks.run_scheduled.delay().get()
    run = CompetencyRun.objects.get(pk=run_id)
    assert run.trigger == "schedule" and run.status == "finished"
    assert (run.passed, run.failed) == (1, 1)
    search = AgentRun.objects.get(agent="gaps")
    assert search.trigger == "schedule" and search.status == "succeeded"
    assert search.params["question_id"] == failing.pk
    assert Proposal.objects.filter(competency_question=failing).count() == 1
    assert not Proposal.objects.filter(competency_question=passing).exists()


def test_the_schedule_skips_its_turn_while_a_run_is_open(world, ask):
    """A run going (another worker's, or a curator's): the turn does nothing."""
    ask("What should I learn before LoRA?", "concepts", ["Fine-tuning"])
    open_run = competency_run_create()
    assert tasks.run_scheduled.delay().get() is None
    assert list(CompetencyRun.objects.values_list("pk", flat=True)) == [open_run.pk]


def test_the_run_task_twice_asks_each_question_once(world, ask):
    """A redelivered message (acks late) changes nothing the first one did."""
    ask("What should I learn before LoRA?", "concepts", ["Fine-tuning"])
    run = competency_run_create()
    assert tasks.run_questions.delay(run_id=run.pk).get() == "finished"
    assert tasks.run_questions.delay(run_id=run.pk).get() == "finished"
    assert QuestionResult.objects.filter(run=run).count() == 1


def test_the_gap_task_is_a_no_op_for_a_passing_or_missing_result(world, ask):
    """Nothing to search: no run is made."""
    ask("What should I learn before LoRA?", "concepts", ["Fine-tuning"])
    run = competency_run_create()
    tasks.run_questions.delay(run_id=run.pk).get()
    result = QuestionResult.objects.get()
    assert tasks.search_gap.delay(result_id=result.pk).get() is None
    assert tasks.search_gap.delay(result_id=987654).get() is None
    assert not AgentRun.objects.filter(agent="gaps").exists()


def test_the_beat_entry_exists_after_migrate_and_runs_a_registered_task():
    """Daily by default, enabled, beside the agents' schedules."""
    entry = PeriodicTask.objects.get(name=SCHEDULE_NAME)
    assert entry.task == SCHEDULE_TASK and entry.enabled
    assert (entry.interval.every, entry.interval.period) == (1440, "minutes")
    assert json.loads(entry.kwargs) == {}
    assert SCHEDULE_TASK in app.tasks and "questions.search_gap" in app.tasks
    assert PeriodicTask.objects.filter(task="agents.heal").exists()


def test_the_interval_follows_the_setting_and_a_paused_entry_stays_paused(settings):
    """KG_COMPETENCY_SCHEDULE_MINUTES owns the interval; curators own enabled."""
    PeriodicTask.objects.filter(name=SCHEDULE_NAME).update(enabled=False)
    settings.KG_COMPETENCY_SCHEDULE_MINUTES = 90
    entry = schedule_sync()
    assert (entry.interval.every, entry.interval.period) == (90, "minutes")
    assert not entry.enabled and entry.description.startswith("Every 90 minutes")
    schedule_sync()
    assert PeriodicTask.objects.filter(name=SCHEDULE_NAME).count() == 1
    assert IntervalSchedule.objects.filter(every=90, period="minutes").count() == 1


def test_a_nonsense_interval_falls_back_to_daily(settings):
    """A setting that is not a number of minutes is read as the default."""
    settings.KG_COMPETENCY_SCHEDULE_MINUTES = "often"
    assert schedule_sync().description.startswith("Every day")


def test_a_changed_interval_tells_a_running_beat(settings):
    """The beat's change marker moves, so the new interval is read without a restart."""
    from django_celery_beat.models import PeriodicTasks

    before = PeriodicTasks.last_change()
    settings.KG_COMPETENCY_SCHEDULE_MINUTES = 30
    schedule_sync()
    assert PeriodicTasks.last_change() is not None and PeriodicTasks.last_change() != before
