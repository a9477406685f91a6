"""The admin: curators edit the ontology, nobody deletes, provenance is read-only."""

from __future__ import annotations

import pytest
from django.urls import reverse

from kgreview.graph.models import Concept, ConceptAlias, Edge, RelationType, Source
from kgreview.review.models import Decision, EdgeProvenance, Proposal

pytestmark = pytest.mark.django_db

MODELS = [
    ("graph", "relationtype"),
    ("graph", "concept"),
    ("graph", "conceptalias"),
    ("graph", "source"),
    ("graph", "sourcerevision"),
    ("graph", "sourceconcept"),
    ("graph", "edge"),
    ("review", "proposal"),
    ("review", "decision"),
    ("agents", "agentrun"),
    ("agents", "workerheartbeat"),
]


@pytest.fixture
def curator(client, f):
    client.force_login(f.user(role="curator"))
    return client


@pytest.fixture
def superuser(client, django_user_model):
    admin = django_user_model.objects.create_superuser("root", "root@example.com", "pw-12345")
    client.force_login(admin)
    return client


@pytest.mark.parametrize("app,model", MODELS)
def test_every_model_has_an_admin_changelist(superuser, app, model):
    """Each model is browsable in the admin."""
    assert superuser.get(reverse(f"admin:{app}_{model}_changelist")).status_code == 200


@pytest.mark.parametrize("app,model", MODELS)
def test_admin_offers_no_delete_even_to_a_superuser(superuser, f, app, model):
    """No delete action, and the delete page is forbidden."""
    page = superuser.get(reverse(f"admin:{app}_{model}_changelist")).content.decode()
    assert "delete_selected" not in page
    a, b = f.concept("A"), f.concept("B")
    f.edge(a, b)
    objects = {
        "relationtype": RelationType.objects.first(),
        "concept": a,
        "conceptalias": ConceptAlias.objects.first(),
        "edge": Edge.objects.first(),
        "source": f.source(),
    }
    obj = objects.get(model)
    if obj is not None:
        response = superuser.post(reverse(f"admin:{app}_{model}_delete", args=[obj.pk]))
        assert response.status_code == 403
        assert type(obj).objects.filter(pk=obj.pk).exists()


def test_curator_adds_a_relation_type_through_the_admin(curator):
    """A curator can add a term to the vocabulary."""
    response = curator.post(
        reverse("admin:graph_relationtype_add"),
        {
            "key": "alternative_to",
            "label": "Alternative to",
            "verb": "is an alternative to",
            "description": "Either can do the job.",
            "directed": "",
            "symmetric": "on",
            "acyclic": "",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    rel = RelationType.objects.get(key="alternative_to")
    assert rel.symmetric and not rel.directed and rel.active


def test_admin_refuses_a_relation_shape_that_breaks_the_constraints(curator):
    """Directed and symmetric at once is refused with a message, not a crash."""
    response = curator.post(
        reverse("admin:graph_relationtype_add"),
        {"key": "both", "label": "Both", "verb": "x", "directed": "on", "symmetric": "on"},
    )
    assert response.status_code == 200
    assert "either directed or symmetric" in response.content.decode()
    assert not RelationType.objects.filter(key="both").exists()


def test_curator_retires_a_relation_type_with_the_admin_action(curator):
    """Retire is an action; the row stays with its retirement time."""
    rel = RelationType.objects.get(key="applies_to")
    response = curator.post(
        reverse("admin:graph_relationtype_changelist"),
        {"action": "retire", "_selected_action": [rel.pk]},
    )
    assert response.status_code == 302
    rel.refresh_from_db()
    assert not rel.active and rel.retired_at is not None


def test_relation_shape_is_read_only_once_it_exists(curator):
    """Changing direction or acyclicity of an existing type is not offered."""
    rel = RelationType.objects.get(key="prerequisite")
    page = curator.get(reverse("admin:graph_relationtype_change", args=[rel.pk])).content.decode()
    assert 'name="acyclic"' not in page and 'name="symmetric"' not in page
    assert 'name="description"' in page


def test_curator_adds_a_concept_through_the_service(curator):
    """A concept added in the admin gets its canonical name registered."""
    response = curator.post(
        reverse("admin:graph_concept_add"),
        {
            "name": "Mixture of experts",
            "description": "Sparse routing.",
            "aliases-TOTAL_FORMS": "0",
            "aliases-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    c = Concept.objects.get(name="Mixture of experts")
    assert c.aliases.get().kind == "canonical"


@pytest.mark.parametrize("model", [Edge, Source, Proposal, Decision, EdgeProvenance])
def test_provenance_is_read_only_for_curators(curator, model):
    """Curators cannot add or change edges, their provenance, sources, proposals or
    decisions in the admin."""
    opts = model._meta
    assert curator.get(reverse(f"admin:{opts.app_label}_{opts.model_name}_add")).status_code == 403


def test_reviewer_is_not_staff_and_cannot_open_the_admin(client, f):
    """Only curators use the admin."""
    client.force_login(f.user(role="reviewer"))
    response = client.get(reverse("admin:index"))
    assert response.status_code == 302 and "login" in response["Location"]


def test_the_admin_never_deletes_an_account_and_says_to_deactivate_it(superuser, f):
    """Deleting a user would cascade or hit PROTECT; the admin refuses in words instead."""
    account = f.user(role="reviewer")
    response = superuser.post(reverse("admin:auth_user_delete", args=[account.pk]), {"post": "yes"})
    assert response.status_code == 403
    assert "Untick Active" in response.content.decode()
    assert type(account).objects.filter(pk=account.pk).exists()
    page = superuser.get(reverse("admin:auth_user_change", args=[account.pk])).content.decode()
    assert "Accounts are never deleted" in page
    assert reverse("admin:auth_user_delete", args=[account.pk]) not in page


def test_no_admin_page_can_delete_a_guarded_model(rf, django_user_model):
    """Every admin registered for a model that carries history hides delete, whoever wrote it."""
    from django.contrib import admin

    from kgreview.core.nodelete import guarded_models

    request = rf.get("/admin/")
    request.user = django_user_model(is_superuser=True, is_staff=True, is_active=True)
    guarded = guarded_models()
    checked = []
    for model, model_admin in admin.site._registry.items():
        if model._meta.concrete_model not in guarded:
            continue
        assert not model_admin.has_delete_permission(request), model._meta.label
        assert "delete_selected" not in model_admin.get_actions(request), model._meta.label
        checked.append(model._meta.label)
    assert "auth.User" in checked and "graph.ConceptAlias" in checked
