"""Make, list and revoke API tokens from the command line (``read`` or ``propose``).

The command line acts as the system: its changes are in the curation log without a user.
"""

from __future__ import annotations

import json

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from kgreview.api import services
from kgreview.api.models import ApiToken
from kgreview.core.errors import DomainError


class Command(BaseCommand):
    help = (
        "API tokens for downstream agents. "
        "`api_token create --user NAME --name LABEL [--scope read|propose]` prints the "
        "token once; "
        "`api_token list [--user NAME]`; `api_token revoke PREFIX`."
    )

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="Make a token and print it (only this once).")
        create.add_argument("--user", required=True, help="The account the token reads as.")
        create.add_argument("--name", required=True, help="What uses it, e.g. tutor-bot.")
        create.add_argument(
            "--scope",
            choices=["read", "propose"],
            default="read",
            help="read (the default) only reads; propose may also submit proposals for "
            "review (POST /api/v1/proposals).",
        )
        create.add_argument("--json", action="store_true")
        listing = sub.add_parser("list", help="Tokens with their prefix, owner and last use.")
        listing.add_argument("--user", default="")
        listing.add_argument("--json", action="store_true")
        revoke = sub.add_parser("revoke", help="Revoke a token by its prefix.")
        revoke.add_argument("prefix", help="The 8 characters after kgr_ in the token.")

    def handle(self, *args, **opts):
        action = opts["action"]
        if action == "create":
            return self._create(opts)
        if action == "list":
            return self._list(opts)
        return self._revoke(opts)

    def _user(self, username: str):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"There is no user called {username!r}.")
        return user

    def _create(self, opts):
        user = self._user(opts["user"])
        try:
            issued = services.api_token_create(
                owner=user, name=opts["name"], acting_user=None, scope=opts["scope"]
            )
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        if opts["json"]:
            self.stdout.write(
                json.dumps(
                    {
                        "token": issued.secret,
                        "prefix": issued.token.prefix,
                        "user": user.username,
                        "scope": issued.token.scope,
                    }
                )
            )
        else:
            self.stdout.write(issued.secret)
            self.stderr.write(
                f"Token {issued.token.name!r} ({issued.token.scope}) for {user.username}: "
                "copy it now, it is not shown again. Send it as 'Authorization: Bearer <token>'."
            )

    def _list(self, opts):
        qs = ApiToken.objects.select_related("user").order_by("-created_at", "-id")
        if opts["user"]:
            qs = qs.filter(user=self._user(opts["user"]))
        rows = [
            {
                "prefix": t.prefix,
                "name": t.name,
                "user": t.user.username,
                "scope": t.scope,
                "created_at": t.created_at.isoformat(),
                "last_used_at": t.last_used_at.isoformat() if t.last_used_at else None,
                "revoked_at": t.revoked_at.isoformat() if t.revoked_at else None,
            }
            for t in qs
        ]
        if opts["json"]:
            self.stdout.write(json.dumps({"tokens": rows}))
            return
        for r in rows:
            state = f"revoked {r['revoked_at']}" if r["revoked_at"] else "active"
            used = r["last_used_at"] or "never used"
            self.stdout.write(
                f"kgr_{r['prefix']}_…  {r['name']}  ({r['user']}; {r['scope']}; {state}; {used})"
            )

    def _revoke(self, opts):
        token = ApiToken.objects.select_related("user").filter(prefix=opts["prefix"]).first()
        if token is None:
            raise CommandError(f"No token starts kgr_{opts['prefix']}_.")
        try:
            services.api_token_revoke(token=token, acting_user=None)
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"Revoked {token.name} ({token.user.username}).")
