"""Small template helpers for the review pages."""

from __future__ import annotations

from django import template

from kgreview.core.clip import clip_end, clip_start

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
