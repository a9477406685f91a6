"""graph 0014: names ending in an acronym's capital S get their own key, and the
processes holding names in memory are told to rebuild."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from kgreview.graph.models import ConceptAlias, NameChange

pytestmark = pytest.mark.django_db

rekey = importlib.import_module("kgreview.graph.migrations.0014_acronym_keys").rekey


def test_an_acronym_keyed_as_a_plural_is_keyed_again_and_the_journal_says_so(f):
    """ "HTTPS" stored under "http" (the old key) moves to "https"; others stay."""
    f.concept("HTTPS")
    f.concept("Vector databases")
    ConceptAlias.objects.filter(name="HTTPS").update(key="http")
    before = NameChange.objects.count()
    rekey(apps, None)
    assert ConceptAlias.objects.get(name="HTTPS").key == "https"
    assert ConceptAlias.objects.get(name="Vector databases").key == "vector database"
    wide = NameChange.objects.order_by("pk")[before:]
    assert [(c.concept_id, c.proposal_id) for c in wide] == [(None, None)]


def test_nothing_to_rekey_writes_no_journal_row(f):
    """With every key right already, the migration changes nothing."""
    f.concept("QoS")
    before = NameChange.objects.count()
    rekey(apps, None)
    assert NameChange.objects.count() == before
