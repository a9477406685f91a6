"""Talk on a review card: comments, "needs discussion", and examples of a type.

**Comments.** Anyone who can view a proposal reads its comments; reviewers and curators
write them (a viewer is refused with ``NotAllowed``, a 403 in words). A comment is
Markdown, rendered sanitised (``kgreview.core.markup``), and may answer another comment
of the same proposal (a thread). Its author may change it for ``EDIT_WINDOW`` after
posting it; each text it had is kept as a ``CommentRevision``. Nothing is deleted.

**Needs discussion.** A reviewer unsure about a card asks a question
(``discussion_open``): the question is a comment, and while the discussion is open the
card is served by no focus queue (``workspace.selectors.next_in_queue``). Anyone who can
write comments answers in its thread; the asker or a curator resolves it
(``discussion_resolve``), and the card goes back to the queue. A decision on a card in
discussion (a curator may still decide it from the Queue or its card) resolves the
discussion itself, with a note naming the decision (``discussions_closed_by``). A bulk
decision or a settlement of the queue writes no note: a discussion counts as open only
while its proposal is open, so it leaves every list all the same.

**Examples.** A curator picks a decided proposal (accepted or rejected) as an example of
the relation type or concept type its kind names (``Kind.guided_by``); the card of every
proposal of that type shows them under the type's guideline. An example is retired,
never deleted.

Every change is one service call in one transaction, taking ``acting_user`` and writing
one curation log row (``kgreview.core.audit``), except the asker's "read" mark
(``discussion_seen``), which records nothing anyone decided.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from construction.text import without_controls
from kgreview.core import audit
from kgreview.core.errors import NotFound, StateConflict, ValidationFailed
from kgreview.core.permissions import can_decide, is_curator
from kgreview.graph.models import ConceptType, RelationType
from kgreview.review.decide.outcome import NotAllowed
from kgreview.review.kinds import kind_of
from kgreview.review.models import (
    OPEN_STATUSES,
    Comment,
    CommentRevision,
    Decision,
    Discussion,
    Example,
    Proposal,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User

#: How long after posting its author may change a comment.
EDIT_WINDOW = timedelta(minutes=15)
#: Characters a comment may hold.
COMMENT_MAX = 10_000
#: Threads nest this deep at most on the page; a deeper reply is shown at this depth.
SHOWN_DEPTH = 4

WRITERS_ONLY = "Your role reads the discussion; reviewers and curators write in it."


def _now(now: datetime | None) -> datetime:
    return now if now is not None else timezone.now()


def comment_text(text: str) -> str:
    """A comment's text as stored, or a refusal in words."""
    text = (text or "").replace("\r\n", "\n").replace("\r", "\n")
    if without_controls(text) != text:
        raise ValidationFailed(
            "A comment cannot hold control characters (a NUL byte, say); write it again "
            "as plain text."
        )
    text = text.strip()
    if not text:
        raise ValidationFailed("Write something first: the comment is empty.")
    if len(text) > COMMENT_MAX:
        raise ValidationFailed(
            f"A comment holds at most {COMMENT_MAX:,} characters; this one has {len(text):,}."
        )
    return text


def _writer(*, acting_user: User) -> None:
    if not can_decide(acting_user):
        raise NotAllowed(WRITERS_ONLY)


def _proposal(proposal_id: int) -> Proposal:
    proposal = Proposal.objects.filter(pk=proposal_id).first()
    if proposal is None:
        raise NotFound(f"There is no proposal #{proposal_id}.")
    return proposal


def open_discussion_of(proposal_id: int) -> Discussion | None:
    """The proposal's open discussion, if it is still open to decide."""
    return (
        Discussion.objects.select_related("asked_by", "question")
        .filter(proposal_id=proposal_id, resolved_at__isnull=True)
        .filter(proposal__status__in=OPEN_STATUSES)
        .first()
    )


def _post(proposal: Proposal, *, body: str, parent: Comment | None, author: User, at) -> Comment:
    comment = Comment.objects.create(
        proposal=proposal, parent=parent, author=author, body=body, created_at=at
    )
    CommentRevision.objects.create(comment=comment, body=body, written_at=at)
    return comment


