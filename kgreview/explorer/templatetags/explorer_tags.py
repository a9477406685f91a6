"""Links into the explorer from server-rendered pages."""

from __future__ import annotations

from urllib.parse import urlencode

from django import template
from django.urls import reverse

from kgreview.explorer.selectors import iso_ms, just_before_retired
from kgreview.graph.models import Edge

register = template.Library()


@register.simple_tag
def explore_edge_url(edge: Edge) -> str:
    """The explorer centred on the edge's source with its panel open; a retired edge is
    shown as of an instant when it was still in the graph, so it is drawn too."""
    params = {"edge": edge.pk}
    if edge.invalid_at is not None:
        params["as_of"] = iso_ms(just_before_retired(edge), up=True)
    return f"{reverse('explorer:concept', args=[edge.source_id])}?{urlencode(params)}"
