"""The rest of the ontology beyond the two vocabularies: which concept types a relation may
join (``RelationPattern``), which attributes a concept type declares (``Attribute``) and
the values concepts hold for them (``AttributeValue``, versioned like an edge).

Kept apart from ``models`` (which imports these classes) so each module stays short.
Every write goes through the graph services; a decision that makes a row is its audit
row, as for an edge.
"""

from __future__ import annotations

from django.db import models
from django.db.models import F, Q

from kgreview.core.nodelete import NoDeleteModel


class RelationPattern(NoDeleteModel):
    """A (domain type, range type) pair a relation allows: an edge of ``relation`` fits
    when its source's type is ``domain`` or below it and its target's type is ``range``
    or below it. A relation with no active pattern is open (any ends). For a symmetric
    relation a pattern holds both ways round. Retired, never deleted, so an as-of read
    sees the patterns of its instant (``created_at`` ≤ t < ``retired_at``).
    """

    DELETE_HINT = "retire it instead (retired patterns stay for history)"

    relation = models.ForeignKey(
        "graph.RelationType", on_delete=models.PROTECT, related_name="patterns"
    )
    domain = models.ForeignKey(
        "graph.ConceptType", on_delete=models.PROTECT, related_name="patterns_as_domain"
    )
    range = models.ForeignKey(
        "graph.ConceptType", on_delete=models.PROTECT, related_name="patterns_as_range"
    )
    description = models.TextField(blank=True)
    active = models.BooleanField(default=True)
    retired_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "graph"
        ordering = ["relation_id", "domain_id", "range_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["relation", "domain", "range"],
                condition=Q(active=True),
                name="relationpattern_one_active",
                violation_error_message="The relation already allows this pattern.",
            ),
            models.CheckConstraint(
                condition=Q(active=True, retired_at__isnull=True)
                | Q(active=False, retired_at__isnull=False),
                name="relationpattern_retired_has_time",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.relation_id}: {self.domain_id} → {self.range_id}"


class Attribute(NoDeleteModel):
    """An attribute a concept type declares ("default value" of a setting): a key, its
    words and a datatype from a small fixed set. A subtype inherits its parents'
    attributes. Retired, never deleted."""

    DELETE_HINT = "retire it instead (retired attributes stay for history)"

    class Datatype(models.TextChoices):
        STRING = "string", "Text"
        INTEGER = "integer", "Whole number"
        DECIMAL = "decimal", "Decimal number"
        BOOLEAN = "boolean", "Yes or no"
        DATE = "date", "Date"
        URI = "uri", "Web address (URI)"

    concept_type = models.ForeignKey(
        "graph.ConceptType", on_delete=models.PROTECT, related_name="attributes"
    )
    key = models.SlugField(max_length=64)
    label = models.CharField(max_length=100)
    datatype = models.CharField(max_length=16, choices=Datatype.choices)
    description = models.TextField(blank=True)
    active = models.BooleanField(default=True)
    retired_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "graph"
        ordering = ["concept_type_id", "key"]
        constraints = [
            models.UniqueConstraint(
                fields=["concept_type", "key"],
                name="attribute_key_unique_per_type",
                violation_error_message="The type already declares an attribute with this key.",
            ),
            models.CheckConstraint(
                condition=Q(active=True, retired_at__isnull=True)
                | Q(active=False, retired_at__isnull=False),
                name="attribute_retired_has_time",
            ),
            models.CheckConstraint(condition=~Q(label=""), name="attribute_label_not_empty"),
        ]

    def __str__(self) -> str:
        return f"{self.concept_type_id}.{self.key}"


class AttributeValue(NoDeleteModel):
    """A concept's value for an attribute, with the quote that states it, valid from
    ``recorded_at`` until ``invalid_at`` (a newer value or a retirement ends it; the row
    stays). ``value`` is the datatype's canonical lexical form (``graph.attribute_rules``).
    At most one value per concept and attribute is current."""

    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        SUPERSEDED = "superseded", "Superseded"
        RETIRED = "retired", "Retired"

    concept = models.ForeignKey(
        "graph.Concept", on_delete=models.PROTECT, related_name="attribute_values"
    )
    attribute = models.ForeignKey(Attribute, on_delete=models.PROTECT, related_name="values")
    value = models.TextField()
    evidence_revision = models.ForeignKey(
        "graph.SourceRevision",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="attribute_values",
    )
    evidence_start = models.PositiveIntegerField(null=True, blank=True)
    evidence_end = models.PositiveIntegerField(null=True, blank=True)
    evidence_quote = models.TextField(blank=True)
    recorded_at = models.DateTimeField()
    invalid_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)

    class Meta:
        app_label = "graph"
        ordering = ["concept_id", "attribute_id", "-recorded_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["concept", "attribute"],
                condition=Q(status="active"),
                name="attributevalue_one_current",
                violation_error_message="The concept already has a value for this attribute.",
            ),
            models.CheckConstraint(
                condition=Q(status="active", invalid_at__isnull=True)
                | (~Q(status="active") & Q(invalid_at__isnull=False)),
                name="attributevalue_ended_has_time",
            ),
            models.CheckConstraint(
                condition=Q(evidence_end__isnull=True)
                | Q(evidence_start__isnull=True)
                | Q(evidence_end__gte=F("evidence_start")),
                name="attributevalue_evidence_span",
            ),
        ]
        indexes = [
            models.Index(fields=["attribute", "status"], name="attributevalue_by_attribute"),
        ]

    def __str__(self) -> str:
        return f"{self.concept_id}.{self.attribute_id} = {self.value[:40]}"
