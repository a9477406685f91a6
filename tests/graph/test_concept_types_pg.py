"""The concept vocabulary's locks, on PostgreSQL with real threads and transactions: a
type being retired and a concept being given it wait for each other, and two hierarchy
changes that would close a loop between them never both pass."""

from __future__ import annotations

import pytest

from kgreview.core.errors import Busy, CycleDetected, InactiveType
from kgreview.graph import services
from kgreview.graph.models import Concept, ConceptType, ConceptTypeChange
from tests.races import race

pytestmark = pytest.mark.usefixtures("reference_data")

ROUNDS = 8


def test_a_concept_is_never_given_a_type_after_it_was_retired(on_postgres, f):
    """Either the concept got the type first (and keeps it), or the change is refused."""
    for n in range(ROUNDS):
        concept = f.concept(f"Setting {n}")
        kind = services.concept_type_create(key=f"kind_{n}", label=f"Kind {n}", acting_user=None)
        results = race(
            lambda kind=kind: services.concept_type_retire(concept_type=kind, acting_user=None),
            lambda c=concept, kind=kind: services.concept_set_type(
                concept=c, type_key=kind.key, acting_user=None
            ),
        )
        assert isinstance(results[0], ConceptType), results[0]
        assert isinstance(results[1], Concept | InactiveType), results[1]
        retired_at = ConceptType.objects.get(pk=kind.pk).retired_at
        assert not ConceptTypeChange.objects.filter(type=kind, changed_at__gt=retired_at).exists()


def test_two_parent_changes_closing_a_loop_never_both_pass(on_postgres):
    """a under b and b under a at once: one wins, the other is refused in words."""
    for n in range(ROUNDS):
        a = services.concept_type_create(key=f"a_{n}", label="A", acting_user=None)
        b = services.concept_type_create(key=f"b_{n}", label="B", acting_user=None)
        results = race(
            lambda a=a, b=b: services.concept_type_describe(
                concept_type=a, parent_key=b.key, acting_user=None
            ),
            lambda a=a, b=b: services.concept_type_describe(
                concept_type=b, parent_key=a.key, acting_user=None
            ),
        )
        won = [r for r in results if isinstance(r, ConceptType)]
        lost = [r for r in results if not isinstance(r, ConceptType)]
        assert len(won) == 1 and all(isinstance(r, CycleDetected | Busy) for r in lost), results
        parents = dict(
            ConceptType.objects.filter(pk__in=[a.pk, b.pk]).values_list("key", "parent__key")
        )
        assert None in parents.values()
