"""``{% bootstrap_panel %}``: the Ontology page's bootstrap panel (the last run, and for
curators the button), rendered by the agents app that owns it."""

from __future__ import annotations

from django import template

from kgreview.agents.bootstrap_views import PANEL, panel_context

register = template.Library()


@register.inclusion_tag(PANEL, takes_context=True)
def bootstrap_panel(context) -> dict:
    request = context["request"]
    return {
        **panel_context(request.user),
        "request": request,
        "csrf_token": context.get("csrf_token"),
    }
