"""Helpers for tests of the curator's pages over HTTP."""

from __future__ import annotations

import html as htmllib
import re

from django.test import Client

HX = {"HX-Request": "true"}
HOSTILE = "<script>alert(1)</script>"


def client_for(f, role: str | None) -> Client:
    """A client signed in with ``role`` ("anonymous": not signed in; None: no role)."""
    client = Client()
    if role != "anonymous":
        client.force_login(f.user(role=role))
    return client


def page(response) -> str:
    return response.content.decode()


def flashes(response) -> list[tuple[str, str]]:
    """The messages shown on a page, as (level, text) with the HTML entities decoded."""
    found = re.findall(r'<li class="msg-(\w+)">(.*?)</li>', page(response), re.S)
    return [(level, htmllib.unescape(text)) for level, text in found]


def listed(response) -> list[str]:
    """The concept names in the first column of the concepts table, in page order."""
    names = re.findall(r'<td><a href="/concepts/\d+/">(.*?)</a></td>', page(response))
    return [htmllib.unescape(n) for n in names]


def reload(obj):
    obj.refresh_from_db()
    return obj
