"""The proposal queue and the append-only decision log."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from kgreview.core.nodelete import AppendOnlyModel, NoDeleteModel
from kgreview.graph.models import EVIDENCE_CONSISTENT

OPEN_STATUSES = ("pending", "held")


class ProposalOrigin(NoDeleteModel):
    """Who or what proposed: an agent, its model, and its run, in words review can show
    and filter by. Review sits below the agents and never names their run: an agent run
    points at its origin (``agents.AgentRun.origin``), and so, later, may a batch an
    external agent sends through the API."""

    DELETE_HINT = "its proposals name it"

    #: The origins of proposals submitted from outside (``api.proposing``), by the door
    #: they came through: the writing API (``api``) or the MCP server's propose tool
    #: (``mcp``); one per token and door (the token's id as ``run``, which is no run), or
    #: per account and door without a token (``…-user``, the account's id). The label
    #: names the submitter ("tutor-bot (ada)").
    SUBMITTED_VIA = {"api": "api", "api-user": "api", "mcp": "mcp", "mcp-user": "mcp"}
    SUBMITTED = tuple(SUBMITTED_VIA)
    #: The doors, in words: "Submitted by tutor-bot (ada) via MCP".
    VIA_WORDS = {"api": "via the API", "mcp": "via MCP"}

    agent = models.CharField(max_length=32, help_text="The proposer's key: construct, heal, ...")
    agent_label = models.CharField(max_length=100, help_text="The proposer in words.")
    provider = models.CharField(max_length=32, blank=True)
    model = models.CharField(max_length=200, blank=True)
    run = models.PositiveBigIntegerField(
        null=True, blank=True, help_text="The run's number, as its proposer numbers runs."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(fields=["agent", "run"], name="proposalorigin_one_per_run")
        ]
        indexes = [models.Index(fields=["run"], name="proposalorigin_run")]

    def __str__(self) -> str:
        if self.is_submitted:
            return f"{self.agent_label} {self.via_words}"
        return f"{self.agent_label} run #{self.run}" if self.run else self.agent_label

    @property
    def is_submitted(self) -> bool:
        return self.agent in self.SUBMITTED

    @property
    def via(self) -> str:
        """The door a submitted proposal came through (``api`` or ``mcp``); "" for an
        agent's."""
        return self.SUBMITTED_VIA.get(self.agent, "")

    @property
    def via_words(self) -> str:
        return self.VIA_WORDS.get(self.via, "")


