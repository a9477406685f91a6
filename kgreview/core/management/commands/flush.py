"""Django's ``flush``, able to empty kgreview's guarded tables.

``flush`` empties every table on purpose (test teardown, a reset). PostgreSQL does it
with TRUNCATE, which the history tables' ``BEFORE TRUNCATE`` triggers refuse: they are
switched off and on again inside the flush's one transaction, so no other session ever
sees them off. SQLite deletes row by row, so the history triggers are lifted for the
flush and put back after it, whatever happens.
"""

from __future__ import annotations

from django.core.management.commands import flush
from django.db import DEFAULT_DB_ALIAS, connections, transaction

from kgreview.core.nodelete import drop_sqlite_guards, install_sqlite_guards, lift_truncate_guards


class Command(flush.Command):
    def handle(self, **options):
        database = options.get("database") or DEFAULT_DB_ALIAS
        connection = connections[database]
        if connection.vendor == "postgresql":
            with transaction.atomic(using=database):
                lift_truncate_guards(connection, enable=False)
                result = super().handle(**options)
                lift_truncate_guards(connection, enable=True)
            return result
        drop_sqlite_guards(connection)
        try:
            return super().handle(**options)
        finally:
            install_sqlite_guards(connection)
