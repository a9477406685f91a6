"""Concept types on the pages: the Ontology page's list with a curator's retire and
reactivate controls, and a concept's type on its page with a curator's change (a
decision), with and without htmx; refusals in words, nothing written."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from kgreview.core.models import AuditEntry
from kgreview.graph import services
from kgreview.graph.models import ConceptType, ConceptTypeChange
from kgreview.review.models import Decision
from tests.pages import HOSTILE, client_for, flashes, page, reload

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}
HUGE = 10**30


@pytest.fixture
def curator(f) -> Client:
    return client_for(f, "curator")


@pytest.fixture
def viewer(f) -> Client:
    return client_for(f, "viewer")


@pytest.fixture
def types():
    """object > setting; process, retired."""
    services.concept_type_create(
        key="object", label="Object", description="Anything named.", acting_user=None
    )
    setting = services.concept_type_create(
        key="setting", label="Setting", parent_key="object", acting_user=None
    )
    process = services.concept_type_create(key="process", label="Process", acting_user=None)
    services.concept_type_retire(concept_type=process, acting_user=None)
    return {"setting": setting, "process": reload(process)}


def type_rows(response) -> dict[str, tuple[str, str, int, str]]:
    """key -> (label, parent key or "", concepts, status) from the concept types table."""
    section = re.search(
        r'<section class="card" id="concept-types">(.*?)</section>', page(response), re.S
    ).group(1)
    rows = re.findall(
        r'<td class="type-key"><code>(\w+)</code></td>\s*<td>(?:<bdi>)?([^<]*)(?:</bdi>)?.*?</td>'
        r"\s*<td>(?:<code>(\w+)</code>|<span[^>]*>—</span>)</td>\s*"
        r'<td class="num">(\d+)</td>\s*<td><span class="badge \w+">([^<]+)</span>',
        section,
        re.S,
    )
    return {k: (label, parent, int(n), status.strip()) for k, label, parent, n, status in rows}


# --- the Ontology page ----------------------------------------------------------------


def test_an_untyped_graph_says_it_has_no_concept_types(viewer):
    """The starting vocabulary is empty, and the page says what to do."""
    response = viewer.get(reverse("ontology"))
    assert response.status_code == 200
    assert "None yet: the graph is untyped." in page(response)


def test_the_ontology_lists_types_with_parent_concepts_and_status(viewer, types, f):
    """Active types first; each with its parent, its active concepts and its state."""
    services.concept_set_type(concept=f.concept("work_mem"), type_key="setting", acting_user=None)
    rows = type_rows(viewer.get(reverse("ontology")))
    assert list(rows) == ["object", "setting", "process"]
    assert rows["setting"][1:3] == ("object", 1)
    assert rows["object"][3] == "active" and rows["process"][3].startswith("retired")
    assert "Anything named." in page(viewer.get(reverse("ontology")))


def test_curators_get_retire_and_reactivate_controls_and_viewers_none(curator, viewer, types):
    """A control per type for a curator: Retire for an active type, Reactivate else."""
    action = reverse("concept-type-action", args=[types["process"].pk])
    assert action in page(curator.get(reverse("ontology")))
    assert action not in page(viewer.get(reverse("ontology")))
    response = viewer.post(action, {"action": "reactivate"})
    assert response.status_code == 403 and not reload(types["process"]).active


@pytest.mark.parametrize("headers", [{}, HX])
def test_a_curator_retires_and_reactivates_a_type(curator, types, headers):
    """Each goes back to the Ontology page with a message and one log row."""
    setting = types["setting"]
    url = reverse("concept-type-action", args=[setting.pk])
    response = curator.post(url, {"action": "retire"}, headers=headers, follow=True)
    assert ("success", '"setting" retired; the concepts that have it keep it.') in flashes(response)
    assert reload(setting).active is False
    assert type_rows(response)["setting"][3].startswith("retired")
    response = curator.post(url, {"action": "reactivate"}, headers=headers, follow=True)
    assert ("success", '"setting" is active again.') in flashes(response)
    assert reload(setting).active is True
    actions = list(AuditEntry.objects.order_by("-pk").values_list("action", flat=True)[:2])
    assert actions == ["concept_type.reactivate", "concept_type.retire"]


@pytest.mark.parametrize("headers", [{}, HX])
def test_a_refused_type_action_is_said_in_words_and_changes_nothing(curator, types, headers):
    """Retiring a parent with active subtypes, or a retired type again, is refused."""
    logged = AuditEntry.objects.count()
    parent = ConceptType.objects.get(key="object")
    response = curator.post(
        reverse("concept-type-action", args=[parent.pk]),
        {"action": "retire"},
        headers=headers,
        follow=True,
    )
    assert flashes(response) == [
        (
            "error",
            'The concept type "object" still has active subtypes (setting); retire them or '
            "give them another parent first.",
        )
    ]
    response = curator.post(
        reverse("concept-type-action", args=[types["process"].pk]),
        {"action": "retire"},
        headers=headers,
        follow=True,
    )
    assert flashes(response) == [("error", 'The concept type "process" is already retired.')]
    assert reload(parent).active and AuditEntry.objects.count() == logged


@pytest.mark.parametrize("headers", [{}, HX])
def test_a_curator_describes_a_type_and_moves_it_to_the_top(curator, types, headers):
    """New words and no parent; one log row names what changed."""
    setting = types["setting"]
    response = curator.post(
        reverse("concept-type-action", args=[setting.pk]),
        {"action": "describe", "label": "Server setting", "description": "GUC.", "parent_key": ""},
        headers=headers,
        follow=True,
    )
    assert ("success", '"setting" described.') in flashes(response)
    setting = reload(setting)
    assert (setting.label, setting.description, setting.parent) == ("Server setting", "GUC.", None)
    entry = AuditEntry.objects.latest("pk")
    assert entry.action == "concept_type.describe" and entry.after["parent"] is None


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"label": "Object", "parent_key": "setting"}, "the hierarchy would loop"),
        ({"label": "Object", "parent_key": "process"}, '"process" was retired'),
        ({"label": "Object", "parent_key": "nowhere"}, 'There is no concept type "nowhere".'),
        ({"label": "x" * 10_000}, "100 characters at most"),
        ({"label": ""}, "needs a label"),
    ],
)
def test_a_refused_description_is_said_and_nothing_changes(curator, types, data, words):
    """A loop, a retired or missing parent, a label too long or empty: words, no change."""
    parent = ConceptType.objects.get(key="object")
    logged = AuditEntry.objects.count()
    response = curator.post(
        reverse("concept-type-action", args=[parent.pk]),
        {"action": "describe", **data},
        follow=True,
    )
    ((level, said),) = flashes(response)
    assert level == "error" and words in said
    parent = reload(parent)
    assert (parent.label, parent.parent) == ("Object", None)
    assert AuditEntry.objects.count() == logged


@pytest.mark.parametrize("data", [{}, {"action": "delete"}, {"action": "x\x00"}])
def test_an_unknown_type_action_is_refused_and_changes_nothing(curator, types, data):
    """Only retire and reactivate are actions; anything else is refused in words."""
    logged = AuditEntry.objects.count()
    response = curator.post(
        reverse("concept-type-action", args=[types["setting"].pk]), data, follow=True
    )
    assert response.status_code in (200, 400)
    assert reload(types["setting"]).active and AuditEntry.objects.count() == logged


@pytest.mark.parametrize("pk", [424242, HUGE])
def test_an_action_on_a_missing_type_is_404(curator, pk):
    """No type, huge ids included: a 404, nothing written."""
    response = curator.post(f"/ontology/types/{pk}/", {"action": "retire"})
    assert response.status_code == 404
    assert not AuditEntry.objects.exists()


def test_hostile_type_words_render_as_text(viewer):
    """A label or description holding markup is shown, never run."""
    services.concept_type_create(key="evil", label=HOSTILE, description=HOSTILE, acting_user=None)
    body = page(viewer.get(reverse("ontology")))
    assert HOSTILE not in body and "&lt;script&gt;" in body


# --- a concept's page -----------------------------------------------------------------


def test_a_concept_page_shows_its_type_and_parent(viewer, types, f):
    """The type's label, key and parent; an untyped concept says so."""
    c, plain = f.concept("work_mem"), f.concept("Plain")
    services.concept_set_type(concept=c, type_key="setting", acting_user=None)
    section = re.search(
        r'<section class="card" id="concept-type">(.*?)</section>',
        page(viewer.get(reverse("concept-detail", args=[c.pk]))),
        re.S,
    ).group(1)
    assert "Setting" in section and "<code" in section and "a kind of" in section
    assert 'id="type-form"' not in section  # a viewer gets no form
    other = page(viewer.get(reverse("concept-detail", args=[plain.pk])))
    assert "Untyped." in other


