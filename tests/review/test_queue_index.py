"""The Queue's indexes (issue 15): flags as rows, the tally behind the facet counts.

Each service path that changes a proposal's status or flags must leave the flag rows and
the tally equal to a fresh recount of the proposals; the counts the Queue shows after a
decision must equal counting afresh; a flag filter answers from the flag rows.
"""

from __future__ import annotations

from collections import Counter

import pytest
from django.core.cache import cache
from django.db import connection
from django.http import QueryDict
from django.urls import reverse

from kgreview.review import queue_index
from kgreview.review.decide import bulk, decisions, mend, undo
from kgreview.review.decide.decisions import EdgeEdits
from kgreview.review.models import OPEN_STATUSES, Proposal, ProposalFlag, QueueTally
from kgreview.review.services import flags_text, proposal_flag_conflict
from kgreview.review.workspace import counts as count_reads
from kgreview.review.workspace import selectors
from tests.review.workspace import client_for

pytestmark = pytest.mark.django_db

CHECKED_FILTERS = [
    "",
    "status=open",
    "status=all",
    "status=held",
    "status=accepted",
    "status=rejected",
    "status=superseded",
    "kind=add_edge",
    "kind=add_concept&status=all",
    "relation=prerequisite",
    "status=open&flag=contradiction",
    "status=all&flag=new_concept",
    "flag=below_gate&status=held",
    "flag=contradiction&flag=new_concept&status=all",
]


def fresh_counts(f: selectors.QueueFilter) -> dict:
    """The counts as the Queue used to make them: every proposal read and counted, each
    facet given the other filters (the reference the tally must equal)."""
    rows = list(Proposal.objects.values_list("status", "kind", "relation_key", "flags"))

    def ok(row, ignore: str) -> bool:
        status, kind, relation, flags = row
        status_ok = (
            f.status == "all"
            or (f.status == "open" and status in OPEN_STATUSES)
            or status == f.status
        )
        return (
            (ignore == "status" or status_ok)
            and (ignore == "kind" or not f.kinds or kind in f.kinds)
            and (ignore == "relation" or not f.relation or relation == f.relation)
            and (ignore == "flags" or all(x in flags for x in f.flags))
        )

    status = Counter(r[0] for r in rows if ok(r, "status"))
    status["open"] = status["pending"] + status["held"]
    status["all"] = sum(v for k, v in status.items() if k != "open")
    return {
        "status": {k: v for k, v in status.items() if v or k in ("open", "all")},
        "kind": dict(Counter(r[1] for r in rows if ok(r, "kind"))),
        "relation": dict(Counter(r[2] for r in rows if r[1] == "add_edge" and ok(r, "relation"))),
        "flags": {x: sum(1 for r in rows if x in r[3] and ok(r, "flags")) for x in selectors.FLAGS},
        "total": status[f.status],
    }


def parse(q: str) -> selectors.QueueFilter:
    return selectors.QueueFilter.from_query(QueryDict(q))[0]


def assert_index_true() -> None:
    """Flag rows and tally as a recount of the proposals would make them; and every
    checked filter's counts equal to counting afresh."""
    proposals = list(Proposal.objects.values_list("pk", "status", "kind", "relation_key", "flags"))
    expected_flags = {
        (pk, flag, status) for pk, status, _k, _r, flags in proposals for flag in flags
    }
    assert set(ProposalFlag.objects.values_list("proposal_id", "flag", "status")) == expected_flags
    assert ProposalFlag.objects.count() == len(expected_flags)
    expected = Counter(
        (status, kind, relation, flags_text(flags))
        for _pk, status, kind, relation, flags in proposals
    )
    tallied = Counter()
    for row in QueueTally.objects.values_list("status", "kind", "relation_key", "flags_text", "n"):
        tallied[row[:4]] += row[4]
    assert +tallied == expected
    for q in CHECKED_FILTERS:
        f = parse(q)
        counts = count_reads.queue_counts_cached(f)
        assert not counts["estimated"]
        assert {k: counts[k] for k in ("status", "kind", "relation", "flags", "total")} == (
            fresh_counts(f)
        ), q


@pytest.fixture
def queue(f):
    """Concepts, a concept proposal with a twin, flagged and held edge proposals."""
    doc = f.lesson(slug="qi")
    emb, vs, tok = f.concept("Embeddings"), f.concept("Vector search"), f.concept("Tokenization")
    rag = f.concept_proposal("Retrieval-augmented generation", doc=doc)
    return {
        "emb": emb,
        "vs": vs,
        "tok": tok,
        "rag": rag,
        "needs_rag": f.edge_proposal(vs, rag, "builds_on", doc=doc),
        "plain": f.edge_proposal(emb, vs, doc=doc),
        "contra": f.edge_proposal(tok, vs, "related", doc=doc, flags=["contradiction"]),
        "held": f.edge_proposal(
            tok, emb, doc=doc, confidence=0.3, quote="Unlike keyword search, dense retrieval"
        ),
    }


