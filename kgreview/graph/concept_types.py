"""The concept vocabulary: the types a concept may have (a hierarchy a curator keeps),
and the history of each concept's type, read by every as-of question.

Kept apart from ``models`` (which imports these classes) so each module stays short.
Every write goes through ``kgreview.graph.services.concept_types``.
"""

from __future__ import annotations

from django.db import models
from django.db.models import F, Q

from kgreview.core.nodelete import AppendOnlyModel, NoDeleteModel


class ConceptType(NoDeleteModel):
    """A term of the concept vocabulary ("command", "setting"): retired, never deleted.

    ``parent`` makes a hierarchy (a subtype satisfies its parent); the services refuse a
    parent that would close a cycle (``graph.rules.parent_cycle_refusal``).
    """

    DELETE_HINT = "retire it instead (retired types stay for history)"

    key = models.SlugField(max_length=64, unique=True)
    label = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    guideline = models.TextField(
        blank=True,
        default="",
        db_default="",
        help_text="Markdown a curator writes: what the type means and when to give it, "
        "shown on its review cards (graph.services.guidelines).",
    )
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="children"
    )
    active = models.BooleanField(default=True)
    retired_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "graph"
        ordering = ["key"]
        constraints = [
            models.CheckConstraint(
                condition=Q(active=True, retired_at__isnull=True)
                | Q(active=False, retired_at__isnull=False),
                name="concepttype_retired_has_time",
            ),
            models.CheckConstraint(
                condition=~Q(parent=F("id")), name="concepttype_not_its_own_parent"
            ),
            models.CheckConstraint(condition=~Q(label=""), name="concepttype_label_not_empty"),
        ]

    def __str__(self) -> str:
        return self.key


class ConceptTypeChange(AppendOnlyModel):
    """A concept's type from ``changed_at`` on (``type`` null: untyped from then on).

    ``Concept.type`` is the type now; these rows are what it was. A concept with no row
    before an instant was untyped then. Written by ``services.concept_set_type`` in the
    transaction that changes ``Concept.type``, never updated.
    """

    concept = models.ForeignKey(
        "graph.Concept", on_delete=models.PROTECT, related_name="type_changes"
    )
    type = models.ForeignKey(
        ConceptType, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    changed_at = models.DateTimeField()

    class Meta:
        app_label = "graph"
        ordering = ["concept_id", "changed_at", "id"]
        indexes = [
            models.Index(fields=["concept", "changed_at"], name="concepttypechange_at"),
        ]

    def __str__(self) -> str:
        return f"{self.concept_id} is {self.type_id or 'untyped'} from {self.changed_at}"
