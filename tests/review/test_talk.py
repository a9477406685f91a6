"""The talk on a card (``review.talk``): comments in threads with a 15-minute edit window
and every text kept, "needs discussion" taking a card out of every focus queue until the
asker or a curator resolves it (or a decision does), and examples of a type chosen from
decided cards. Run on SQLite and on PostgreSQL (the exclusion is an anti-join on a
partial index there)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from kgreview.core.errors import (
    HardDeleteForbidden,
    ImmutableRecord,
    StateConflict,
    ValidationFailed,
)
from kgreview.core.models import AuditEntry
from kgreview.graph import services as graph
from kgreview.graph.models import RelationType
from kgreview.graph.templatetags.markup_tags import markdown
from kgreview.review import talk
from kgreview.review.decide import decisions
from kgreview.review.decide.outcome import NotAllowed
from kgreview.review.models import Comment, CommentRevision, Discussion, Example
from kgreview.review.workspace import selectors
from kgreview.review.workspace.selectors import QueueFilter

pytestmark = pytest.mark.django_db

T0 = timezone.now().replace(microsecond=0) - timedelta(days=1)


@pytest.fixture
def people(f):
    return {
        "rita": f.user("rita", role="reviewer"),
        "rob": f.user("rob", role="reviewer"),
        "cora": f.user("cora", role="curator"),
        "vic": f.user("vic", role="viewer"),
    }


@pytest.fixture
def cards(f):
    doc = f.lesson(slug="talk")
    a, b, c = f.concept("Alpha"), f.concept("Beta"), f.concept("Gamma")
    return [f.edge_proposal(a, b, doc=doc), f.edge_proposal(b, c, doc=doc)]


def served(user_filter: QueueFilter | None = None) -> list[int]:
    """Every card the focus queue serves, walking it from the start."""
    f = user_filter or QueueFilter(status="open")
    out, after = [], None
    while found := selectors.next_in_queue(f, after=after):
        p = found[0]
        out.append(p.pk)
        after = selectors.cursor_of(p, f.sort)
    return out


# --- Comments ------------------------------------------------------------------------------


def test_a_comment_is_kept_with_its_first_revision_and_an_audit_row(people, cards):
    c = talk.comment_post(
        proposal_id=cards[0].pk, body="  Is *this* right?  ", acting_user=people["rita"], now=T0
    )
    assert c.body == "Is *this* right?" and c.created_at == T0
    assert list(c.revisions.values_list("body", flat=True)) == ["Is *this* right?"]
    row = AuditEntry.objects.get(action="comment.post")
    assert row.user == people["rita"] and row.subject_id == str(c.pk)


def test_replies_thread_under_the_comment_they_answer(people, cards):
    p = cards[0].pk
    first = talk.comment_post(proposal_id=p, body="one", acting_user=people["rita"], now=T0)
    second = talk.comment_post(proposal_id=p, body="two", acting_user=people["rob"], now=T0)
    reply = talk.comment_post(
        proposal_id=p, body="re one", parent_id=first.pk, acting_user=people["cora"], now=T0
    )
    deeper = talk.comment_post(
        proposal_id=p, body="re re", parent_id=reply.pk, acting_user=people["rita"], now=T0
    )
    shown = [(c.body, depth) for c, depth in talk.thread(p)]
    assert shown == [("one", 0), ("re one", 1), ("re re", 2), ("two", 0)]
    assert deeper.parent == reply and second.parent is None


def test_a_reply_to_a_comment_of_another_card_is_refused(people, cards):
    other = talk.comment_post(proposal_id=cards[1].pk, body="x", acting_user=people["rita"])
    with pytest.raises(ValidationFailed, match="not on proposal"):
        talk.comment_post(
            proposal_id=cards[0].pk, body="y", parent_id=other.pk, acting_user=people["rita"]
        )
    assert Comment.objects.filter(proposal=cards[0]).count() == 0


def test_a_viewer_reads_but_may_not_write(people, cards):
    with pytest.raises(NotAllowed, match="reviewers and curators write") as refused:
        talk.comment_post(proposal_id=cards[0].pk, body="hi", acting_user=people["vic"])
    assert refused.value.status == 403
    with pytest.raises(NotAllowed):
        talk.discussion_open(proposal_id=cards[0].pk, question="why?", acting_user=people["vic"])
    assert not Comment.objects.exists() and not Discussion.objects.exists()


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("", "empty"),
        ("   \n ", "empty"),
        ("nul \x00 byte", "control characters"),
        ("x" * (1024 * 1024), "at most 10,000 characters"),
    ],
)
def test_bad_comment_text_is_refused_in_words(people, cards, body, words):
    with pytest.raises(ValidationFailed, match=words):
        talk.comment_post(proposal_id=cards[0].pk, body=body, acting_user=people["rita"])
    assert not Comment.objects.exists()


def test_a_script_in_a_comment_is_shown_as_text_never_run(people, cards):
    c = talk.comment_post(
        proposal_id=cards[0].pk,
        body="<script>alert(1)</script> [x](javascript:alert(1)) **ok**",
        acting_user=people["rita"],
    )
    html = str(markdown(c.body))
    assert "<script" not in html and 'href="javascript' not in html
    assert "&lt;script&gt;" in html and "<strong>ok</strong>" in html


def test_its_author_changes_a_comment_within_fifteen_minutes_and_the_old_text_stays(people, cards):
    c = talk.comment_post(proposal_id=cards[0].pk, body="frist", acting_user=people["rita"], now=T0)
    later = T0 + timedelta(minutes=14, seconds=59)
    talk.comment_edit(comment_id=c.pk, body="first", acting_user=people["rita"], now=later)
    c.refresh_from_db()
    assert c.body == "first" and c.edited_at == later
    assert list(c.revisions.values_list("body", flat=True)) == ["frist", "first"]
    row = AuditEntry.objects.get(action="comment.edit")
    assert row.before == {"body": "frist"} and row.after == {"body": "first"}


def test_a_comment_cannot_be_changed_fifteen_minutes_after_it_was_posted(people, cards):
    c = talk.comment_post(proposal_id=cards[0].pk, body="kept", acting_user=people["rita"], now=T0)
    with pytest.raises(StateConflict, match="15 minutes"):
        talk.comment_edit(
            comment_id=c.pk, body="changed", acting_user=people["rita"], now=T0 + talk.EDIT_WINDOW
        )
    c.refresh_from_db()
    assert c.body == "kept" and c.revisions.count() == 1


def test_only_its_author_changes_a_comment(people, cards):
    c = talk.comment_post(proposal_id=cards[0].pk, body="mine", acting_user=people["rita"], now=T0)
    with pytest.raises(NotAllowed, match="Only its author"):
        talk.comment_edit(comment_id=c.pk, body="yours", acting_user=people["cora"], now=T0)
    assert Comment.objects.get(pk=c.pk).body == "mine"


def test_comments_and_their_revisions_are_never_deleted_nor_rewritten(people, cards):
    c = talk.comment_post(proposal_id=cards[0].pk, body="stay", acting_user=people["rita"])
    with pytest.raises(HardDeleteForbidden):
        c.delete()
    with pytest.raises(HardDeleteForbidden):
        Comment.objects.all().delete()
    with pytest.raises(ImmutableRecord):
        CommentRevision.objects.update(body="rewritten")
    assert CommentRevision.objects.get().body == "stay"


# --- Needs discussion -----------------------------------------------------------------------


def test_a_card_in_discussion_leaves_every_focus_queue(people, cards):
    assert set(served()) == {cards[0].pk, cards[1].pk}
    d = talk.discussion_open(
        proposal_id=cards[0].pk, question="Is this a prerequisite?", acting_user=people["rita"]
    )
    assert d.question.body == "Is this a prerequisite?" and d.is_open
    assert served() == [cards[1].pk]
    for f in (
        QueueFilter(),
        QueueFilter(relation="prerequisite"),
        QueueFilter(sort="confidence"),
        QueueFilter(sort="newest"),
        QueueFilter(discussion=True),
    ):
        assert cards[0].pk not in served(f), f
    # Asked for by its id, the card is still there to read, answer and resolve.
    assert selectors.card_proposals().get(pk=cards[0].pk).discussion_open is True


def test_the_queue_lists_the_cards_that_need_discussion(people, cards):
    talk.discussion_open(proposal_id=cards[1].pk, question="?", acting_user=people["rita"])
    listed = list(selectors.queue_queryset(QueueFilter(status="open", discussion=True)))
    assert listed == [cards[1]]
    page = selectors.queue_page(QueueFilter(status="open"))
    assert {p.pk: p.discussion_open for p in page.items} == {cards[0].pk: False, cards[1].pk: True}


def test_a_card_is_asked_about_once_at_a_time_and_only_while_open(people, cards):
    talk.discussion_open(proposal_id=cards[0].pk, question="first?", acting_user=people["rita"])
    with pytest.raises(StateConflict, match="already in discussion"):
        talk.discussion_open(proposal_id=cards[0].pk, question="again?", acting_user=people["rob"])
    decisions.proposal_reject(
        proposal_id=cards[1].pk, reason_code="too_vague", acting_user=people["rob"]
    )
    with pytest.raises(StateConflict, match="already rejected"):
        talk.discussion_open(proposal_id=cards[1].pk, question="?", acting_user=people["rita"])
    assert Discussion.objects.count() == 1


@pytest.mark.parametrize("resolver", ["rita", "cora"])
def test_the_asker_or_a_curator_resolves_and_the_card_returns(people, cards, resolver):
    talk.discussion_open(proposal_id=cards[0].pk, question="?", acting_user=people["rita"])
    d = talk.discussion_resolve(
        proposal_id=cards[0].pk, note="Yes, it is.", acting_user=people[resolver]
    )
    assert not d.is_open and d.resolved_by == people[resolver] and d.resolution == "Yes, it is."
    assert cards[0].pk in served()
    assert AuditEntry.objects.filter(action="discussion.resolve").count() == 1
    # The note is in the thread too, as a reply to the question.
    assert [c.body for c, _ in talk.thread(cards[0].pk)] == ["?", "Yes, it is."]


def test_another_reviewer_may_not_resolve_someone_elses_question(people, cards):
    talk.discussion_open(proposal_id=cards[0].pk, question="?", acting_user=people["rita"])
    with pytest.raises(NotAllowed, match="Only the reviewer who asked, or a curator"):
        talk.discussion_resolve(proposal_id=cards[0].pk, acting_user=people["rob"])
    assert talk.open_discussion_of(cards[0].pk) is not None
    assert cards[0].pk not in served()


def test_resolving_a_card_not_in_discussion_is_refused(people, cards):
    with pytest.raises(StateConflict, match="not in discussion"):
        talk.discussion_resolve(proposal_id=cards[0].pk, acting_user=people["cora"])


def test_the_asker_sees_answers_until_they_read_them(people, cards):
    rita = people["rita"]
    talk.discussion_open(proposal_id=cards[0].pk, question="?", acting_user=rita, now=T0)
    talk.comment_post(proposal_id=cards[0].pk, body="me too", acting_user=rita, now=T0)
    assert talk.unread_answers(rita) == 0 and talk.answers_for(rita) == []
    talk.comment_post(
        proposal_id=cards[0].pk, body="It is.", acting_user=people["cora"], now=T0 + timedelta(1)
    )
    assert talk.unread_answers(rita) == 1
    assert [d.proposal_id for d in talk.answers_for(rita)] == [cards[0].pk]
    talk.discussion_seen(proposal_id=cards[0].pk, acting_user=rita, now=T0 + timedelta(2))
    assert talk.unread_answers(rita) == 0
    assert talk.unread_answers(people["cora"]) == 0


def test_a_decision_on_a_card_in_discussion_resolves_it_with_a_note(people, cards):
    talk.discussion_open(proposal_id=cards[0].pk, question="?", acting_user=people["rita"])
    decisions.proposal_accept(proposal_id=cards[0].pk, acting_user=people["cora"])
    d = Discussion.objects.get()
    assert not d.is_open and d.resolved_by == people["cora"]
    assert "Resolved by its decision: accepted by cora" in d.resolution
    assert talk.unread_answers(people["rita"]) == 1
    assert not selectors.queue_queryset(QueueFilter(status="all", discussion=True)).exists()


def test_a_card_in_discussion_that_a_colleagues_decision_supersedes_resolves_with_a_note(people, f):
    """The team walk left questions open on superseded cards: the edge waited for a new
    concept, a colleague rejected the concept, the edge closed, and its asker waited on a
    card no one could answer. Settling now resolves the question, naming the decision."""
    doc = f.lesson()
    embed = f.concept_proposal("Embed", doc=doc)
    edge = f.edge_proposal(embed, f.concept("Vector search"), doc=doc)
    talk.discussion_open(proposal_id=edge.pk, question="?", acting_user=people["rita"])
    decisions.proposal_reject(
        proposal_id=embed.pk, acting_user=people["cora"], reason_code="too_vague"
    )
    d = Discussion.objects.get(proposal_id=edge.pk)
    assert not d.is_open and d.resolved_by == people["cora"]
    assert "Resolved by its decision: superseded by cora" in d.resolution
    assert talk.unread_answers(people["rita"]) == 1


def test_settling_cards_nobody_asked_about_reads_no_discussions(people, f):
    """Whether a settled card is in discussion comes with its lock: superseding two cards
    that are not costs no statement on the discussions (a decision's query budget), while
    a third that is still has its question resolved."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    doc = f.lesson()
    embed = f.concept_proposal("Embed", doc=doc)
    quiet = [f.edge_proposal(embed, f.concept(f"Vector search {i}"), doc=doc) for i in range(2)]
    with CaptureQueriesContext(connection) as ctx:
        decisions.proposal_reject(
            proposal_id=embed.pk, acting_user=people["cora"], reason_code="too_vague"
        )
    assert all(not p.__class__.objects.get(pk=p.pk).is_open for p in quiet)
    read = [q["sql"] for q in ctx.captured_queries]
    assert not [sql for sql in read if sql.startswith('SELECT "review_discussion"')]
    assert not [sql for sql in read if 'UPDATE "review_discussion"' in sql]

    asked = f.concept_proposal("Index", doc=doc)
    edge = f.edge_proposal(asked, f.concept("Inverted index"), doc=doc)
    talk.discussion_open(proposal_id=edge.pk, question="?", acting_user=people["rita"])
    decisions.proposal_reject(
        proposal_id=asked.pk, acting_user=people["cora"], reason_code="too_vague"
    )
    assert not Discussion.objects.get(proposal_id=edge.pk).is_open


# --- Examples -------------------------------------------------------------------------------


def test_a_curator_makes_decided_cards_examples_accepted_first(people, cards, f):
    cora = people["cora"]
    decisions.proposal_reject(
        proposal_id=cards[0].pk, reason_code="wrong_direction", note="Backwards.", acting_user=cora
    )
    decisions.proposal_accept(proposal_id=cards[1].pk, acting_user=cora)
    rejected = talk.example_add(proposal_id=cards[0].pk, acting_user=cora)
    accepted = talk.example_add(proposal_id=cards[1].pk, acting_user=cora)
    relation = RelationType.objects.get(key="prerequisite")
    assert rejected.relation == relation and rejected.concept_type is None
    shown = talk.examples_of(relation_id=relation.pk)
    assert [e.pk for e in shown] == [accepted.pk, rejected.pk]
    assert (shown[1].reject_code, shown[1].reject_note) == ("wrong_direction", "Backwards.")
    assert AuditEntry.objects.filter(action="example.add").count() == 2
    guide = talk.guide_of(f.edge_proposal(f.concept("X"), f.concept("Y")))
    assert guide["row"] == relation and [e.pk for e in guide["examples"]] == [
        accepted.pk,
        rejected.pk,
    ]


def test_only_decided_cards_become_examples_and_only_by_curators(people, cards):
    with pytest.raises(StateConflict, match="only an accepted or a rejected"):
        talk.example_add(proposal_id=cards[0].pk, acting_user=people["cora"])
    decisions.proposal_accept(proposal_id=cards[0].pk, acting_user=people["rita"])
    with pytest.raises(NotAllowed, match="Only curators"):
        talk.example_add(proposal_id=cards[0].pk, acting_user=people["rita"])
    talk.example_add(proposal_id=cards[0].pk, acting_user=people["cora"])
    with pytest.raises(StateConflict, match="already an example"):
        talk.example_add(proposal_id=cards[0].pk, acting_user=people["cora"])
    assert Example.objects.count() == 1


def test_a_retired_example_stays_but_no_longer_shows(people, cards):
    decisions.proposal_accept(proposal_id=cards[0].pk, acting_user=people["cora"])
    e = talk.example_add(proposal_id=cards[0].pk, acting_user=people["cora"])
    with pytest.raises(NotAllowed):
        talk.example_retire(example_id=e.pk, acting_user=people["rita"])
    talk.example_retire(example_id=e.pk, acting_user=people["cora"])
    assert talk.examples_of(relation_id=e.relation_id) == [] and talk.active_examples() == []
    with pytest.raises(StateConflict, match="already retired"):
        talk.example_retire(example_id=e.pk, acting_user=people["cora"])
    with pytest.raises(HardDeleteForbidden):
        Example.objects.get(pk=e.pk).delete()
    # Retired, it may be chosen again.
    assert talk.example_add(proposal_id=cards[0].pk, acting_user=people["cora"]).pk != e.pk


def test_a_concept_type_guides_the_proposals_that_give_it(people, f):
    graph.concept_type_create(key="tool", label="Tool", acting_user=None)
    p = f.concept_proposal("Hammer")
    p.payload = {**p.payload, "type_key": "tool"}
    from kgreview.review.kinds import kind_of

    assert kind_of(p).guided_by(p) == ("concept_type", "tool")
    assert talk.guide_of(p)["row"].key == "tool"


def test_undoing_the_decision_leaves_the_discussion_it_resolved_resolved(people, cards):
    from kgreview.review.decide.undo import decisions_undo

    talk.discussion_open(proposal_id=cards[0].pk, question="?", acting_user=people["rita"])
    out = decisions.proposal_reject(
        proposal_id=cards[0].pk, reason_code="too_vague", acting_user=people["cora"]
    )
    decisions_undo(acting_user=people["cora"], batch=out.batch)
    assert talk.open_discussion_of(cards[0].pk) is None
    assert cards[0].pk in served()


def test_a_bulk_decision_closes_the_discussion_with_its_card(people, cards):
    from kgreview.review.decide.bulk import proposals_bulk_decide

    talk.discussion_open(proposal_id=cards[0].pk, question="?", acting_user=people["rita"])
    proposals_bulk_decide(
        acting_user=people["cora"],
        proposal_ids=[cards[0].pk, cards[1].pk],
        action="reject",
        reason_code="too_vague",
    )
    assert talk.open_discussion_of(cards[0].pk) is None
    assert not talk.open_discussions().exists()
    assert not selectors.queue_queryset(QueueFilter(status="open", discussion=True)).exists()