def test_queued_proposals_get_flag_rows_and_tally_rows(queue):
    """Queueing (one, or many at once) writes the flag rows and the tally with it."""
    held = queue["held"]
    assert held.status == "held"
    assert set(ProposalFlag.objects.filter(proposal=held).values_list("flag", flat=True)) == {
        "below_gate"
    }
    assert_index_true()


def test_accepting_an_edge_with_the_concept_it_needs_keeps_flags_and_tally_true(queue, reviewer):
    decisions.proposal_accept(proposal_id=queue["needs_rag"].pk, acting_user=reviewer)
    assert Proposal.objects.get(pk=queue["rag"].pk).status == "accepted"
    assert_index_true()


def test_rejecting_keeps_flags_and_tally_true(queue, reviewer):
    decisions.proposal_reject(
        proposal_id=queue["contra"].pk, acting_user=reviewer, reason_code="too_vague"
    )
    assert ProposalFlag.objects.get(proposal=queue["contra"]).status == "rejected"
    assert_index_true()


def test_edit_then_accept_changing_the_relation_keeps_the_tally_true(queue, reviewer):
    """The relation moves in the tally: the old key loses one, the new gains one."""
    decisions.proposal_edit_accept(
        proposal_id=queue["plain"].pk,
        acting_user=reviewer,
        edits=EdgeEdits(relation="builds_on", confidence=0.75),
    )
    assert Proposal.objects.get(pk=queue["plain"].pk).relation_key == "builds_on"
    assert_index_true()


def test_accepting_a_held_proposal_and_undoing_it_holds_it_again(queue, reviewer):
    """Undo re-opens: held again below the gate, its flag rows back to held."""
    held = queue["held"]
    out = decisions.proposal_accept(proposal_id=held.pk, acting_user=reviewer)
    assert_index_true()
    undo.decisions_undo(acting_user=reviewer, batch=out.batch)
    assert Proposal.objects.get(pk=held.pk).status == "held"
    assert ProposalFlag.objects.get(proposal=held).status == "held"
    assert_index_true()


def test_undoing_a_rejection_reopens_it_in_flags_and_tally(queue, reviewer):
    out = decisions.proposal_reject(
        proposal_id=queue["plain"].pk, acting_user=reviewer, reason_code="too_vague"
    )
    undo.decisions_undo(acting_user=reviewer, batch=out.batch)
    assert Proposal.objects.get(pk=queue["plain"].pk).status == "pending"
    assert_index_true()


def test_bulk_accept_and_its_undo_keep_flags_and_tally_true(queue, reviewer):
    ids = [queue["plain"].pk, queue["contra"].pk, queue["needs_rag"].pk]
    result = bulk.proposals_bulk_decide(acting_user=reviewer, proposal_ids=ids, action="accept")
    assert sorted(result.done) == sorted(ids)
    assert_index_true()
    undo.decisions_undo(acting_user=reviewer, batch=result.batch)
    assert_index_true()


def test_bulk_reject_keeps_flags_and_tally_true(queue, reviewer):
    ids = [queue["plain"].pk, queue["held"].pk]
    bulk.proposals_bulk_decide(
        acting_user=reviewer, proposal_ids=ids, action="reject", reason_code="too_vague"
    )
    assert_index_true()


def test_a_superseded_twin_moves_in_flags_and_tally(f, queue, curator):
    """A concept renamed by hand to a pending concept proposal's name supersedes it and
    re-points the edges that waited for it."""
    rag = queue["rag"]
    mend.concept_update_by_hand(
        acting_user=curator, concept_id=queue["tok"].pk, name="Retrieval-augmented generation"
    )
    assert Proposal.objects.get(pk=rag.pk).status == "superseded"
    assert ProposalFlag.objects.get(proposal=rag).status == "superseded"
    assert_index_true()


def test_flagging_a_contradiction_adds_the_flag_row_and_moves_the_tally(queue):
    plain = queue["plain"]
    proposal_flag_conflict(proposal_id=plain.pk, other={"edge_id": 1})
    assert ProposalFlag.objects.filter(proposal=plain, flag="contradiction").exists()
    f = parse("status=open&flag=contradiction")
    assert plain.pk in {p.pk for p in selectors.queue_page(f).items}
    assert_index_true()


