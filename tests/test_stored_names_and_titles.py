"""One rule for every name and title kgreview stores (issue 25): ``normal_name`` takes out
controls, format characters (bidi marks, embeddings, overrides, isolates, zero-width
characters, the BOM) and surrogates, whatever path the text came by. Names of concepts
and aliases were already cleaned (tests/graph/test_names_normal.py); here every other
stored name and title, one test per field."""

from __future__ import annotations

import pytest
from django.forms.models import model_to_dict
from django_celery_beat.models import PeriodicTask

from kgreview.agents.admin import PeriodicTaskForm
from kgreview.api.services import api_token_create
from kgreview.core.errors import ValidationFailed
from kgreview.graph import services
from kgreview.graph.models import ConceptAlias, RelationType
from kgreview.graph.vocabulary_files import RelationDef

pytestmark = pytest.mark.django_db

RLO, LRI, PDI, ZWJ, BOM, LRM = "\u202e", "\u2066", "\u2069", "\u200d", "\ufeff", "\u200e"
HOSTILE = f"{LRI}Evil{RLO}gnp.exe{PDI}{ZWJ} notes{BOM}{LRM}"
CLEAN = "Evilgnp.exe notes"


def test_a_concept_name_and_an_alias_lose_their_format_characters(f):
    concept = f.concept(HOSTILE)
    alias = services.concept_add_alias(concept=concept, name=f"{RLO}Other name", acting_user=None)
    assert concept.name == CLEAN
    assert alias.name == "Other name"
    assert set(ConceptAlias.objects.values_list("name", flat=True)) == {CLEAN, "Other name"}


def test_a_source_title_loses_its_format_characters_on_import_and_on_retitle(f):
    first = services.source_import(
        slug="notes", title=HOSTILE, text="Some text.\n", acting_user=None
    )
    assert first.source.title == CLEAN
    assert first.revision.title == CLEAN
    again = services.source_import(
        slug="notes", title=f"New{RLO} title", text="Some text.\n", acting_user=None
    )
    again.source.refresh_from_db()
    assert again.source.title == "New title"


def test_a_source_title_of_format_characters_only_falls_back_to_its_slug(f):
    made = services.source_import(
        slug="notes", title=f"{RLO}{LRI}", text="Text.\n", acting_user=None
    )
    assert made.source.title == "notes"


def test_an_api_token_name_loses_its_format_characters(f):
    owner = f.user(role="viewer")
    issued = api_token_create(owner=owner, name=HOSTILE, acting_user=owner)
    assert issued.token.name == CLEAN


def test_an_api_token_name_of_format_characters_only_is_refused_in_words(f):
    owner = f.user(role="viewer")
    with pytest.raises(ValidationFailed, match="Give the token a name"):
        api_token_create(owner=owner, name=f"{RLO}{ZWJ}", acting_user=owner)


def test_a_relation_label_and_verb_lose_their_format_characters(f):
    made = services.relation_type_create(
        key="hostile", label=HOSTILE, verb=f"is{RLO} part of", acting_user=None
    )
    assert (made.label, made.verb) == (CLEAN, "is part of")
    described = services.relation_type_describe(
        relation=made, label=f"Better{LRI} label", verb=f"{BOM}contains", acting_user=None
    )
    described.refresh_from_db()
    assert (described.label, described.verb) == ("Better label", "contains")


def test_a_relation_label_of_format_characters_only_is_refused_in_words(f):
    made = services.relation_type_create(key="plain", label="Plain", verb="is", acting_user=None)
    with pytest.raises(ValidationFailed, match="label must hold words"):
        services.relation_type_describe(relation=made, label=RLO, acting_user=None)
    made.refresh_from_db()
    assert made.label == "Plain"


def test_a_vocabulary_file_label_is_read_in_its_stored_form(f):
    wanted = RelationDef(key="part_of", label=HOSTILE, verb=f"is{RLO} part of")
    assert (wanted.label, wanted.verb) == (CLEAN, "is part of")
    with pytest.raises(ValueError, match="must hold words"):
        RelationDef(key="part_of", label=f"{RLO}{ZWJ}", verb="is")


def test_a_schedule_name_typed_in_the_admin_loses_its_format_characters(f):
    schedule = PeriodicTask.objects.order_by("pk").first()
    data = {k: v for k, v in model_to_dict(schedule).items() if v is not None}
    data.update(name=HOSTILE, regtask=schedule.task)
    form = PeriodicTaskForm(data=data, instance=schedule)
    assert form.is_valid(), form.errors
    assert form.save().name == CLEAN
    assert PeriodicTask.objects.get(pk=schedule.pk).name == CLEAN


def test_a_schedule_name_of_format_characters_only_is_refused_in_words(f):
    schedule = PeriodicTask.objects.order_by("pk").first()
    data = {k: v for k, v in model_to_dict(schedule).items() if v is not None}
    data.update(name=f"{RLO}{LRM}", regtask=schedule.task)
    form = PeriodicTaskForm(data=data, instance=schedule)
    assert not form.is_valid()
    assert "a name that holds words" in str(form.errors["name"])


def test_no_stored_relation_label_keeps_a_format_character(f):
    """Every vocabulary preset installed by the migrations is already in its stored form."""
    from construction.text import normal_name

    for label, verb in RelationType.objects.values_list("label", "verb"):
        assert (label, verb) == (normal_name(label), normal_name(verb))


# --- Rows stored before the rule: shown isolated ------------------------------------------


def signed_in(f, role: str):
    from django.test import Client

    client = Client()
    user = f.user(role=role)
    client.force_login(user)
    return client, user


def test_an_old_source_title_with_an_override_is_shown_inside_bdi(f):
    """A title stored before the rule (written past the service) cannot reorder the
    words around it: the home page and the source's page isolate it."""
    from django.urls import reverse

    from kgreview.graph.models import Source

    made = services.source_import(
        slug="notes", title="Notes", text="Some text.\n", acting_user=None
    )
    Source.objects.filter(pk=made.source.pk).update(title=f"Evil{RLO}gnp.exe")
    client, _ = signed_in(f, "viewer")
    for url in (reverse("home"), reverse("source-detail", args=["notes"])):
        html = client.get(url).content.decode()
        body = html.split("</title>", 1)[1]  # a window's title is text, not laid out
        assert f"<bdi>Evil{RLO}gnp.exe</bdi>" in body
        assert body.count(RLO) == body.count(f"<bdi>Evil{RLO}")


def test_an_old_api_token_name_with_an_override_is_shown_inside_bdi(f):
    from django.urls import reverse

    from kgreview.api.models import ApiToken

    client, owner = signed_in(f, "viewer")
    issued = api_token_create(owner=owner, name="bot", acting_user=owner)
    ApiToken.objects.filter(pk=issued.token.pk).update(name=f"Evil{RLO}gnp.exe")
    html = client.get(reverse("api-tokens")).content.decode()
    assert f"<td><bdi>Evil{RLO}gnp.exe</bdi></td>" in html