@transaction.atomic
def comment_post(
    *,
    proposal_id: int,
    body: str,
    acting_user: User,
    parent_id: int | None = None,
    now: datetime | None = None,
) -> Comment:
    """Write a comment on a proposal (a reply when ``parent_id`` names one of its
    comments). Someone other than the asker writing in an open discussion answers it:
    the asker is shown it as unread."""
    _writer(acting_user=acting_user)
    body = comment_text(body)
    proposal = _proposal(proposal_id)
    parent = None
    if parent_id is not None:
        parent = Comment.objects.filter(pk=parent_id).first()
        if parent is None or parent.proposal_id != proposal.pk:
            raise ValidationFailed(
                f"Comment #{parent_id} is not on proposal #{proposal.pk}: reply on its own card."
            )
    at = _now(now)
    comment = _post(proposal, body=body, parent=parent, author=acting_user, at=at)
    Discussion.objects.filter(proposal=proposal, resolved_at__isnull=True).exclude(
        asked_by=acting_user
    ).update(answered_at=at)
    audit.record(
        acting_user=acting_user,
        action="comment.post",
        subject=comment,
        summary=(
            f"Replied to comment #{parent.pk} on proposal #{proposal.pk}."
            if parent
            else f"Commented on proposal #{proposal.pk}."
        ),
        after={"proposal": proposal.pk, "parent": parent.pk if parent else None, "body": body},
    )
    return comment


def editable_until(comment: Comment) -> datetime:
    return comment.created_at + EDIT_WINDOW


def can_edit(comment: Comment, reader, *, now: datetime | None = None) -> bool:
    """Whether ``reader`` may still change ``comment``: its author, within the window."""
    return comment.author_id == getattr(reader, "pk", None) and _now(now) < editable_until(comment)


@transaction.atomic
def comment_edit(
    *, comment_id: int, body: str, acting_user: User, now: datetime | None = None
) -> Comment:
    """Change a comment's text: its author only, for ``EDIT_WINDOW`` after posting it.
    The earlier text stays, as a revision."""
    _writer(acting_user=acting_user)
    body = comment_text(body)
    comment = Comment.objects.select_for_update().filter(pk=comment_id).first()
    if comment is None:
        raise NotFound(f"There is no comment #{comment_id}.")
    if comment.author_id != acting_user.pk:
        raise NotAllowed("Only its author changes a comment; reply to it instead.")
    at = _now(now)
    if at >= editable_until(comment):
        until = timezone.localtime(editable_until(comment)).strftime("%Y-%m-%d %H:%M")
        raise StateConflict(
            f"A comment can be changed for 15 minutes after it is posted; this one could "
            f"be until {until}. Reply to it instead."
        )
    was = comment.body
    if body == was:
        return comment
    comment.body, comment.edited_at = body, at
    comment.save(update_fields=["body", "edited_at"])
    CommentRevision.objects.create(comment=comment, body=body, written_at=at)
    audit.record(
        acting_user=acting_user,
        action="comment.edit",
        subject=comment,
        summary=f"Changed comment #{comment.pk} on proposal #{comment.proposal_id}.",
        before={"body": was},
        after={"body": body},
    )
    return comment


