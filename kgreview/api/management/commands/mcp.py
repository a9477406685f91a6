"""manage.py mcp — the MCP server over stdio, for an agent that runs kgreview's commands.

An agent (Claude Desktop, an IDE, any MCP client) starts this command and speaks MCP on
its standard input and output; nothing else is written to stdout. The process reads the
database directly, so whoever may start it may already read the graph: without
``--user`` it reads as the operator, unlimited; with ``--user NAME`` it reads as that
account (which needs a role), under the account's API rate limits. docs/mcp.md shows
the client configuration.
"""

from __future__ import annotations

import anyio
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from kgreview.api.mcp.server import SERVER, Caller, reading_as
from kgreview.core.permissions import can_view


class Command(BaseCommand):
    help = (
        "Serve kgreview's MCP tools (search, concepts, walks, ask, explain) over stdio. "
        "--user NAME reads as that account, under its API rate limits."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--user",
            default="",
            help="The account the agent reads as (its rate limits apply); the operator "
            "when left out.",
        )

    def handle(self, *args, user: str, **opts):
        account = None
        if user:
            account = get_user_model().objects.filter(username=user).first()
            if account is None:
                raise CommandError(f"There is no user called {user!r}.")
            if not account.is_active or not can_view(account):
                raise CommandError(
                    f"{user} may not read the graph (an inactive account, or one without a "
                    "role); ask a curator for a role."
                )
        reading_as(Caller(user=account, own_thread=True))
        anyio.run(SERVER.run_stdio_async)