def test_rows_written_past_the_services_are_indexed_too(queue):
    """The triggers see every write: a queryset update, a bulk insert."""
    plain = queue["plain"]
    Proposal.objects.filter(pk=plain.pk).update(
        flags=["previously_rejected"], flags_text="|previously_rejected|", status="held"
    )
    twin = Proposal.objects.get(pk=plain.pk)
    twin.pk = None
    twin.status, twin.dedup_key = "rejected", "written-in-bulk"
    twin.decided_at = twin.created_at
    Proposal.objects.bulk_create([twin])
    assert ProposalFlag.objects.filter(flag="previously_rejected").count() == 2
    assert_index_true()


def test_one_update_of_many_rows_moving_differently_keeps_flags_and_tally_true(queue):
    """On PostgreSQL the update trigger runs once for the statement, over every row it
    changed: rows whose status, flags, priority or nothing changed, in one UPDATE."""
    from django.db.models import Case, F, JSONField, Value, When

    ids = [p.pk for p in queue.values() if isinstance(p, Proposal)]
    Proposal.objects.filter(pk__in=ids).update(
        status=Case(
            When(pk=queue["plain"].pk, then=Value("held")),
            When(pk=queue["held"].pk, then=Value("pending")),
            default=F("status"),
        ),
        flags=Case(
            When(pk=queue["contra"].pk, then=Value(["low_confidence"], output_field=JSONField())),
            default=F("flags"),
        ),
        flags_text=Case(
            When(pk=queue["contra"].pk, then=Value("|low_confidence|")),
            default=F("flags_text"),
        ),
        priority=Case(When(pk=queue["needs_rag"].pk, then=Value(7)), default=F("priority")),
    )
    assert not ProposalFlag.objects.filter(proposal=queue["contra"], flag="contradiction").exists()
    assert ProposalFlag.objects.filter(proposal=queue["contra"], flag="low_confidence").exists()
    assert_index_true()
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT tgtype & 1 FROM pg_trigger WHERE tgname = 'review_proposal_queue_update'"
            )
            assert cursor.fetchone() == (0,)  # bit 0 unset: once per statement
    before = list(ProposalFlag.objects.order_by("pk").values_list("pk", "status", "priority"))
    Proposal.objects.filter(pk__in=ids).update(reason="Nothing the queue reads.")
    assert list(ProposalFlag.objects.order_by("pk").values_list("pk", "status", "priority")) == (
        before
    )
    assert_index_true()


def test_the_flag_filter_returns_exactly_the_flagged_proposals_in_each_status(queue, reviewer):
    decisions.proposal_reject(
        proposal_id=queue["contra"].pk, acting_user=reviewer, reason_code="too_vague"
    )
    for status in ("pending", "open", "rejected", "all"):
        for flag in selectors.FLAGS:
            f = parse(f"status={status}&flag={flag}")
            got = {p.pk for p in selectors.queue_page(f, size=100).items}
            want = {
                p.pk
                for p in Proposal.objects.all()
                if flag in p.flags
                and (
                    status == "all"
                    or p.status == status
                    or (status == "open" and p.status in OPEN_STATUSES)
                )
            }
            assert got == want, (status, flag)


def test_counts_after_each_decision_equal_a_fresh_recount_and_nothing_is_emptied(queue, reviewer):
    """The tally moves by the decision's own rows: the counts are live, never recounted."""
    f = parse("")
    before = count_reads.queue_counts_cached(f)
    decisions.proposal_accept(proposal_id=queue["plain"].pk, acting_user=reviewer)
    after = count_reads.queue_counts_cached(f)
    assert after["status"]["pending"] == before["status"]["pending"] - 1
    assert after["status"]["accepted"] == before["status"].get("accepted", 0) + 1
    assert_index_true()


def test_compacting_the_tally_keeps_every_count(queue, reviewer):
    decisions.proposal_reject(
        proposal_id=queue["plain"].pk, acting_user=reviewer, reason_code="too_vague"
    )
    rows_before = QueueTally.objects.count()
    queue_index.compact()
    assert QueueTally.objects.count() < rows_before
    assert not QueueTally.objects.filter(n=0).exists()
    assert_index_true()


def test_rebuilding_the_index_from_the_proposals_gives_the_same_rows(queue, reviewer):
    """The migration's backfill (``rebuild``) and the triggers agree."""
    decisions.proposal_accept(proposal_id=queue["needs_rag"].pk, acting_user=reviewer)
    flags_before = set(ProposalFlag.objects.values_list("proposal_id", "flag", "status"))
    queue_index.rebuild()
    assert set(ProposalFlag.objects.values_list("proposal_id", "flag", "status")) == flags_before
    assert_index_true()


def test_the_sqlite_triggers_come_back_after_migrate(queue):
    """SQLite drops a table's triggers when a migration rebuilds it; migrate restores them."""
    if connection.vendor != "sqlite":
        pytest.skip("SQLite only")
    queue_index.remove_triggers(connection)
    queue_index.install_triggers_after_migrate(sender=None)
    proposal_flag_conflict(proposal_id=queue["plain"].pk, other={"edge_id": 2})
    assert_index_true()


