"""Names that lie (issue 13): one normal form for every concept name and alias, whatever
path makes or renames it, so "\\u200bEmbeddings" is "Embeddings" and "Evil\\u202egnp.exe"
cannot print backwards; rows stored before are cleaned by a data migration."""

from __future__ import annotations

import unicodedata
from importlib import import_module

import pytest
from django.apps import apps
from django.test import Client
from django.urls import reverse

from construction.text import name_key, normal_name
from kgreview.core.errors import NameTaken
from kgreview.core.models import AuditEntry
from kgreview.graph import selectors, services
from kgreview.graph.models import Concept, ConceptAlias
from kgreview.review.decide.decisions import proposal_accept

pytestmark = pytest.mark.django_db

ZWSP, RLO, LRI, PDI, BOM = "\u200b", "\u202e", "\u2066", "\u2069", "\ufeff"


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        (f"{ZWSP}Embeddings", "Embeddings"),
        (f"Embed{ZWSP}dings{BOM}", "Embeddings"),
        (f"Evil{RLO}gnp.exe", "Evilgnp.exe"),
        (f"{LRI}Vector{PDI} search", "Vector search"),
        ("Cafe\u0301", "Caf\u00e9"),  # NFC: one é, not e and a combining accent
        ("Tab\tand\nnew  line", "Tab and new line"),
        ("soft\u00adhyphen", "softhyphen"),
    ],
)
def test_the_normal_form_drops_invisible_and_reordering_characters(typed, stored):
    assert normal_name(typed) == stored
    assert unicodedata.is_normalized("NFC", normal_name(typed))
    assert name_key(typed) == name_key(stored)


def test_a_zero_width_space_does_not_make_a_second_concept(f):
    emb = f.concept("Embeddings")
    with pytest.raises(NameTaken):
        services.concept_create(name=f"{ZWSP}Embeddings", acting_user=None)
    assert selectors.concept_by_name(name=f"{ZWSP}embeddings") == emb
    assert Concept.objects.count() == 1


def test_an_add_concept_proposal_with_a_zero_width_space_links_to_the_concept(f):
    emb = f.concept("Embeddings")
    proposal = f.concept_proposal(f"{ZWSP}Embeddings")
    assert proposal.payload["name"] == "Embeddings"
    proposal_accept(proposal_id=proposal.pk, acting_user=f.user(role="reviewer"))
    proposal.refresh_from_db()
    assert proposal.concept == emb
    assert Concept.objects.count() == 1


def test_a_bidi_override_is_taken_out_of_a_new_name_a_rename_and_an_alias(f):
    evil = services.concept_create(name=f"Evil{RLO}gnp.exe", acting_user=None)
    assert evil.name == "Evilgnp.exe"
    renamed, _ = services.concept_rename(concept=evil, name=f"Nice{RLO} name", acting_user=None)
    assert renamed.name == "Nice name"
    alias = services.concept_add_alias(concept=renamed, name=f"{LRI}Alias{PDI}", acting_user=None)
    assert alias.name == "Alias" and alias.key == name_key("Alias")
    names = set(ConceptAlias.objects.filter(concept=evil).values_list("name", flat=True))
    assert names == {"Evilgnp.exe", "Nice name", "Alias"}


def test_the_names_page_cleans_a_typed_alias(f):
    emb = f.concept("Embeddings")
    client = Client()
    client.force_login(f.user(role="curator"))
    url = reverse("review:concept-names", args=[emb.pk])
    client.post(url, {"action": "add_alias", "name": f"Dense{ZWSP} vectors{RLO}"})
    assert ConceptAlias.objects.filter(concept=emb, name="Dense vectors").exists()


def test_the_migration_cleans_names_stored_before(f):
    """Rows written before the normal form (here: forced in with update) are cleaned;
    a cleaned name another concept holds keeps its concept apart by id, a cleaned alias
    that repeats a name is taken off, and every change is on the curation log."""
    clean = f.concept("Embeddings")
    twin = f.concept("Twin")
    evil = f.concept("Evil")
    Concept.objects.filter(pk=twin.pk).update(name=f"{ZWSP}Embeddings")
    ConceptAlias.objects.filter(concept=twin).update(name=f"{ZWSP}Embeddings")
    Concept.objects.filter(pk=evil.pk).update(name=f"Evil{RLO}gnp.exe")
    ConceptAlias.objects.filter(concept=evil).update(name=f"Evil{RLO}gnp.exe")
    extra = services.concept_add_alias(concept=evil, name="Bad alias", acting_user=None)
    ConceptAlias.objects.filter(pk=extra.pk).update(name=f"Embed{ZWSP}dings")
    before = AuditEntry.objects.count()

    import_module("kgreview.graph.migrations.0011_names_without_controls").clean_names(apps, None)

    assert Concept.objects.get(pk=clean.pk).name == "Embeddings"
    assert Concept.objects.get(pk=twin.pk).name == f"Embeddings (#{twin.pk})"
    assert Concept.objects.get(pk=evil.pk).name == "Evilgnp.exe"
    canonical = ConceptAlias.objects.get(concept=evil, kind="canonical")
    assert canonical.name == "Evilgnp.exe" and canonical.key == name_key("Evilgnp.exe")
    removed = ConceptAlias.all_objects.get(pk=extra.pk)
    assert removed.removed_at is not None
    assert selectors.concept_by_name(name="embeddings") == clean
    assert AuditEntry.objects.count() - before == 3
    assert all(normal_name(n) == n for n in ConceptAlias.objects.values_list("name", flat=True))


def test_a_claim_on_a_card_isolates_each_name(f):
    """A payload stored before names were cleaned still cannot reorder the claim."""
    proposal = f.edge_proposal(f.concept("Evil"), f.concept("Vectors"), "contrasts_with")
    payload = {**proposal.payload, "source": {"name": f"Evil{RLO}gnp.exe", "match": "new"}}
    type(proposal).objects.filter(pk=proposal.pk).update(payload=payload)
    client = Client()
    client.force_login(f.user(role="reviewer"))
    html = client.get(reverse("review:focus"), {"id": proposal.pk}).content.decode()
    assert f"<bdi>Evil{RLO}gnp.exe</bdi>" in html
    assert "<bdi>Vectors</bdi>" in html
