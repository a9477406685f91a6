"""The graph: concepts and their names, the relation vocabulary, sources, and edges.

Every write goes through ``kgreview.graph.services``; these classes hold fields,
choices and the database constraints that keep the graph honest even when a service
has a bug.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Greatest, Least, Lower

from kgreview.core.nodelete import AppendOnlyModel, NoDeleteManager, NoDeleteModel, NoDeleteQuerySet

from .concept_types import ConceptType, ConceptTypeChange  # noqa: F401 (this app's models)
from .ontology import Attribute, AttributeValue, RelationPattern  # noqa: F401 (this app's models)

if TYPE_CHECKING:
    from .sources import Structure

EVIDENCE_CONSISTENT = Q(
    evidence_revision__isnull=True,
    evidence_start__isnull=True,
    evidence_end__isnull=True,
    evidence_quote="",
) | Q(
    evidence_revision__isnull=False,
    evidence_start__isnull=False,
    evidence_end__isnull=False,
    evidence_start__lt=F("evidence_end"),
)


class RelationType(NoDeleteModel):
    """A term of the closed relation vocabulary a curator controls."""

    DELETE_HINT = "retire it instead (retired types stay for history)"

    key = models.SlugField(max_length=64, unique=True)
    label = models.CharField(max_length=100)
    verb = models.CharField(
        max_length=100,
        help_text='How "source <verb> target" reads in English, e.g. "is a prerequisite for".',
    )
    description = models.TextField(blank=True)
    guideline = models.TextField(
        blank=True,
        default="",
        db_default="",
        help_text="Markdown a curator writes: what the relation means and when to use it, "
        "shown on its review cards (graph.services.guidelines).",
    )
    directed = models.BooleanField(default=True)
    symmetric = models.BooleanField(default=False)
    acyclic = models.BooleanField(default=False)
    active = models.BooleanField(default=True)
    retired_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    ordered = models.BooleanField(
        default=True,
        db_default=True,
        help_text="For an acyclic relation: whether its concepts' positions (ConceptOrder) "
        "are a topological order of its active edges. Kept by the graph services; "
        "false while its edges hold a cycle, until `manage.py order_relations` rebuilds it.",
    )
    # "A prerequisite B" and "B builds_on A" state one fact. Both rows of a pair name each
    # other (``graph.services.relations.relation_type_pair``); a symmetric relation is its
    # own inverse and names none (``rules.inverse_id``).
    inverse = models.OneToOneField(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The relation stating the same fact with the ends swapped "
        '("A is a prerequisite for B" is "B builds on A").',
    )

    class Meta:
        ordering = ["key"]
        constraints = [
            models.CheckConstraint(
                condition=Q(directed=True, symmetric=False) | Q(directed=False, symmetric=True),
                name="relationtype_directed_xor_symmetric",
                violation_error_message="A relation is either directed or symmetric.",
            ),
            models.CheckConstraint(
                condition=~Q(acyclic=True, directed=False),
                name="relationtype_acyclic_needs_direction",
                violation_error_message="Only a directed relation can be acyclic.",
            ),
            models.CheckConstraint(
                condition=Q(active=True, retired_at__isnull=True)
                | Q(active=False, retired_at__isnull=False),
                name="relationtype_retired_has_time",
            ),
            models.CheckConstraint(
                condition=Q(inverse__isnull=True) | Q(symmetric=False),
                name="relationtype_symmetric_is_own_inverse",
                violation_error_message="A symmetric relation is its own inverse.",
            ),
            models.CheckConstraint(
                condition=~Q(inverse=F("pk")),
                name="relationtype_inverse_is_another",
                violation_error_message="A directed relation is not its own inverse.",
            ),
        ]

    def __str__(self) -> str:
        return self.key


class Concept(NoDeleteModel):
    """A node of the graph. A merged concept stays, pointing at its survivor."""

    DELETE_HINT = "merge it into another concept instead"

    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        MERGED = "merged", "Merged"
        RETIRED = "retired", "Retired"

    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    merged_into = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="merged_from"
    )
    merged_at = models.DateTimeField(null=True, blank=True)
    retired_at = models.DateTimeField(
        null=True, blank=True, help_text="Set when the decision that created it was undone."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Its type now (null: untyped); what it was before is in ConceptTypeChange.
    type = models.ForeignKey(
        "ConceptType", null=True, blank=True, on_delete=models.PROTECT, related_name="concepts"
    )

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                Lower("name"),
                name="concept_name_unique_ci",
                violation_error_message="A concept with this name already exists.",
            ),
            models.CheckConstraint(
                condition=Q(
                    status="active",
                    merged_into__isnull=True,
                    merged_at__isnull=True,
                    retired_at__isnull=True,
                )
                | Q(
                    status="merged",
                    merged_into__isnull=False,
                    merged_at__isnull=False,
                    retired_at__isnull=True,
                )
                | Q(
                    status="retired",
                    merged_into__isnull=True,
                    merged_at__isnull=True,
                    retired_at__isnull=False,
                ),
                name="concept_status_fields_agree",
            ),
            models.CheckConstraint(
                condition=~Q(merged_into=F("id")), name="concept_not_merged_into_itself"
            ),
            models.CheckConstraint(condition=~Q(name=""), name="concept_name_not_empty"),
        ]

    # Not a field: a page showing merged concepts may set each one's survivor here, read
    # for all of them in one query (the add_edge card does).
    survivor: Concept | None

    def __str__(self) -> str:
        return self.name

    @property
    def is_active(self) -> bool:
        return self.status == self.Status.ACTIVE


class _CurrentNames(NoDeleteManager["ConceptAlias"]):
    """Names a concept answers to now: removed aliases stay as rows, out of sight."""

    def get_queryset(self):
        return super().get_queryset().filter(removed_at__isnull=True)


class ConceptAlias(NoDeleteModel):
    """Every name a concept answers to, its canonical name included.

    Keeping canonical names here too lets one case-insensitive unique index guard the
    whole name space: no alias can shadow another concept's name, and resolving a name
    is a single index lookup. A removed alias is never deleted: it keeps its row with
    ``removed_at`` set, and its name is free for another concept.
    """

    DELETE_HINT = "remove the alias instead (the row stays, its name is freed)"

    class Role(models.TextChoices):
        """What the name is to its concept (the column is ``kind`` for history's sake)."""

        CANONICAL = "canonical", "Canonical name"
        ALIAS = "alias", "Alias"
        MERGED = "merged", "Name of a merged concept"

    concept = models.ForeignKey(Concept, on_delete=models.PROTECT, related_name="aliases")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=Role.choices, default=Role.ALIAS)
    merged_from = models.ForeignKey(
        Concept,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="Set when a merge moved this name from another concept.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    removed_at = models.DateTimeField(
        null=True, blank=True, help_text="Set when a curator took this name off the concept."
    )
    key = models.CharField(
        max_length=200,
        default="",
        blank=True,
        help_text="The name's key (construction.text.name_key): spellings that share it, "
        "such as a plural and its singular, name one concept.",
    )

    objects: ClassVar = _CurrentNames()  # ClassVar: see AppendOnlyModel.objects
    all_objects = NoDeleteQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "concept aliases"
        ordering = ["name"]
        base_manager_name = "all_objects"
        indexes = [
            models.Index(
                fields=["key"],
                condition=Q(removed_at__isnull=True),
                name="conceptalias_current_key",
            )
        ]
        constraints = [
            models.UniqueConstraint(
                Lower("name"),
                condition=Q(removed_at__isnull=True),
                name="conceptalias_current_name_unique_ci",
                violation_error_message="This name already belongs to a concept.",
            ),
            models.UniqueConstraint(
                fields=["concept"],
                condition=Q(kind="canonical", removed_at__isnull=True),
                name="conceptalias_one_canonical_per_concept",
            ),
            models.CheckConstraint(
                condition=~Q(kind="canonical", removed_at__isnull=False),
                name="conceptalias_canonical_not_removed",
            ),
            models.CheckConstraint(condition=~Q(name=""), name="conceptalias_name_not_empty"),
            models.CheckConstraint(
                condition=Q(kind="merged", merged_from__isnull=False)
                | (~Q(kind="merged") & Q(merged_from__isnull=True)),
                name="conceptalias_merged_has_origin",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Source(NoDeleteModel):
    """A document the agents read (a lesson). Its text lives in revisions."""

    DELETE_HINT = "retire it instead; its revisions back the evidence of edges"

    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        RETIRED = "retired", "Retired"

    slug = models.SlugField(max_length=200, unique=True)
    title = models.CharField(max_length=300)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    current_revision = models.ForeignKey(
        "SourceRevision", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    origin = models.CharField(max_length=1000, blank=True, help_text="Where it was imported from.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.title or self.slug


class SourceFile(AppendOnlyModel):
    """The bytes of an imported file, stored once per content (sha256).

    Kept in the database rather than on one machine's disk, so every web server of a
    scaled-out deployment can hand the original back. Only the download reads ``data``.
    """

    sha256 = models.CharField(max_length=64, unique=True)
    media_type = models.CharField(max_length=100)
    size = models.PositiveBigIntegerField()
    data = models.BinaryField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.sha256[:12]} ({self.media_type}, {self.size} bytes)"


class SourceRevision(AppendOnlyModel):
    """One immutable version of a source's text; evidence offsets point into it.

    ``text`` is the text extracted from the original file; ``structure`` holds where its
    sections begin (heading paths with offsets) and, for paged formats, where each page
    begins, so evidence can name its page and section.
    """

    class TextFormat(models.TextChoices):
        MARKDOWN = "markdown", "Markdown"
        PLAIN = "plain", "Plain text"

    source = models.ForeignKey(Source, on_delete=models.PROTECT, related_name="revisions")
    number = models.PositiveIntegerField()
    title = models.CharField(max_length=300)
    text = models.TextField()
    sha256 = models.CharField(max_length=64)
    word_count = models.PositiveIntegerField(default=0)
    origin = models.CharField(max_length=1000, blank=True)
    media_type = models.CharField(max_length=100, default="text/markdown")
    text_format = models.CharField(
        max_length=16, choices=TextFormat.choices, default=TextFormat.MARKDOWN
    )
    structure = models.JSONField(default=dict, blank=True)
    # len(structure["pages"]), kept apart so lists need not load every structure.
    page_count = models.PositiveIntegerField(default=0)
    original = models.ForeignKey(
        SourceFile, null=True, blank=True, on_delete=models.PROTECT, related_name="revisions"
    )
    filename = models.CharField(max_length=255, blank=True)
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    # Not a field: ``kgreview.graph.sources.revision_structure`` keeps the parsed
    # ``structure`` here, on first use, for the life of this instance.
    _structure_cache: Structure

    class Meta:
        ordering = ["source_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["source", "number"], name="sourcerevision_number"),
            models.CheckConstraint(condition=Q(number__gte=1), name="sourcerevision_number_gte_1"),
        ]
        indexes = [models.Index(fields=["sha256"], name="sourcerevision_sha256")]

    def __str__(self) -> str:
        return f"{self.source_id}@{self.number}"


class SourceConcept(NoDeleteModel):
    """A concept a source grounds: mentioned in, or drafted from, that source."""

    DELETE_HINT = "it records where the concept came from; a new revision moves the link"

    source = models.ForeignKey(Source, on_delete=models.PROTECT, related_name="concept_links")
    concept = models.ForeignKey(Concept, on_delete=models.PROTECT, related_name="source_links")
    revision = models.ForeignKey(
        SourceRevision, on_delete=models.PROTECT, related_name="+", help_text="Last seen in."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "concept"], name="sourceconcept_unique")
        ]


class Edge(NoDeleteModel):
    """A typed, bi-temporal fact ``source --relation--> target`` with its evidence.

    Rows are never edited in substance: an update is a new row that ``supersedes`` the
    old one, a retraction sets ``invalid_at`` and the status. ``valid_at`` is when the
    fact holds from, ``recorded_at`` when the graph learned it. Which proposal and
    decisions made or retired a row is review's record (``review.EdgeProvenance``).
    """

    DELETE_HINT = "invalidate it instead"

    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        SUPERSEDED = "superseded", "Superseded"
        INVALIDATED = "invalidated", "Invalidated"

    source = models.ForeignKey(Concept, on_delete=models.PROTECT, related_name="outgoing_edges")
    target = models.ForeignKey(Concept, on_delete=models.PROTECT, related_name="incoming_edges")
    relation = models.ForeignKey(RelationType, on_delete=models.PROTECT, related_name="edges")
    is_symmetric = models.BooleanField(
        default=False, help_text="Copied from the relation type so the database can enforce it."
    )
    weight = models.FloatField(default=1.0)
    confidence = models.FloatField()
    reason = models.TextField()
    evidence_revision = models.ForeignKey(
        SourceRevision, null=True, blank=True, on_delete=models.PROTECT, related_name="edges"
    )
    evidence_start = models.PositiveIntegerField(null=True, blank=True)
    evidence_end = models.PositiveIntegerField(null=True, blank=True)
    evidence_quote = models.TextField(blank=True)
    valid_at = models.DateTimeField()
    recorded_at = models.DateTimeField()
    invalid_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    supersedes = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="superseded_by"
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="decided_edges",
    )
    invalidated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="invalidated_edges",
    )
    invalidation_reason = models.TextField(blank=True)
    in_order = models.BooleanField(
        default=False,
        db_default=False,
        help_text="Written by the graph services, with its ends placed in its relation's "
        "topological order (or in a relation that needs none). A row written any other way "
        "is taken into the order by the next write of its relation.",
    )

    class Meta:
        ordering = ["-recorded_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["source", "relation", "target"],
                condition=Q(status="active"),
                name="edge_one_active_per_triple",
                violation_error_message="This edge is already active in the graph.",
            ),
            models.UniqueConstraint(
                Least("source", "target"),
                Greatest("source", "target"),
                "relation",
                condition=Q(status="active", is_symmetric=True),
                name="edge_one_active_per_symmetric_pair",
                violation_error_message="This symmetric edge is already active in the graph.",
            ),
            models.CheckConstraint(condition=~Q(source=F("target")), name="edge_no_self_loop"),
            models.CheckConstraint(
                condition=Q(confidence__gte=0.0, confidence__lte=1.0),
                name="edge_confidence_0_1",
            ),
            models.CheckConstraint(condition=Q(weight__gte=0.0), name="edge_weight_non_negative"),
            models.CheckConstraint(condition=EVIDENCE_CONSISTENT, name="edge_evidence_consistent"),
            models.CheckConstraint(
                condition=Q(status="active", invalid_at__isnull=True)
                | (~Q(status="active") & Q(invalid_at__isnull=False)),
                name="edge_retired_iff_invalid_at",
            ),
            models.CheckConstraint(condition=~Q(reason=""), name="edge_reason_not_empty"),
        ]
        indexes = [
            models.Index(fields=["source", "status"], name="edge_source_status"),
            models.Index(fields=["target", "status"], name="edge_target_status"),
            models.Index(fields=["relation", "status"], name="edge_relation_status"),
            models.Index(fields=["recorded_at"], name="edge_recorded_at"),
            models.Index(fields=["invalid_at"], name="edge_invalid_at"),
            # What leads into a concept in a relation: the backward half of the cycle check
            # (the unique index on source, relation, target serves the forward half).
            models.Index(
                fields=["target", "relation"],
                condition=Q(status="active"),
                name="edge_active_into",
            ),
            # Active rows written past the services: few (none, normally), found at once.
            models.Index(
                fields=["relation"],
                condition=Q(status="active", in_order=False),
                name="edge_out_of_order",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.source_id} -{self.relation_id}-> {self.target_id}"

    @property
    def is_active(self) -> bool:
        return self.status == self.Status.ACTIVE


class ConceptOrder(models.Model):
    """Where a concept stands in the topological order of one acyclic relation.

    Every active edge of the relation runs from a lower position to a higher one, so a
    new edge that does too cannot close a cycle, and one that does not is checked only
    within the positions between its ends (``kgreview.graph.order``). A concept without a
    row has no edge of the relation yet. Derived from the edges and rebuilt from them at
    will (``order.rebuild_orders``): it carries no history.
    """

    relation = models.ForeignKey(RelationType, on_delete=models.PROTECT, related_name="+")
    concept = models.ForeignKey(Concept, on_delete=models.PROTECT, related_name="+")
    position = models.BigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["relation", "concept"], name="conceptorder_one_place")
        ]
        indexes = [models.Index(fields=["relation", "position"], name="conceptorder_position")]

    def __str__(self) -> str:
        return f"{self.concept_id} at {self.position} in {self.relation_id}"


class NameChange(models.Model):
    """One concept, or one proposed concept, whose names changed: the name journal.

    Every service that changes what a name means (a concept created, renamed, merged,
    retired or brought back, an alias added, removed or restored, an add_concept proposal
    queued, decided, settled or reopened) writes a row here in the same transaction
    (``services.name_index_changed``). Processes that hold names in memory
    (``graph.name_index``, ``graph.search``) remember the last row they applied and, on
    use, read the rows after it: each touched concept or proposal has its names read
    again, never the whole index. A row naming neither asks every process to rebuild.

    ``proposal_id`` is a review ``Proposal``'s id, kept as a plain number: the graph
    layer does not import review. The names themselves keep their history in
    ``ConceptAlias``; this journal only says where to look.
    """

    id = models.BigAutoField(primary_key=True)
    concept_id = models.BigIntegerField(null=True, blank=True)
    proposal_id = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(concept_id__isnull=True) | Q(proposal_id__isnull=True),
                name="namechange_one_endpoint",
            )
        ]

    def __str__(self) -> str:
        what = (
            f"concept {self.concept_id}"
            if self.concept_id is not None
            else f"proposal {self.proposal_id}"
            if self.proposal_id is not None
            else "every name"
        )
        return f"#{self.pk}: {what}"
