"""Nothing that carries history can be hard-deleted, in code, in the admin or in SQL."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from kgreview.agents.models import AgentRun
from kgreview.core.errors import HardDeleteForbidden, ImmutableRecord
from kgreview.graph.models import Concept, Edge, RelationType, Source, SourceRevision
from kgreview.review.models import Decision, Proposal

pytestmark = pytest.mark.django_db


@pytest.fixture
def rows(f):
    a, b = f.concept("Alpha"), f.concept("Beta")
    src = f.source()
    edge = f.edge(a, b)
    proposal = Proposal.objects.create(
        kind="add_concept", payload={"name": "Gamma"}, confidence=0.8, dedup_key="add:gamma"
    )
    decision = Decision.objects.create(proposal=proposal, action="hold", proposal_version=1)
    run = AgentRun.objects.create(agent="construct")
    return {
        Edge: edge,
        Concept: a,
        Source: src,
        SourceRevision: src.current_revision,
        Proposal: proposal,
        Decision: decision,
        RelationType: f.relation("related"),
        AgentRun: run,
    }


PROTECTED = [Edge, Concept, Source, SourceRevision, Proposal, Decision, RelationType, AgentRun]


@pytest.mark.parametrize("model", PROTECTED, ids=lambda m: m.__name__)
def test_instance_delete_raises_and_keeps_the_row(rows, model):
    """``obj.delete()`` raises a domain error naming what to do instead."""
    obj = rows[model]
    with pytest.raises(HardDeleteForbidden) as exc:
        obj.delete()
    assert "never deleted" in str(exc.value)
    assert model.objects.filter(pk=obj.pk).exists()


@pytest.mark.parametrize("model", PROTECTED, ids=lambda m: m.__name__)
def test_queryset_delete_raises(rows, model):
    """``Model.objects.filter(...).delete()`` raises too."""
    with pytest.raises(HardDeleteForbidden):
        model.objects.filter(pk=rows[model].pk).delete()
    assert model.objects.filter(pk=rows[model].pk).exists()


def test_edge_delete_message_says_invalidate(rows):
    """The error tells people the alternative."""
    with pytest.raises(HardDeleteForbidden, match="invalidate"):
        rows[Edge].delete()


@pytest.mark.parametrize("model", [Decision, SourceRevision], ids=lambda m: m.__name__)
def test_append_only_rows_cannot_be_changed(rows, model):
    """Decisions and revisions are written once: save() of an existing row and update() raise."""
    obj = rows[model]
    with pytest.raises(ImmutableRecord):
        obj.save()
    with pytest.raises(ImmutableRecord):
        model.objects.filter(pk=obj.pk).update(created_at=obj.created_at)


@pytest.mark.parametrize(
    "table",
    [
        "graph_edge",
        "graph_concept",
        "graph_source",
        "graph_sourcerevision",
        "review_proposal",
        "review_decision",
        "agents_agentrun",
        "graph_relationtype",
    ],
)
def test_a_trigger_refuses_raw_sql_delete(rows, table):
    """On PostgreSQL and SQLite even raw SQL cannot delete history rows."""
    with (
        pytest.raises(DatabaseError, match="never deletes"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(f"DELETE FROM {table}")


def test_a_trigger_refuses_raw_update_of_revision_text(rows):
    """A revision's text cannot be rewritten behind the ORM's back."""
    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("UPDATE graph_sourcerevision SET text = 'rewritten'")
