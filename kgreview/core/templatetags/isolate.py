"""``{{ name|bdi }}``: a name set inside a sentence, isolated so its direction stays its own.

A concept's name in a right-to-left script, or one an old row still spells with a bidi
override ("Evil\u202egnp.exe"), would otherwise reorder the words around it: the claim
"Evil… contrasts with Vectors" printed with its verb and its other end backwards. Inside
``<bdi>`` the browser lays the name out on its own and the sentence keeps its order.
"""

from __future__ import annotations

from django import template
from django.utils.html import format_html

register = template.Library()


@register.filter(is_safe=True)
def bdi(value) -> str:
    """The value, escaped, inside ``<bdi>…</bdi>``."""
    return format_html("<bdi>{}</bdi>", "" if value is None else value)
