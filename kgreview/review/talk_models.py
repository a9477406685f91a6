"""Talk on a card (``review.talk``): comments and their revisions, discussions, and the
examples curators pick for a type's guideline. Part of the review app's models
(``review.models`` re-exports them)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from kgreview.core.nodelete import AppendOnlyModel, NoDeleteModel

# --- Talk on a card: comments, discussions, examples (``review.talk``) ---------------------


class Comment(NoDeleteModel):
    """One person's words on a proposal, Markdown (rendered sanitised), in a thread: a
    reply names the comment it answers. Its author may change it for
    ``talk.EDIT_WINDOW`` after writing it; every text it ever had is a
    ``CommentRevision``. Never deleted."""

    DELETE_HINT = "it is part of the proposal's discussion; edit it within 15 minutes instead"

    proposal = models.ForeignKey(
        "review.Proposal", on_delete=models.PROTECT, related_name="comments"
    )
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="replies"
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="proposal_comments"
    )
    body = models.TextField(help_text="The text now; earlier texts are its revisions.")
    created_at = models.DateTimeField()
    edited_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["proposal", "id"], name="comment_proposal")]

    def __str__(self) -> str:
        return f"comment {self.pk} on #{self.proposal_id} by {self.author_id}"


class CommentRevision(AppendOnlyModel):
    """A text a comment had, from ``written_at`` on: the first is its text as posted."""

    comment = models.ForeignKey(Comment, on_delete=models.PROTECT, related_name="revisions")
    body = models.TextField()
    written_at = models.DateTimeField()

    class Meta:
        ordering = ["written_at", "id"]

    def __str__(self) -> str:
        return f"revision {self.pk} of comment {self.comment_id}"


class Discussion(NoDeleteModel):
    """A card a reviewer marked as needing discussion, with their question (a comment).

    While it is open (``resolved_at`` empty) the card is served by no focus queue
    (``workspace.selectors.next_in_queue``'s one exclusion, an anti-join on the partial
    index below). The asker or a curator resolves it; a decision on the card resolves it
    too, with a note saying so (``talk.discussions_closed_by``)."""

    DELETE_HINT = "resolve it instead"

    proposal = models.ForeignKey(
        "review.Proposal", on_delete=models.PROTECT, related_name="discussions"
    )
    question = models.OneToOneField(
        Comment, on_delete=models.PROTECT, related_name="discussion_asked"
    )
    asked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="discussions_asked"
    )
    asked_at = models.DateTimeField()
    answered_at = models.DateTimeField(
        null=True, blank=True, help_text="When someone else last wrote in it (or resolved it)."
    )
    seen_at = models.DateTimeField(
        null=True, blank=True, help_text="When the asker last read its thread."
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    resolution = models.TextField(blank=True)

    class Meta:
        ordering = ["-asked_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["proposal"],
                condition=Q(resolved_at__isnull=True),
                name="discussion_one_open_per_proposal",
                violation_error_message="This card is already in discussion.",
            ),
        ]
        # The unique constraint's partial index is what the focus queue's anti-join reads.
        indexes = [models.Index(fields=["asked_by", "-answered_at"], name="discussion_asker")]

    def __str__(self) -> str:
        return f"discussion {self.pk} on #{self.proposal_id}"

    @property
    def is_open(self) -> bool:
        return self.resolved_at is None

    @property
    def unread(self) -> bool:
        """Whether its asker has an answer they have not read."""
        return self.answered_at is not None and (
            self.seen_at is None or self.seen_at < self.answered_at
        )


class Example(NoDeleteModel):
    """A decided proposal a curator chose as an example of a relation type or a concept
    type (exactly one), shown with the type's guideline on its cards. Retired, never
    deleted. It lives in review because it points at a proposal: the graph never points
    up."""

    DELETE_HINT = "retire it instead"

    proposal = models.ForeignKey(
        "review.Proposal", on_delete=models.PROTECT, related_name="example_uses"
    )
    relation = models.ForeignKey(
        "graph.RelationType", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    concept_type = models.ForeignKey(
        "graph.ConceptType", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    chosen_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    chosen_at = models.DateTimeField()
    retired_at = models.DateTimeField(null=True, blank=True)
    retired_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(relation__isnull=False, concept_type__isnull=True)
                | Q(relation__isnull=True, concept_type__isnull=False),
                name="example_of_one_type",
            ),
            models.UniqueConstraint(
                fields=["proposal", "relation"],
                condition=Q(retired_at__isnull=True, relation__isnull=False),
                name="example_once_per_relation",
            ),
            models.UniqueConstraint(
                fields=["proposal", "concept_type"],
                condition=Q(retired_at__isnull=True, concept_type__isnull=False),
                name="example_once_per_concept_type",
            ),
        ]
        indexes = [
            models.Index(
                fields=["relation"], condition=Q(retired_at__isnull=True), name="example_relation"
            ),
            models.Index(
                fields=["concept_type"],
                condition=Q(retired_at__isnull=True),
                name="example_concept_type",
            ),
        ]

    def __str__(self) -> str:
        return f"example {self.pk}: #{self.proposal_id}"