class Proposal(NoDeleteModel):
    """A change an agent (or a person) wants made to the graph, waiting for a decision."""

    DELETE_HINT = "reject or supersede it instead"

    class KindChoice(models.TextChoices):
        """The proposal kinds the database accepts: one for each module of
        ``review/kinds/`` (the ``Kind`` classes), whose registry dispatches on the key."""

        ADD_CONCEPT = "add_concept", "Add concept"
        ADD_EDGE = "add_edge", "Add edge"
        UPDATE_EDGE = "update_edge", "Update edge"
        INVALIDATE_EDGE = "invalidate_edge", "Invalidate edge"
        MERGE_CONCEPTS = "merge_concepts", "Merge concepts"
        ADD_RELATION_TYPE = "add_relation_type", "Add relation type"
        UPDATE_CONCEPT = "update_concept", "Rename concept or change its aliases"
        ADD_ALIAS = "add_alias", "Add a name a document defines"
        ADD_CONCEPT_TYPE = "add_concept_type", "Add concept type"
        ADD_RELATION_PATTERN = "add_relation_pattern", "Add relation pattern"
        ADD_ATTRIBUTE = "add_attribute", "Add attribute"
        SET_ATTRIBUTE = "set_attribute", "Set a concept's attribute value"
        SET_CONCEPT_TYPE = "set_concept_type", "Give a concept a type"

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        HELD = "held", "Held (below the confidence gate)"
        ACCEPTED = "accepted", "Accepted"
        REJECTED = "rejected", "Rejected"
        SUPERSEDED = "superseded", "Superseded"

    kind = models.CharField(max_length=32, choices=KindChoice.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    payload = models.JSONField(help_text="Kind-specific content, validated by review.payloads.")
    confidence = models.FloatField()
    reason = models.TextField(blank=True)
    evidence_revision = models.ForeignKey(
        "graph.SourceRevision",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="proposals",
    )
    evidence_start = models.PositiveIntegerField(null=True, blank=True)
    evidence_end = models.PositiveIntegerField(null=True, blank=True)
    evidence_quote = models.TextField(blank=True)
    flags = models.JSONField(default=list, blank=True)
    # The flags as "|a|b|", kept by the services beside ``flags`` so that filtering by a
    # flag is a portable LIKE on both SQLite and PostgreSQL.
    flags_text = models.CharField(max_length=500, blank=True, default="")
    dedup_key = models.CharField(max_length=255)
    priority = models.IntegerField(default=0)
    origin = models.ForeignKey(
        "ProposalOrigin",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="proposals",
        help_text="Who or what proposed it; empty for a proposal a person added.",
    )
    document = models.ForeignKey(
        "graph.Source",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="proposals",
        help_text="The source the proposal was drafted from.",
    )
    # For add_edge: the endpoints and relation as keys ("c<id>" for a concept, "n:<name>"
    # for a proposed one), so contradictions and queue filters are plain indexed lookups.
    relation_key = models.CharField(max_length=64, blank=True)
    source_key = models.CharField(max_length=255, blank=True)
    target_key = models.CharField(max_length=255, blank=True)
    # The same, as foreign keys where they exist, so a card loads with one joined query.
    relation = models.ForeignKey(
        "graph.RelationType", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    source_concept = models.ForeignKey(
        "graph.Concept", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    target_concept = models.ForeignKey(
        "graph.Concept", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    version = models.PositiveIntegerField(
        default=1, help_text="Bumped on every change; a decision names the version it saw."
    )

    class Stage(models.TextChoices):
        """Where an open proposal stands in team review (``review.team``)."""

        REVIEW = "", "Waiting for a reviewer"
        SECOND = "second", "Waiting for a second, blind reviewer"
        ADJUDICATE = "adjudicate", "The two reviewers differ: a curator decides"

    stage = models.CharField(max_length=16, choices=Stage.choices, default="", blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="created_proposals",
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="decided_proposals",
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    concept = models.ForeignKey(
        "graph.Concept",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="For an accepted add_concept: the concept it created.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-priority", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["dedup_key"],
                condition=Q(status__in=OPEN_STATUSES),
                name="proposal_dedup_key_unique_while_open",
                violation_error_message="The same proposal is already waiting for review.",
            ),
            models.CheckConstraint(
                condition=Q(confidence__gte=0.0, confidence__lte=1.0),
                name="proposal_confidence_0_1",
            ),
            models.CheckConstraint(
                condition=EVIDENCE_CONSISTENT, name="proposal_evidence_consistent"
            ),
            models.CheckConstraint(
                condition=Q(status__in=OPEN_STATUSES, decided_at__isnull=True)
                | (~Q(status__in=OPEN_STATUSES) & Q(decided_at__isnull=False)),
                name="proposal_decided_iff_closed",
            ),
            models.CheckConstraint(condition=~Q(dedup_key=""), name="proposal_dedup_key_set"),
            models.CheckConstraint(condition=Q(version__gte=1), name="proposal_version_gte_1"),
        ]
        indexes = [
            models.Index(fields=["status", "-priority", "-id"], name="proposal_queue"),
            models.Index(fields=["status", "-confidence", "-id"], name="proposal_queue_conf"),
            models.Index(fields=["status", "-id"], name="proposal_queue_new"),
            # "Open" (pending and held together) is the reviewers' default view: these
            # keep it in index order instead of sorting every open proposal per page.
            models.Index(
                fields=["-priority", "-id"],
                condition=Q(status__in=OPEN_STATUSES),
                name="proposal_open_priority",
            ),
            models.Index(
                fields=["-confidence", "-id"],
                condition=Q(status__in=OPEN_STATUSES),
                name="proposal_open_confidence",
            ),
            models.Index(fields=["-priority", "-id"], name="proposal_all_priority"),
            # Every status by confidence (the Queue's "all" view, and the range a
            # confidence filter's counts read); by relation in the queue's order.
            models.Index(fields=["-confidence", "-id"], name="proposal_all_confidence"),
            models.Index(
                fields=["relation_key", "status", "-priority", "-id"],
                name="proposal_relation_queue",
            ),
            models.Index(fields=["kind", "status"], name="proposal_kind_status"),
            models.Index(fields=["kind", "id"], name="proposal_kind_id"),
            models.Index(fields=["dedup_key"], name="proposal_dedup_key"),
            models.Index(
                fields=["relation_key", "source_key"],
                condition=Q(kind="add_edge", status__in=OPEN_STATUSES),
                name="proposal_open_edge_out",
            ),
            models.Index(
                fields=["source_key", "target_key"],
                condition=Q(kind="add_edge", status__in=OPEN_STATUSES),
                name="proposal_open_edge_pair",
            ),
            models.Index(
                fields=["target_key"],
                condition=Q(kind="add_edge", status__in=OPEN_STATUSES),
                name="proposal_open_edge_in",
            ),
            models.Index(fields=["document", "status"], name="proposal_document_status"),
            models.Index(
                fields=["-id"],
                condition=Q(stage="adjudicate", status__in=OPEN_STATUSES),
                name="proposal_adjudication",
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.kind} ({self.status})"

    @property
    def is_open(self) -> bool:
        return self.status in OPEN_STATUSES


def _flag_order_indexes() -> list[models.Index]:
    """The flag rows in each of the Queue's orders (priority, confidence, newest), for one
    status, for the open ones and for all: a flag filter reads its page off one of them."""
    orders = {"priority": ["-priority"], "confidence": ["-confidence"], "new": []}
    out = []
    for name, columns in orders.items():
        keys = [*columns, "-proposal"]
        out += [
            models.Index(fields=["flag", "status", *keys], name=f"proposal_flag_{name}"),
            models.Index(
                fields=["flag", *keys],
                condition=Q(status__in=OPEN_STATUSES),
                name=f"proposal_flag_open_{name}",
            ),
            models.Index(fields=["flag", *keys], name=f"proposal_flag_all_{name}"),
        ]
    return out


class ProposalFlag(models.Model):
    """One flag one proposal carries, with the proposal's status and sort keys: what a
    flag filter reads, in the Queue's order. Kept by database triggers on every write of
    a proposal (``queue_index``); nothing in Python writes it."""

    proposal = models.ForeignKey(
        Proposal,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,
        related_name="flag_rows",
    )
    flag = models.TextField()
    status = models.CharField(max_length=16)
    priority = models.IntegerField()
    confidence = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["proposal", "flag"], name="proposal_flag_unique")
        ]
        indexes = _flag_order_indexes()


class QueueTally(models.Model):
    """A change to how many proposals hold one (status, kind, relation, flags): ``+1`` or
    ``-1`` rows appended by database triggers, folded together by
    ``queue_index.compact``. The sum per key is the queue's count for it."""

    status = models.CharField(max_length=16)
    kind = models.CharField(max_length=32)
    relation_key = models.CharField(max_length=64, blank=True)
    flags_text = models.CharField(max_length=500, blank=True)
    n = models.IntegerField()


class Decision(AppendOnlyModel):
    """One person's (or the system's) decision on a proposal. Never edited, never deleted."""

    class Action(models.TextChoices):
        ACCEPT = "accept", "Accepted"
        REJECT = "reject", "Rejected"
        EDIT_ACCEPT = "edit_accept", "Edited and accepted"
        UNDO = "undo", "Undone"
        SUPERSEDE = "supersede", "Superseded"
        HOLD = "hold", "Held"
        RELEASE = "release", "Released from hold"
        RERESOLVE = "reresolve", "Re-resolved"

    proposal = models.ForeignKey(Proposal, on_delete=models.PROTECT, related_name="decisions")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="decisions",
        help_text="Empty for decisions the system took (e.g. superseding a stale proposal).",
    )
    action = models.CharField(max_length=16, choices=Action.choices)
    reason_code = models.CharField(max_length=64, blank=True)
    note = models.TextField(blank=True)
    before = models.JSONField(default=dict, blank=True)
    after = models.JSONField(default=dict, blank=True)
    proposal_version = models.PositiveIntegerField(
        help_text="The proposal version this decision was taken on."
    )
    undoes = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="undone_by"
    )
    caused_by = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="consequences",
        help_text="The decision that made this one necessary: a concept accepted with the "
        "edge that needs it, a twin proposal superseded when its concept came into being.",
    )
    batch = models.UUIDField(
        default=uuid.uuid4,
        db_index=True,
        help_text="Decisions taken by one action (a bulk decision, or an edge accepted "
        "with the concepts it needs) share a batch, and are undone together.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["user", "-created_at"], name="decision_user_time"),
            models.Index(fields=["-created_at"], name="decision_time"),
        ]

    def __str__(self) -> str:
        return f"{self.action} #{self.proposal_id} by {self.user_id or 'system'}"


