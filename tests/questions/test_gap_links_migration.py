"""The link from a question to its gap proposals moved out of review (issue 26): the
migration carries every link over and back, on either engine."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection

from kgreview.questions.models import GapProposal
from kgreview.review.models import Proposal


def _column_links() -> dict[int, int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, competency_question_id FROM review_proposal "
            "WHERE competency_question_id IS NOT NULL"
        )
        return dict(cursor.fetchall())


@pytest.mark.django_db(transaction=True)
def test_the_migration_carries_every_link_over_and_back(reference_data, f, ask):
    f.concept("A"), f.concept("B")
    first, second = ask("What is A?", "concepts", ["A"]), ask("What is B?", "concepts", ["B"])
    a, b, c = (f.concept_proposal(name) for name in ("Ca", "Cb", "Cc"))
    GapProposal.objects.create(question=first, proposal=a)
    GapProposal.objects.create(question=first, proposal=b)
    GapProposal.objects.create(question=second, proposal=c)
    unlinked = f.concept_proposal("Cd")

    call_command("migrate", "questions", "0002", verbosity=0)
    assert _column_links() == {a.pk: first.pk, b.pk: first.pk, c.pk: second.pk}
    assert "questions_gapproposal" not in connection.introspection.table_names()

    call_command("migrate", verbosity=0)
    assert set(GapProposal.objects.values_list("proposal_id", "question_id")) == {
        (a.pk, first.pk),
        (b.pk, first.pk),
        (c.pk, second.pk),
    }
    assert set(Proposal.objects.filter(competency_question=first)) == {a, b}
    assert not Proposal.objects.filter(pk=unlinked.pk, competency_question__isnull=False)
