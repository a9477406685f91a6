"""Django's ``flush``, able to empty kgreview's guarded tables on SQLite.

``flush`` empties every table on purpose (test teardown, a reset). PostgreSQL does it
with TRUNCATE, which row triggers do not see; SQLite deletes row by row, so the history
triggers are lifted for the flush and put back after it, whatever happens.
"""

from __future__ import annotations

from django.core.management.commands import flush
from django.db import DEFAULT_DB_ALIAS, connections

from kgreview.core.nodelete import drop_sqlite_guards, install_sqlite_guards


class Command(flush.Command):
    def handle(self, **options):
        connection = connections[options.get("database") or DEFAULT_DB_ALIAS]
        drop_sqlite_guards(connection)
        try:
            return super().handle(**options)
        finally:
            install_sqlite_guards(connection)