@transaction.atomic
def discussion_open(
    *, proposal_id: int, question: str, acting_user: User, now: datetime | None = None
) -> Discussion:
    """Mark an open card as needing discussion, with a question: it leaves every focus
    queue until the asker or a curator resolves it (or someone decides it)."""
    _writer(acting_user=acting_user)
    question = comment_text(question)
    proposal = Proposal.objects.select_for_update().filter(pk=proposal_id).first()
    if proposal is None:
        raise NotFound(f"There is no proposal #{proposal_id}.")
    if not proposal.is_open:
        raise StateConflict(
            f"Proposal #{proposal.pk} was already {proposal.status}: comment on it instead."
        )
    current = open_discussion_of(proposal.pk)
    if current is not None:
        raise StateConflict(
            f"Proposal #{proposal.pk} is already in discussion: {current.asked_by} asked "
            f"“{current.question.body[:200]}”. Answer in its thread."
        )
    at = _now(now)
    comment = _post(proposal, body=question, parent=None, author=acting_user, at=at)
    discussion = Discussion.objects.create(
        proposal=proposal, question=comment, asked_by=acting_user, asked_at=at, seen_at=at
    )
    audit.record(
        acting_user=acting_user,
        action="discussion.open",
        subject=discussion,
        summary=f"Asked about proposal #{proposal.pk}; it waits for the discussion.",
        after={"proposal": proposal.pk, "question": question},
    )
    return discussion


@transaction.atomic
def discussion_resolve(
    *, proposal_id: int, acting_user: User, note: str = "", now: datetime | None = None
) -> Discussion:
    """Resolve a card's open discussion: its asker or a curator. The card goes back to
    the queue; ``note`` (optional) is kept as the resolution, and written as a reply to
    the question so the thread says it."""
    _writer(acting_user=acting_user)
    discussion = (
        Discussion.objects.select_for_update()
        .filter(proposal_id=proposal_id, resolved_at__isnull=True)
        .first()
    )
    if discussion is None:
        raise StateConflict(f"Proposal #{proposal_id} is not in discussion.")
    if discussion.asked_by_id != acting_user.pk and not is_curator(acting_user):
        raise NotAllowed("Only the reviewer who asked, or a curator, resolves a discussion.")
    at = _now(now)
    note = comment_text(note) if (note or "").strip() else ""
    if note:
        _post(
            discussion.proposal,
            body=note,
            parent=discussion.question,
            author=acting_user,
            at=at,
        )
    discussion.resolved_at, discussion.resolved_by = at, acting_user
    discussion.resolution = note or f"Resolved by {acting_user.get_username()}."
    fields = ["resolved_at", "resolved_by", "resolution"]
    if discussion.asked_by_id != acting_user.pk:
        discussion.answered_at = at
        fields.append("answered_at")
    discussion.save(update_fields=fields)
    audit.record(
        acting_user=acting_user,
        action="discussion.resolve",
        subject=discussion,
        summary=f"Resolved the discussion of proposal #{proposal_id}; it is back in the queue.",
        after={"resolution": discussion.resolution},
    )
    return discussion


def discussions_closed_by(decisions: list[Decision], *, now: datetime | None = None) -> int:
    """Resolve the open discussions of the proposals these decisions closed, with a note
    naming the decision; one statement, in the decision's transaction (the decision is
    its audit row). Called by ``decide.decisions.settle_outcome``."""
    closed = {d.proposal_id: d for d in decisions if d.action != Decision.Action.HOLD}
    if not closed:
        return 0
    at = _now(now)
    done = 0
    rows = Discussion.objects.filter(proposal_id__in=list(closed), resolved_at__isnull=True)
    for discussion in rows.select_for_update():
        decision = closed[discussion.proposal_id]
        who = decision.user.get_username() if decision.user is not None else "the system"
        discussion.resolved_at = at
        discussion.resolved_by_id = decision.user_id
        discussion.answered_at = at
        discussion.resolution = (
            f"Resolved by its decision: {decision.get_action_display().lower()} by {who} "
            f"(decision #{decision.pk})."
        )
        discussion.save(update_fields=["resolved_at", "resolved_by", "answered_at", "resolution"])
        done += 1
    return done


def discussion_seen(*, proposal_id: int, acting_user: User, now: datetime | None = None) -> int:
    """The asker read the thread: their answers there are no longer unread. A read mark,
    not a change anyone decided: no curation log row."""
    if not getattr(acting_user, "is_authenticated", False):
        return 0
    at = _now(now)
    return (
        Discussion.objects.filter(proposal_id=proposal_id, asked_by=acting_user)
        .filter(answered_at__isnull=False)
        .filter(Q(seen_at__isnull=True) | Q(seen_at__lt=at))
        .update(seen_at=at)
    )


