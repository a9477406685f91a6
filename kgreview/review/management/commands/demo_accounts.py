"""manage.py demo_accounts — one demo user per role, and how to log in."""

from __future__ import annotations

import os

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

ROLES = [
    ("reviewer", "decides proposals in the review queue"),
    ("curator", "also shapes the ontology, merges concepts, schedules agents, uses the admin"),
    ("viewer", "reads the graph and the queue"),
]


class Command(BaseCommand):
    help = "Create (or reset) the demo accounts reviewer, curator and viewer."

    def add_arguments(self, parser):
        parser.add_argument(
            "--password",
            default=os.environ.get("KG_DEMO_PASSWORD", "kgreview-demo"),
            help="password for all three accounts (default: $KG_DEMO_PASSWORD or kgreview-demo)",
        )

    @transaction.atomic
    def handle(self, *args, password: str, **opts):
        User = get_user_model()
        for role, _ in ROLES:
            try:
                group = Group.objects.get(name=role)
            except Group.DoesNotExist:
                raise CommandError(
                    f"Group {role!r} is missing: run manage.py migrate first."
                ) from None
            user, _ = User.objects.get_or_create(username=role)
            user.set_password(password)
            user.is_active = True
            user.is_staff = role == "curator"
            user.save()
            user.groups.set([group])
        self.stdout.write(f"Demo accounts (password for each: {password}):")
        for role, does in ROLES:
            self.stdout.write(f"  {role:<9} {does}")
