"""The admin's periodic-task actions (django-celery-beat's PeriodicTask admin) go through
the services the Agents page uses (issue 25): pausing, resuming and toggling a schedule
write a curation-log row naming the person, and "Run selected tasks" on an agent's
schedule starts a run triggered by hand and requested by that person, not "schedule".

Tasks run eagerly in the test settings, so a run has finished when the action answers."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from django_celery_beat.models import PeriodicTask

from kgreview.agents.models import AgentRun
from kgreview.core.models import AuditEntry
from tests.agents.pages import schedule

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:django_celery_beat_periodictask_changelist"


@pytest.fixture
def admin_user(django_user_model):
    return django_user_model.objects.create_superuser("root", "root@example.com", "pw-12345")


@pytest.fixture
def admin_client(admin_user) -> Client:
    client = Client()
    client.force_login(admin_user)
    return client


def act(client: Client, action: str, *schedules: PeriodicTask):
    response = client.post(
        reverse(CHANGELIST),
        {"action": action, "_selected_action": [s.pk for s in schedules]},
        follow=True,
    )
    assert response.status_code == 200
    return response


def rows(action: str) -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(action=action).order_by("pk"))


def test_pausing_a_schedule_in_the_admin_is_in_the_curation_log(admin_client, admin_user):
    heal = schedule("heal")
    assert heal.enabled
    act(admin_client, "disable_tasks", heal)
    heal.refresh_from_db()
    assert not heal.enabled
    (entry,) = rows("schedule.pause")
    assert entry.user == admin_user
    assert (entry.subject_type, entry.subject_id) == ("schedule", str(heal.pk))
    assert entry.summary == f"Paused the schedule “{heal.name}”."


def test_resuming_a_schedule_in_the_admin_is_in_the_curation_log(admin_client, admin_user):
    heal = schedule("heal")
    PeriodicTask.objects.filter(pk=heal.pk).update(enabled=False)
    act(admin_client, "enable_tasks", heal)
    heal.refresh_from_db()
    assert heal.enabled
    (entry,) = rows("schedule.resume")
    assert entry.user == admin_user and entry.subject_id == str(heal.pk)


def test_toggling_schedules_in_the_admin_logs_each_change(admin_client, admin_user):
    heal, discover = schedule("heal"), schedule("discover")
    PeriodicTask.objects.filter(pk=discover.pk).update(enabled=False)
    act(admin_client, "toggle_tasks", heal, discover)
    heal.refresh_from_db()
    discover.refresh_from_db()
    assert (heal.enabled, discover.enabled) == (False, True)
    assert [(e.action, e.subject_id, e.user) for e in rows("schedule.pause")] == [
        ("schedule.pause", str(heal.pk), admin_user)
    ]
    assert [(e.action, e.subject_id, e.user) for e in rows("schedule.resume")] == [
        ("schedule.resume", str(discover.pk), admin_user)
    ]


def test_an_action_that_changes_nothing_logs_nothing(admin_client):
    act(admin_client, "enable_tasks", schedule("heal"))  # already enabled
    assert not rows("schedule.resume") and not rows("schedule.pause")


def test_pausing_in_the_admin_s_change_form_is_in_the_curation_log(admin_client, admin_user):
    heal = schedule("heal")
    url = reverse("admin:django_celery_beat_periodictask_change", args=[heal.pk])
    form = admin_client.get(url).context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None}
    data.update(regtask=heal.task, enabled="")  # an unchecked box
    data.pop("enabled")
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    heal.refresh_from_db()
    assert not heal.enabled
    (entry,) = rows("schedule.pause")
    assert entry.user == admin_user and entry.subject_id == str(heal.pk)


def test_running_an_agent_s_schedule_in_the_admin_is_a_run_by_that_person(admin_client, admin_user):
    act(admin_client, "run_tasks", schedule("heal"))
    run = AgentRun.objects.get()
    assert (run.agent, run.trigger, run.requested_by) == ("heal", "manual", admin_user)
    assert run.status == "succeeded"
    (entry,) = rows("agent_run.start")
    assert entry.user == admin_user and entry.subject_id == str(run.pk)


def test_running_the_construct_schedule_with_nothing_new_says_so_and_starts_nothing(
    admin_client,
):
    response = act(admin_client, "run_tasks", schedule("construct"))
    assert not AgentRun.objects.exists()
    assert "Nothing new to read" in response.content.decode()


def test_running_another_schedule_in_the_admin_is_in_the_curation_log(
    admin_client, admin_user, monkeypatch
):
    """A schedule of no agent run (the reaper's, say) is queued as django-celery-beat
    queues it, and the curation log says who ran it."""
    other = PeriodicTask.objects.exclude(
        task__in=["agents.construct_scheduled", "agents.heal", "agents.discover"]
    ).first()
    if other is None:
        pytest.skip("no schedule other than the agents' is installed")
    queued = []
    monkeypatch.setattr(
        "celery.app.task.Task.apply_async", lambda task, *a, **kw: queued.append(task.name)
    )
    act(admin_client, "run_tasks", other)
    assert queued == [other.task]
    (entry,) = rows("schedule.run")
    assert entry.user == admin_user and entry.subject_id == str(other.pk)
    assert not AgentRun.objects.filter(trigger="schedule").exists()
