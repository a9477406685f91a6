"""Clients of the review workspace tests, by role."""

from __future__ import annotations

from django.test import Client

from tests.pages import HX

__all__ = ["HX", "client_for"]


def client_for(f, role: str | None) -> Client:
    client = Client()
    if role == "anonymous":
        return client
    user = f.user(f"{role or 'nogroup'}-user", role=role)
    client.force_login(user)
    return client
