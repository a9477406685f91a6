"""The login backend: Django's own, loading a signed-in user's roles with the user.

Every request reads its user once (the session's user id); reading the roles in that
same query, as one EXISTS per role, saves each request the query for the user's groups,
and stays exactly as fresh as the user row itself.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group
from django.db.models import Exists, OuterRef

from kgreview.core.permissions import ROLES, remember_roles


class RoleBackend(ModelBackend):
    def get_user(self, user_id):
        model = get_user_model()
        flags = {
            f"kg_role_{name}": Exists(Group.objects.filter(user=OuterRef("pk"), name=name))
            for name in sorted(ROLES)
        }
        try:
            user = model._default_manager.annotate(**flags).get(pk=user_id)
        except model.DoesNotExist:
            return None
        if not self.user_can_authenticate(user):
            return None
        remember_roles(user, frozenset(name for name in ROLES if getattr(user, f"kg_role_{name}")))
        return user
