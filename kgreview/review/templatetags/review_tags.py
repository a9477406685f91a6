"""Small template helpers for the review pages."""

from __future__ import annotations

from django import template

from construction.annotations import is_origin_flag
from kgreview.core.clip import clip_end, clip_start
from kgreview.review.kinds import kind_of

register = template.Library()


@register.filter
def get_item(mapping, key):
    """``mapping|get_item:key`` — a dict lookup with a variable key."""
    try:
        return mapping.get(key)
    except AttributeError:
        return None


@register.filter
def pct(value) -> str:
    try:
        return f"{float(value) * 100:.0f}%"
    except (TypeError, ValueError):
        return ""


@register.filter
def origin_flag(flag) -> bool:
    """Whether a flag names an annotator's work (``annotator:TOOL:WHO``): the Queue links
    it to the filter that shows that work alone."""
    return isinstance(flag, str) and is_origin_flag(flag)


# Clipping lives in core so the graph's evidence tags can share it without importing review.
register.filter("clip_start", clip_start)
register.filter("clip_end", clip_end)


@register.filter
def words(value) -> str:
    """snake_case as words: "new_concept" -> "new concept"."""
    return str(value or "").replace("_", " ")


@register.filter
def split(value, sep=None) -> list[str]:
    """``"a b"|split`` -> ["a", "b"]; for short literal lists in templates."""
    return str(value or "").split(sep)


@register.simple_tag(takes_context=True)
def kind_part(context, part: str, proposal, view=None):
    """``{% kind_part "row" p %}``: one part of the proposal kind's partial
    (``templates/review/cards/<kind>.html#<part>``), rendered with ``view``, the context
    the kind built (by default its row view, ``Kind.view``), as ``view`` and ``p``."""
    kind = kind_of(proposal)
    template = context.template.engine.get_template(f"{kind.partial}#{part}")
    with context.push(p=proposal, view=kind.view(proposal) if view is None else view):
        return template.render(context)
