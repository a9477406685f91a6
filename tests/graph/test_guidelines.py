"""A relation type's or concept type's guideline: written by a curator through one
service with an audit row that keeps the earlier text; bad text refused in words; shown
sanitised; edited on the Ontology page."""

from __future__ import annotations

import pytest
from django.urls import reverse

from kgreview.core.errors import ValidationFailed
from kgreview.core.models import AuditEntry
from kgreview.graph import services
from kgreview.graph.concept_types import ConceptType
from kgreview.graph.models import RelationType
from tests.pages import HOSTILE, client_for, flashes, page

pytestmark = pytest.mark.django_db


def test_a_relation_guideline_is_written_and_audited_with_the_earlier_text(f):
    cora = f.user("cora", role="curator")
    relation = RelationType.objects.get(key="prerequisite")
    services.relation_type_guideline(relation=relation, text="First.\r\n", acting_user=cora)
    services.relation_type_guideline(relation=relation, text="  Second.  ", acting_user=cora)
    assert RelationType.objects.get(pk=relation.pk).guideline == "Second."
    rows = AuditEntry.objects.filter(action="relation_type.guideline").order_by("id")
    assert [(r.before, r.after) for r in rows] == [
        ({"guideline": ""}, {"guideline": "First."}),
        ({"guideline": "First."}, {"guideline": "Second."}),
    ]
    assert rows[0].user == cora


def test_a_concept_type_guideline_is_written_and_audited(f):
    cora = f.user("cora", role="curator")
    tool = services.concept_type_create(key="tool", label="Tool", acting_user=None)
    services.concept_type_guideline(concept_type=tool, text="A *thing* used.", acting_user=cora)
    assert ConceptType.objects.get(pk=tool.pk).guideline == "A *thing* used."
    assert AuditEntry.objects.get(action="concept_type.guideline").after == {
        "guideline": "A *thing* used."
    }


@pytest.mark.parametrize(
    ("text", "words"),
    [("a \x00 b", "control characters"), ("x" * (1024 * 1024), "at most 20,000 characters")],
)
def test_bad_guideline_text_is_refused_in_words_and_nothing_changes(f, text, words):
    relation = RelationType.objects.get(key="prerequisite")
    with pytest.raises(ValidationFailed, match=words):
        services.relation_type_guideline(relation=relation, text=text, acting_user=None)
    assert RelationType.objects.get(pk=relation.pk).guideline == ""
    assert not AuditEntry.objects.filter(action="relation_type.guideline").exists()


def test_a_curator_writes_a_guideline_on_the_ontology_page_and_it_shows_sanitised(f):
    curator = client_for(f, "curator")
    relation = RelationType.objects.get(key="prerequisite")
    response = curator.post(
        reverse("relation-action", args=[relation.pk]),
        {"action": "guideline", "guideline": f"Use it for **order**. {HOSTILE}"},
        follow=True,
    )
    assert ("success", 'The guideline of "prerequisite" is saved.') in flashes(response)
    html = page(response)
    assert "<strong>order</strong>" in html and HOSTILE not in html
    assert "&lt;script&gt;" in html


def test_a_megabyte_guideline_from_the_page_is_refused_in_words(f):
    curator = client_for(f, "curator")
    relation = RelationType.objects.get(key="prerequisite")
    response = curator.post(
        reverse("relation-action", args=[relation.pk]),
        {"action": "guideline", "guideline": "x" * (1024 * 1024)},
        follow=True,
    )
    assert response.status_code == 200
    assert any("at most 20,000 characters" in text for _, text in flashes(response))
    assert RelationType.objects.get(pk=relation.pk).guideline == ""


def test_a_curator_writes_a_concept_type_guideline_on_the_ontology_page(f):
    curator = client_for(f, "curator")
    tool = services.concept_type_create(key="tool", label="Tool", acting_user=None)
    response = curator.post(
        reverse("concept-type-action", args=[tool.pk]),
        {"action": "guideline", "guideline": "Something *used*."},
        follow=True,
    )
    assert ("success", 'The guideline of "tool" is saved.') in flashes(response)
    assert "<em>used</em>" in page(response)


def test_a_reviewer_cannot_write_a_guideline(f):
    reviewer = client_for(f, "reviewer")
    relation = RelationType.objects.get(key="prerequisite")
    response = reviewer.post(
        reverse("relation-action", args=[relation.pk]), {"action": "guideline", "guideline": "x"}
    )
    assert response.status_code == 403
    assert RelationType.objects.get(pk=relation.pk).guideline == ""


def test_a_guideline_written_in_the_admin_goes_through_its_service(f):
    curator = client_for(f, "curator")
    relation = RelationType.objects.get(key="prerequisite")
    response = curator.post(
        reverse("admin:graph_relationtype_change", args=[relation.pk]),
        {
            "label": relation.label,
            "verb": relation.verb,
            "description": relation.description,
            "guideline": "Written in the admin.",
        },
    )
    assert response.status_code == 302, page(response)[:2000]
    assert RelationType.objects.get(pk=relation.pk).guideline == "Written in the admin."
    assert AuditEntry.objects.get(action="relation_type.guideline").after == {
        "guideline": "Written in the admin."
    }