def test_a_curator_gets_the_active_types_to_choose_from(curator, types, f):
    """Retired types are not offered; "no type" is."""
    body = page(curator.get(reverse("concept-detail", args=[f.concept("work_mem").pk])))
    form = re.search(r'<form[^>]*id="type-form".*?</form>', body, re.S).group(0)
    assert re.findall(r'<option value="(\w*)"', form) == ["", "object", "setting"]


@pytest.mark.parametrize("headers", [{}, HX])
def test_a_curator_changes_a_concepts_type_as_a_decision(curator, types, f, headers):
    """The change is a decision with its history; the page shows the new type."""
    c = f.concept("work_mem")
    response = curator.post(
        reverse("review:concept-type", args=[c.pk]),
        {"type_key": "setting", "note": "A server parameter."},
        headers=headers,
        follow=True,
    )
    assert ("success", '"work_mem" is now a "setting".') in flashes(response)
    assert reload(c).type.key == "setting"
    decision = Decision.objects.latest("pk")
    assert decision.after["type_to"] == "setting" and decision.note == "A server parameter."
    assert ConceptTypeChange.objects.filter(concept=c).count() == 1
    assert "Setting" in re.search(r'id="concept-type">(.*?)</section>', page(response), re.S).group(
        1
    )


@pytest.mark.parametrize(
    ("type_key", "words"),
    [
        ("process", 'The concept type "process" was retired'),
        ("nowhere", 'There is no concept type "nowhere".'),
        ("K" * 10_000, "There is no concept type"),
        ("", "Nothing would change."),
    ],
)
def test_a_refused_type_change_is_said_and_nothing_is_decided(curator, types, f, type_key, words):
    """Retired, missing, overlong or no change at all: words, no decision, no history."""
    c = f.concept("work_mem")
    decided = Decision.objects.count()
    response = curator.post(
        reverse("review:concept-type", args=[c.pk]), {"type_key": type_key}, follow=True
    )
    ((level, said),) = flashes(response)
    assert level == "error" and words in said
    assert Decision.objects.count() == decided and reload(c).type is None
    assert not ConceptTypeChange.objects.exists()


def test_a_type_change_is_for_curators_and_a_missing_concept_is_404(viewer, curator, types):
    """A viewer is refused; a missing or huge concept id is a 404."""
    assert viewer.post("/review/mend/concepts/1/type/", {"type_key": "setting"}).status_code in (
        403,
        404,
    )
    for pk in (424242, HUGE):
        assert (
            curator.post(f"/review/mend/concepts/{pk}/type/", {"type_key": "setting"}).status_code
            == 404
        )
    assert not Decision.objects.exists()


def test_the_curation_log_links_a_type_change_to_its_row_on_the_ontology(curator, types):
    """A type's log rows lead to its row on the Ontology page."""
    body = page(curator.get(reverse("curation-log"), {"action": "concept_type.retire"}))
    assert f"{reverse('ontology')}#concept-type-{types['process'].pk}" in body
    assert "a concept type retired" in body
