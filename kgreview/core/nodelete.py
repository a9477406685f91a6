"""Guards that make hard deletes and edits of audit rows impossible through the ORM.

kgreview never forgets: edges are invalidated, concepts merged, sources retired,
proposals decided. A stray ``.delete()`` (in code, a shell or the admin) raises instead
of silently removing history. Triggers back this up at the database (PostgreSQL and
SQLite), against DELETE, UPDATE of append-only rows, TRUNCATE and SQLite's REPLACE.
"""

from __future__ import annotations

from typing import ClassVar

from django.conf import settings
from django.db import migrations, models

from .errors import HardDeleteForbidden, ImmutableRecord

# Models kgreview does not define but whose rows carry history, with what to do instead.
# Accounts are named by every decision, edge, run and token; the admin's log is history.
EXTERNAL_NO_DELETE = {
    settings.AUTH_USER_MODEL: "deactivate the account instead (untick Active): "
    "decisions, edges, runs and tokens name the people who made them",
    "admin.LogEntry": "it is the admin's change history",
}


def _concrete(model: type[models.Model]) -> type[models.Model]:
    """The table-owning model behind a proxy (the model itself otherwise)."""
    return model._meta.concrete_model or model


def _forbid_delete(model: type[models.Model]) -> HardDeleteForbidden:
    name = model._meta.verbose_name
    hint = EXTERNAL_NO_DELETE.get(_concrete(model)._meta.label) or getattr(
        model, "DELETE_HINT", "retire or invalidate it instead"
    )
    return HardDeleteForbidden(f"{name} rows are never deleted; {hint}.")


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
CREATE OR REPLACE FUNCTION kgreview_forbid_truncate() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION
        'kgreview never deletes % rows, not even by TRUNCATE; retire, invalidate or merge instead',
        TG_TABLE_NAME USING ERRCODE = 'restrict_violation';
END;
$$ LANGUAGE plpgsql;
"""


def _truncate_trigger(table: str) -> str:
    """TRUNCATE fires no row trigger (nor does ``TRUNCATE … CASCADE`` on the tables it
    reaches): a statement trigger refuses it on every table that refuses a DELETE."""
    return (
        f'CREATE TRIGGER "{table}_no_truncate" BEFORE TRUNCATE ON "{table}" '
        "FOR EACH STATEMENT EXECUTE FUNCTION kgreview_forbid_truncate()"
    )


def _pg_tables_calling(cursor, function: str) -> list[str]:
    """The tables (in the search path) with a trigger that calls this function."""
    cursor.execute(
        "SELECT DISTINCT c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
        "WHERE t.tgfoid = to_regproc(%s) AND pg_table_is_visible(c.oid) ORDER BY c.relname",
        [function],
    )
    return [table for (table,) in cursor.fetchall()]


def truncate_guards() -> migrations.RunPython:
    """A migration operation: every table whose rows a trigger keeps from DELETE gets a
    BEFORE TRUNCATE trigger too. The guarded tables are read off the database's own
    triggers, so no list of them is repeated here; ``history_triggers`` adds the
    TRUNCATE trigger itself for tables it guards from now on."""

    def forwards(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        schema_editor.execute(FORBID_FUNCTIONS_SQL, params=None)
        with schema_editor.connection.cursor() as cursor:
            guarded = _pg_tables_calling(cursor, "kgreview_forbid_delete")
            done = set(_pg_tables_calling(cursor, "kgreview_forbid_truncate"))
        for table in guarded:
            if table not in done:
                schema_editor.execute(_truncate_trigger(table))

    def backwards(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        with schema_editor.connection.cursor() as cursor:
            guarded = _pg_tables_calling(cursor, "kgreview_forbid_truncate")
        for table in guarded:
            schema_editor.execute(f'DROP TRIGGER IF EXISTS "{table}_no_truncate" ON "{table}"')
        schema_editor.execute("DROP FUNCTION IF EXISTS kgreview_forbid_truncate()")

    return migrations.RunPython(forwards, backwards)


def lift_truncate_guards(connection, enable: bool) -> None:
    """Switch the TRUNCATE triggers off (``flush``, inside its transaction) and on again."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        tables = _pg_tables_calling(cursor, "kgreview_forbid_truncate")
        switch = "ENABLE" if enable else "DISABLE"
        for table in tables:
            cursor.execute(f'ALTER TABLE "{table}" {switch} TRIGGER "{table}_no_truncate"')


