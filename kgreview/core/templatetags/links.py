"""``{% page_url "concept" c.pk %}``: the page of a role, as ``kgreview.core.links``
provides it, so a lower app's template links to a higher app's page without naming it."""

from __future__ import annotations

from django import template

from kgreview.core import links

register = template.Library()


@register.simple_tag
def page_url(role: str, *args) -> str:
    """The path of the page of ``role``; empty when no installed app provides one."""
    if role not in links.provided():
        return ""
    return links.url(role, *args)
