"""The admin shows competency questions, runs and results read-only; retire and
reactivate go through the services (audited); nothing can be deleted."""

from __future__ import annotations

import pytest
from django.urls import reverse

from kgreview.core.models import AuditEntry
from kgreview.questions.models import CompetencyQuestion

pytestmark = pytest.mark.django_db

MODELS = ["competencyquestion", "competencyrun", "questionresult"]


@pytest.fixture
def superuser(client, django_user_model):
    client.force_login(django_user_model.objects.create_superuser("root", "r@example.com", "pw"))
    return client


@pytest.mark.parametrize("model", MODELS)
def test_each_model_has_a_changelist_without_delete(superuser, model):
    """Browsable; no bulk delete offered."""
    response = superuser.get(reverse(f"admin:questions_{model}_changelist"))
    assert response.status_code == 200 and "delete_selected" not in response.content.decode()


def test_the_delete_page_is_forbidden_and_the_row_stays(superuser, world, ask):
    q = ask("What should I learn before LoRA?", "concepts", ["Fine-tuning"])
    response = superuser.post(reverse("admin:questions_competencyquestion_delete", args=[q.pk]))
    assert response.status_code == 403 and CompetencyQuestion.objects.filter(pk=q.pk).exists()


def test_retire_and_reactivate_are_admin_actions_through_the_services(superuser, world, ask):
    """Each writes its curation-log row; a second retire is a warning, not a crash."""
    q = ask("What should I learn before LoRA?", "concepts", ["Fine-tuning"])
    url = reverse("admin:questions_competencyquestion_changelist")
    superuser.post(url, {"action": "retire", "_selected_action": [q.pk]})
    q.refresh_from_db()
    assert not q.active
    again = superuser.post(url, {"action": "retire", "_selected_action": [q.pk]}, follow=True)
    assert "already retired" in again.content.decode()
    superuser.post(url, {"action": "reactivate", "_selected_action": [q.pk]})
    q.refresh_from_db()
    assert q.active
    assert AuditEntry.objects.filter(action="competency_question.retire").count() == 1
    assert AuditEntry.objects.filter(action="competency_question.reactivate").count() == 1