# --- Reads -----------------------------------------------------------------------------


def open_discussions() -> QuerySet[Discussion]:
    """Discussions still open on a proposal still open."""
    return Discussion.objects.filter(resolved_at__isnull=True, proposal__status__in=OPEN_STATUSES)


def in_discussion() -> Exists:
    """For a query of proposals: whether the proposal has an open discussion (an
    anti-join on the open discussions' partial unique index when negated)."""
    return Exists(Discussion.objects.filter(proposal_id=OuterRef("pk"), resolved_at__isnull=True))


def comment_count() -> Subquery:
    """For a query of proposals: how many comments each has (a scalar subquery)."""
    return Subquery(
        Comment.objects.filter(proposal_id=OuterRef("pk"))
        .order_by()
        .values("proposal_id")
        .annotate(n=Count("id"))
        .values("n")[:1]
    )


def thread(proposal_id: int) -> list[tuple[Comment, int]]:
    """The proposal's comments in thread order, each with its depth (capped at
    ``SHOWN_DEPTH``): a reply under the comment it answers, oldest first. One query."""
    comments = list(
        Comment.objects.filter(proposal_id=proposal_id)
        .select_related("author")
        .annotate(revision_count=Count("revisions"))
        .order_by("created_at", "id")
    )
    children: dict[int | None, list[Comment]] = {}
    for c in comments:
        children.setdefault(c.parent_id, []).append(c)
    out: list[tuple[Comment, int]] = []

    def walk(parent: int | None, depth: int) -> None:
        for c in children.get(parent, []):
            out.append((c, min(depth, SHOWN_DEPTH)))
            walk(c.pk, depth + 1)

    walk(None, 0)
    return out


def discussion_history(proposal_id: int) -> list[Discussion]:
    """Every discussion the proposal had, newest first (with who asked and resolved)."""
    return list(
        Discussion.objects.filter(proposal_id=proposal_id)
        .select_related("asked_by", "resolved_by")
        .order_by("-asked_at", "-id")
    )


def answers_for(reader, *, limit: int = 20) -> list[Discussion]:
    """The questions ``reader`` asked that someone answered (or resolved), newest answer
    first: the home page's list."""
    return list(
        Discussion.objects.filter(asked_by=reader, answered_at__isnull=False)
        .select_related("proposal", "question", "resolved_by")
        .order_by("-answered_at", "-id")[:limit]
    )


def unread_answers(reader) -> int:
    """How many of ``reader``'s questions have an answer they have not read: the nav's
    count, one query on the asker's index."""
    if not getattr(reader, "is_authenticated", False):
        return 0
    return (
        Discussion.objects.filter(asked_by=reader, answered_at__isnull=False)
        .filter(Q(seen_at__isnull=True) | Q(seen_at__lt=F("answered_at")))
        .count()
    )


# --- Examples --------------------------------------------------------------------------


def _guide_rows(kind: str, key: str) -> dict:
    """The foreign key an example of this type fills, or a refusal in words."""
    if kind == "relation":
        relation = RelationType.objects.filter(key=key).first()
        if relation is None:
            raise ValidationFailed(f"There is no relation type “{key}” to give an example of.")
        return {"relation": relation}
    concept_type = ConceptType.objects.filter(key=key).first()
    if concept_type is None:
        raise ValidationFailed(f"There is no concept type “{key}” to give an example of.")
    return {"concept_type": concept_type}


EXAMPLE_STATUSES = (Proposal.Status.ACCEPTED, Proposal.Status.REJECTED)


