"""An edge's provenance moved out of graph into review (issue 26): review's 0017 gives
every edge that named a proposal or a decision its ``EdgeProvenance`` row, graph's 0015
drops the three columns, and both carry every value back when reversed, on either
engine. The tables' no-delete triggers are all there after the move."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection

from kgreview.review.decide import decisions, mend
from kgreview.review.models import EdgeProvenance

COLUMNS = "proposal_id, decision_id, invalidation_decision_id"


def _columns() -> dict[int, tuple]:
    """Each edge's three columns, for the edges that name anything."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id, {COLUMNS} FROM graph_edge")
        return {row[0]: tuple(row[1:]) for row in cursor.fetchall() if any(row[1:])}


def _rows() -> dict[int, tuple]:
    return {
        p.edge_id: (p.proposal_id, p.decision_id, p.invalidation_decision_id)
        for p in EdgeProvenance.objects.all()
    }


def _triggers(table: str) -> set[str]:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(
                "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = %s", [table]
            )
        else:
            cursor.execute(
                "SELECT tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
                "WHERE c.relname = %s AND NOT t.tgisinternal",
                [table],
            )
        return {name for (name,) in cursor.fetchall()}


def _functions_naming_the_old_columns() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT proname FROM pg_proc WHERE prosrc LIKE %s OR prosrc LIKE %s",
            ["%invalidation_decision%", "%graph_edge%decision_id%"],
        )
        return [name for (name,) in cursor.fetchall()]


@pytest.mark.django_db(transaction=True)
def test_the_migration_carries_every_edges_provenance_over_and_back(reference_data, f):
    reviewer = f.user("rita", role="reviewer")
    p = f.edge_proposal(f.concept("A"), f.concept("B"))
    accepted = decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer, version=1)
    (made,) = accepted.edges
    seeded = f.edge(f.concept("C"), f.concept("D"))
    retired = f.edge(f.concept("E"), f.concept("F"))
    out = mend.edge_retire_by_hand(acting_user=reviewer, edge_id=retired.pk, note="Wrong.")
    untouched = f.edge(f.concept("G"), f.concept("H"))
    now = {
        made.pk: (p.pk, accepted.decision.pk, None),
        retired.pk: (None, None, out.decision.pk),
    }
    assert _rows() == now

    call_command("migrate", "review", "0016", verbosity=0)
    assert "review_edgeprovenance" not in connection.introspection.table_names()
    assert _columns() == now
    # An edge written at the old state, naming its proposal and decisions in its columns.
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE graph_edge SET proposal_id = %s, decision_id = %s, "
            "invalidation_decision_id = %s WHERE id = %s",
            [p.pk, accepted.decision.pk, out.decision.pk, seeded.pk],
        )
    before = {**now, seeded.pk: (p.pk, accepted.decision.pk, out.decision.pk)}

    call_command("migrate", verbosity=0)
    assert _rows() == before and untouched.pk not in _rows()
    assert {"proposal", "decision", "invalidation_decision"}.isdisjoint(
        c.name
        for c in connection.introspection.get_table_description(connection.cursor(), "graph_edge")
    )
    assert {"graph_edge_no_delete"} <= _triggers("graph_edge")
    assert {"review_edgeprovenance_no_delete"} <= _triggers("review_edgeprovenance")
    if connection.vendor == "postgresql":
        assert {"graph_edge_no_truncate"} <= _triggers("graph_edge")
        assert {"review_edgeprovenance_no_truncate"} <= _triggers("review_edgeprovenance")
        assert _functions_naming_the_old_columns() == []

    call_command("migrate", "review", "0016", verbosity=0)
    assert _columns() == before
    call_command("migrate", verbosity=0)
    assert _rows() == before
