"""Attribute values' locks, on PostgreSQL with real threads and transactions: two values
set at once leave one current value and the other superseded (never two current, never a
lost row), and an attribute being retired and a value being set wait for each other."""

from __future__ import annotations

import pytest

from kgreview.core.errors import StateConflict
from kgreview.graph import services
from kgreview.graph.models import Attribute, AttributeValue
from tests.races import race

pytestmark = pytest.mark.usefixtures("reference_data")

ROUNDS = 8


@pytest.fixture
def typed(f):
    services.concept_type_create(key="setting", label="Setting", acting_user=None)

    def make(n: int):
        concept = f.concept(f"setting_{n}")
        services.concept_set_type(concept=concept, type_key="setting", acting_user=None)
        return concept

    return make


def test_two_values_set_at_once_leave_one_current_and_one_superseded(on_postgres, typed):
    attribute = services.attribute_create(
        type_key="setting",
        key="default_value",
        label="Default",
        datatype="string",
        acting_user=None,
    )
    for n in range(ROUNDS):
        concept = typed(n)
        results = race(
            lambda c=concept: services.attribute_value_set(
                concept=c, attribute=attribute, value="4MB", acting_user=None
            ),
            lambda c=concept: services.attribute_value_set(
                concept=c, attribute=attribute, value="8MB", acting_user=None
            ),
        )
        assert all(isinstance(r, AttributeValue) for r in results), results
        rows = AttributeValue.objects.filter(concept=concept).order_by("recorded_at", "pk")
        assert [r.status for r in rows] == ["superseded", "active"]
        assert rows[0].invalid_at == rows[1].recorded_at


def test_a_value_is_never_set_after_its_attribute_was_retired(on_postgres, typed):
    for n in range(ROUNDS):
        concept = typed(n)
        attribute = services.attribute_create(
            type_key="setting",
            key=f"attr_{n}",
            label="Attr",
            datatype="string",
            acting_user=None,
        )
        results = race(
            lambda a=attribute: services.attribute_retire(attribute=a, acting_user=None),
            lambda c=concept, a=attribute: services.attribute_value_set(
                concept=c, attribute=a, value="x", acting_user=None
            ),
        )
        assert isinstance(results[0], Attribute), results[0]
        assert isinstance(results[1], AttributeValue | StateConflict), results[1]
        retired_at = Attribute.objects.get(pk=attribute.pk).retired_at
        assert not AttributeValue.objects.filter(
            attribute=attribute, recorded_at__gt=retired_at
        ).exists()