def history_triggers(no_delete: list[str], no_update: tuple[str, ...] = ()) -> migrations.RunPython:
    """A migration operation installing the PostgreSQL triggers for these models (labels).

    Tables are looked up through the migration's own app registry, so a swapped user
    model is guarded under its real table name. SQLite gets its triggers after every
    ``migrate`` instead (``install_sqlite_guards``): rebuilding a table there drops them.
    """

    def tables(apps, labels) -> list[str]:
        return [apps.get_model(label)._meta.db_table for label in labels]

    def forwards(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        # No parameters: the "%" in RAISE must reach PL/pgSQL untouched.
        schema_editor.execute(FORBID_FUNCTIONS_SQL, params=None)
        for table in tables(apps, no_delete):
            schema_editor.execute(
                f'CREATE TRIGGER "{table}_no_delete" BEFORE DELETE ON "{table}" '
                "FOR EACH ROW EXECUTE FUNCTION kgreview_forbid_delete()"
            )
            schema_editor.execute(f'DROP TRIGGER IF EXISTS "{table}_no_truncate" ON "{table}"')
            schema_editor.execute(_truncate_trigger(table))
        for table in tables(apps, no_update):
            schema_editor.execute(
                f'CREATE TRIGGER "{table}_no_update" BEFORE UPDATE ON "{table}" '
                "FOR EACH ROW EXECUTE FUNCTION kgreview_forbid_update()"
            )

    def backwards(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        for table in tables(apps, no_delete):
            schema_editor.execute(f'DROP TRIGGER IF EXISTS "{table}_no_delete" ON "{table}"')
            schema_editor.execute(f'DROP TRIGGER IF EXISTS "{table}_no_truncate" ON "{table}"')
        for table in tables(apps, no_update):
            schema_editor.execute(f'DROP TRIGGER IF EXISTS "{table}_no_update" ON "{table}"')

    return migrations.RunPython(forwards, backwards)


# --- The guard on every path, whoever calls it --------------------------------------------
# ``instance.delete()`` and ``queryset.delete()`` raise in the classes above, but
# ``models.Model.delete(obj)``, ``models.QuerySet.delete(qs)`` and cascades go through
# Django's deletion Collector. It sends ``pre_delete`` for every row it is about to
# delete, and never takes the fast path (``_raw_delete``) for a model with receivers; so
# a receiver per guarded model refuses them all, before any SQL runs.


def guarded_models() -> dict[type[models.Model], bool]:
    """Every installed model whose rows are never deleted -> whether it is append-only."""
    from django.apps import apps

    guarded: dict[type[models.Model], bool] = {}
    for candidate in apps.get_models(include_auto_created=True):
        model = _concrete(candidate)
        if issubclass(model, NoDeleteModel) or model._meta.label in EXTERNAL_NO_DELETE:
            guarded[model] = issubclass(model, AppendOnlyModel)
    return guarded


def _refuse_delete(sender, instance, **kwargs):
    raise _forbid_delete(sender)


def _refuse_rewrite(sender, instance, raw=False, **kwargs):
    if not instance._state.adding:
        raise ImmutableRecord(
            f"{sender._meta.verbose_name} #{instance.pk} is append-only and cannot be changed."
        )


def connect_guards() -> None:
    """Connect the refusal to every guarded model and its proxies (from ``ready()``)."""
    from django.apps import apps
    from django.db.models.signals import pre_delete, pre_save

    guarded = guarded_models()
    for model in apps.get_models(include_auto_created=True):
        append_only = guarded.get(_concrete(model))
        if append_only is None:
            continue
        uid = f"kgreview.nodelete:{model._meta.label}"
        pre_delete.connect(_refuse_delete, sender=model, weak=False, dispatch_uid=uid)
        if append_only:
            pre_save.connect(_refuse_rewrite, sender=model, weak=False, dispatch_uid=uid)


# --- SQLite: triggers too, so raw SQL and ``dbshell`` are refused on the embedded default ---
# They are (re)installed after every ``migrate`` rather than by migrations: SQLite alters a
# table by rebuilding it, which silently drops its triggers. ``flush`` (tests, a reset)
# lifts them for its own DELETEs and puts them back (on PostgreSQL it switches the TRUNCATE
# triggers off inside its transaction). A REPLACE (``INSERT OR REPLACE``, ``UPDATE OR
# REPLACE``) deletes the row it replaces, and fires delete triggers for it only with
# ``PRAGMA recursive_triggers`` on: the settings' ``init_command`` turns it on for every
# connection the app opens, and ``dbshell`` runs that command first.


def _sqlite_triggers(connection) -> list[tuple[str, str]]:
    """(trigger name, its body) for every guarded table that exists; the messages are
    PostgreSQL's."""
    tables = set(connection.introspection.table_names())
    triggers = []
    for model, append_only in guarded_models().items():
        table = model._meta.db_table
        if table not in tables:
            continue
        refusal = f"kgreview never deletes {table} rows; retire, invalidate or merge instead"
        triggers.append(
            (
                f"{table}_no_delete",
                f"BEFORE DELETE ON \"{table}\" BEGIN SELECT RAISE(ABORT, '{refusal}'); END",
            )
        )
        if append_only:
            refusal = f"{table} rows are append-only"
            triggers.append(
                (
                    f"{table}_no_update",
                    f"BEFORE UPDATE ON \"{table}\" BEGIN SELECT RAISE(ABORT, '{refusal}'); END",
                )
            )
    return triggers


def install_sqlite_guards(connection) -> None:
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        for name, body in _sqlite_triggers(connection):
            cursor.execute(f'CREATE TRIGGER IF NOT EXISTS "{name}" {body}')


def drop_sqlite_guards(connection) -> None:
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        for name, _body in _sqlite_triggers(connection):
            cursor.execute(f'DROP TRIGGER IF EXISTS "{name}"')


def install_sqlite_guards_after_migrate(sender, using="default", **kwargs) -> None:
    from django.db import connections

    install_sqlite_guards(connections[using])