@transaction.atomic
def example_add(*, proposal_id: int, acting_user: User, now: datetime | None = None) -> Example:
    """Make a decided proposal (accepted or rejected) an example of the type its kind
    names. Curators only."""
    if not is_curator(acting_user):
        raise NotAllowed("Only curators choose the examples a guideline shows.")
    proposal = Proposal.objects.select_for_update().filter(pk=proposal_id).first()
    if proposal is None:
        raise NotFound(f"There is no proposal #{proposal_id}.")
    if proposal.status not in EXAMPLE_STATUSES:
        raise StateConflict(
            f"Proposal #{proposal.pk} is {proposal.status}: only an accepted or a rejected "
            "proposal can be an example."
        )
    guide = kind_of(proposal).guided_by(proposal)
    if guide is None:
        raise ValidationFailed(
            f"A proposal of this kind ({kind_of(proposal).label}) names no relation type or "
            "concept type to be an example of."
        )
    rows = _guide_rows(*guide)
    if Example.objects.filter(proposal=proposal, retired_at__isnull=True, **rows).exists():
        raise StateConflict(f"Proposal #{proposal.pk} is already an example of “{guide[1]}”.")
    example = Example.objects.create(
        proposal=proposal, chosen_by=acting_user, chosen_at=_now(now), **rows
    )
    audit.record(
        acting_user=acting_user,
        action="example.add",
        subject=example,
        summary=f"Made proposal #{proposal.pk} ({proposal.status}) an example of “{guide[1]}”.",
        after={"proposal": proposal.pk, guide[0]: guide[1], "status": proposal.status},
    )
    return example


@transaction.atomic
def example_retire(*, example_id: int, acting_user: User, now: datetime | None = None) -> Example:
    """Stop showing an example (it stays, retired). Curators only."""
    if not is_curator(acting_user):
        raise NotAllowed("Only curators choose the examples a guideline shows.")
    example = Example.objects.select_for_update().filter(pk=example_id).first()
    if example is None:
        raise NotFound(f"There is no example #{example_id}.")
    if example.retired_at is not None:
        raise StateConflict(f"Example #{example.pk} was already retired.")
    example.retired_at, example.retired_by = _now(now), acting_user
    example.save(update_fields=["retired_at", "retired_by"])
    audit.record(
        acting_user=acting_user,
        action="example.retire",
        subject=example,
        summary=f"Retired proposal #{example.proposal_id} as an example.",
    )
    return example


def _reject_reason() -> dict:
    last = Decision.objects.filter(proposal_id=OuterRef("proposal_id"), action="reject").order_by(
        "-created_at", "-id"
    )
    return {
        "reject_code": Subquery(last.values("reason_code")[:1]),
        "reject_note": Subquery(last.values("note")[:1]),
    }


def examples_of(*, relation_id: int | None = None, concept_type_id: int | None = None) -> list:
    """The active examples of one type: accepted first, then rejected, each oldest
    first, with its proposal (its quote) and, for a rejected one, the reason. One query."""
    qs = Example.objects.filter(retired_at__isnull=True)
    qs = (
        qs.filter(relation_id=relation_id)
        if relation_id
        else qs.filter(concept_type_id=concept_type_id)
    )
    rows = list(
        qs.select_related("proposal", "proposal__source_concept", "proposal__target_concept")
        .annotate(**_reject_reason())
        .order_by("id")
    )
    rows.sort(key=lambda e: (e.proposal.status != Proposal.Status.ACCEPTED, e.pk))
    return rows


def active_examples() -> list[Example]:
    """Every active example with its type and proposal, for the Ontology page. One query."""
    return list(
        Example.objects.filter(retired_at__isnull=True)
        .select_related("proposal", "relation", "concept_type", "chosen_by")
        .order_by("id")
    )


def guide_of(proposal: Proposal) -> dict:
    """What the guideline panel shows for a proposal: the type (``kind``: relation or
    concept type), its guideline and its examples."""
    guide = kind_of(proposal).guided_by(proposal)
    if guide is None:
        return {"guide": None}
    kind, key = guide
    model = RelationType if kind == "relation" else ConceptType
    row = model.objects.filter(key=key).first()
    if row is None:
        return {"guide": guide, "row": None, "examples": []}
    examples = (
        examples_of(relation_id=row.pk)
        if kind == "relation"
        else examples_of(concept_type_id=row.pk)
    )
    return {"guide": guide, "row": row, "examples": examples}
