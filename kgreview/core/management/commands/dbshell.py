"""Django's ``dbshell``, opening SQLite's shell with the app's own connection setup.

The ``init_command`` of the settings (WAL, ``recursive_triggers``) is run first, so an
``INSERT OR REPLACE`` typed at the shell meets the history tables' delete triggers just
as it does from the app (``kgreview.core.nodelete``). PostgreSQL's shell needs nothing:
its triggers hold for every session.
"""

from __future__ import annotations

from django.core.management.commands import dbshell
from django.db import connections


class Command(dbshell.Command):
    def handle(self, **options):
        connection = connections[options["database"]]
        init = connection.settings_dict.get("OPTIONS", {}).get("init_command")
        if connection.vendor == "sqlite" and init:
            options["parameters"] = ["-cmd", init, *options["parameters"]]
        return super().handle(**options)
