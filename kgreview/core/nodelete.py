"""Guards that make hard deletes and edits of audit rows impossible through the ORM.

kgreview never forgets: edges are invalidated, concepts merged, sources retired,
proposals decided. A stray ``.delete()`` (in code, a shell or the admin) raises instead
of silently removing history. On PostgreSQL a trigger backs this up at the database.
"""

from __future__ import annotations

from typing import ClassVar

from django.db import models

from .errors import HardDeleteForbidden, ImmutableRecord


def _forbid_delete(model: type[models.Model]) -> HardDeleteForbidden:
    name = model._meta.verbose_name
    return HardDeleteForbidden(
        f"{name} rows are never deleted; "
        f"{getattr(model, 'DELETE_HINT', 'retire or invalidate it instead')}."
    )


class NoDeleteQuerySet(models.QuerySet):
    def delete(self):
        raise _forbid_delete(self.model)

    delete.queryset_only = True  # type: ignore[attr-defined]

    def _raw_delete(self, using):
        raise _forbid_delete(self.model)


# The manager class ``NoDeleteQuerySet.as_manager()`` builds, bound to a name so a model's
# own manager can subclass it (django-stubs reads ``from_queryset`` only at module level).
NoDeleteManager = models.Manager.from_queryset(NoDeleteQuerySet)


class NoDeleteModel(models.Model):
    """Abstract base: ``instance.delete()`` and ``queryset.delete()`` raise."""

    DELETE_HINT = "retire or invalidate it instead"

    objects = NoDeleteQuerySet.as_manager()

    class Meta:
        abstract = True

    def delete(self, *args, **kwargs):
        raise _forbid_delete(type(self))


class AppendOnlyQuerySet(NoDeleteQuerySet):
    def update(self, **kwargs):
        raise ImmutableRecord(
            f"{self.model._meta.verbose_name} rows are append-only and cannot be changed."
        )

    def bulk_update(self, objs, fields, batch_size=None):
        raise ImmutableRecord(
            f"{self.model._meta.verbose_name} rows are append-only and cannot be changed."
        )


class AppendOnlyModel(NoDeleteModel):
    """Abstract base for audit rows: written once, never updated, never deleted."""

    DELETE_HINT = "it is part of the audit trail"

    # ClassVar: django-stubs declares managers as class variables, so an override must say so.
    objects: ClassVar = AppendOnlyQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        # A guard, not business logic: an existing row must never be rewritten.
        if not self._state.adding:
            raise ImmutableRecord(
                f"{self._meta.verbose_name} #{self.pk} is append-only and cannot be changed."
            )
        super().save(*args, **kwargs)


# On PostgreSQL, the database itself refuses deletes and updates of history rows: the
# migrations that install the triggers share these functions.
FORBID_FUNCTIONS_SQL = """
CREATE OR REPLACE FUNCTION kgreview_forbid_delete() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'kgreview never deletes % rows; retire, invalidate or merge instead',
        TG_TABLE_NAME USING ERRCODE = 'restrict_violation';
END;
$$ LANGUAGE plpgsql;
CREATE OR REPLACE FUNCTION kgreview_forbid_update() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION '% rows are append-only', TG_TABLE_NAME
        USING ERRCODE = 'restrict_violation';
END;
$$ LANGUAGE plpgsql;
"""