class EdgeProvenance(NoDeleteModel):
    """Why an edge row exists, in review's words: the proposal behind it, the decision
    that wrote it and the decision that retired it. One row per edge a decision made or
    retired, written in that decision's transaction (``kgreview.review.provenance``); an
    edge seeded or imported has none. The graph sits below review and never reads it: it
    takes a decision only as the audit marker of the change it makes."""

    DELETE_HINT = "it says why an edge exists"

    edge = models.OneToOneField(
        "graph.Edge", primary_key=True, on_delete=models.PROTECT, related_name="provenance"
    )
    proposal = models.ForeignKey(
        Proposal, null=True, blank=True, on_delete=models.PROTECT, related_name="edge_provenance"
    )
    decision = models.ForeignKey(
        Decision, null=True, blank=True, on_delete=models.PROTECT, related_name="edge_provenance"
    )
    invalidation_decision = models.ForeignKey(
        Decision, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        verbose_name_plural = "edge provenances"

    def __str__(self) -> str:
        return f"edge {self.edge_id}: proposal {self.proposal_id}, decision {self.decision_id}"


# Team review's and talk's rows live in their own modules, by subject; they are this app's
# models all the same (one app label, one set of migrations), imported once these are.
from kgreview.review import talk_models, team_models  # noqa: E402

Comment = talk_models.Comment
CommentRevision = talk_models.CommentRevision
Discussion = talk_models.Discussion
Example = talk_models.Example
Assignment = team_models.Assignment
DoubleReview = team_models.DoubleReview
Lease = team_models.Lease
Vote = team_models.Vote