def test_counts_for_a_source_filter_are_exact_and_kept_per_filter(f, queue, reviewer):
    """A filter the tally cannot answer is counted from its proposals and kept for the
    filter; a decision does not empty it."""
    cache.clear()
    f_doc = parse("source=qi&status=all")
    counts = count_reads.queue_counts_cached(f_doc)
    assert not counts["estimated"]
    assert counts["total"] == Proposal.objects.filter(document__slug="qi").count()
    decisions.proposal_accept(proposal_id=queue["plain"].pk, acting_user=reviewer)
    assert count_reads.queue_counts_cached(f_doc) == counts
    assert count_reads.queue_counts(f_doc)["status"]["accepted"] >= 1


def test_counts_above_the_exact_limit_are_estimates_and_say_so(f, queue, monkeypatch):
    """Above ``COUNT_EXACT_UP_TO`` PostgreSQL estimates from a sample; the page says so."""
    if connection.vendor != "postgresql":
        pytest.skip("the sample is PostgreSQL's TABLESAMPLE")
    monkeypatch.setattr(count_reads, "COUNT_EXACT_UP_TO", 2)
    monkeypatch.setattr(count_reads, "COUNT_SAMPLE_ROWS", 10**9)  # the whole table
    cache.clear()
    counts = count_reads.queue_counts_cached(parse("cmin=0.1&status=all"))
    assert counts["estimated"]
    assert counts["total"] == Proposal.objects.filter(confidence__gte=0.1).count()
    page = client_for(f, "reviewer").get(reverse("review:queue-counts") + "?cmin=0.1")
    html = page.content.decode()
    assert "estimates from a sample" in html and "≈" in html and "about" in html


def test_bad_counts_parameters_never_give_a_500(f, queue):
    client = client_for(f, "reviewer")
    for q in ("flag=%00", "flag=nope&cmin=x", "run=-1&source=%F0", "cmax=2&cmin=-1"):
        assert client.get(reverse("review:queue-counts") + "?" + q).status_code < 500
        assert client.get(reverse("review:queue") + "?" + q).status_code < 500


@pytest.mark.parametrize("sort", ["priority", "confidence", "newest"])
def test_a_flag_filter_pages_by_keyset_through_every_flagged_proposal_in_order(f, sort):
    """Read off the flag rows' index: every flagged proposal once, in the queue's order,
    forwards and back."""
    doc = f.lesson(slug="keyset")
    ends = [f.concept(f"K{i}") for i in range(8)]
    for i in range(7):
        f.edge_proposal(
            ends[i],
            ends[i + 1],
            doc=doc,
            flags=["contradiction"] if i % 3 else [],
            confidence=0.7 + i / 100,
        )
    filt = parse(f"status=open&flag=contradiction&sort={sort}")
    seen, cursor = [], None
    while True:
        page = selectors.queue_page(filt, after=cursor, size=2)
        seen += page.items
        if not page.next_cursor:
            break
        cursor = page.next_cursor
    want = Proposal.objects.filter(flags_text__contains="|contradiction|").order_by(
        *selectors._order(sort)
    )
    assert [p.pk for p in seen] == [p.pk for p in want]
    back = selectors.queue_page(filt, before=selectors.cursor_of(seen[-1], sort), size=2)
    assert [p.pk for p in back.items] == [p.pk for p in seen[-3:-1]]


def test_a_flag_filter_reads_the_flag_rows_never_a_like_over_proposals():
    f = parse("status=open&flag=contradiction&flag=new_concept&relation=related")
    sql = str(selectors.queue_queryset(f).order_by(*selectors.queue_order(f)).query)
    where = sql.split(" WHERE ", 1)[1]
    assert " LIKE " not in where.upper() and "flags_text" not in where
    assert sql.count('"review_proposalflag"') >= 2 and "U0" in where


@pytest.mark.django_db(transaction=True)
def test_the_migration_fills_the_index_from_existing_proposals_and_reverses(f, reference_data):
    """Migrating back to 0011 removes the tables and triggers; forward again backfills
    from the proposals already there, on either engine."""
    from django.core.management import call_command

    f.edge_proposal(f.concept("M1"), f.concept("M2"), flags=["contradiction"])
    f.concept_proposal("Migrated concept")
    call_command("migrate", "review", "0011", verbosity=0)
    assert "review_queuetally" not in connection.introspection.table_names()
    # Every app forward again: later migrations of other apps (graph's 0015 and 0016)
    # depend on review's and were taken back with it.
    call_command("migrate", verbosity=0)
    assert_index_true()
