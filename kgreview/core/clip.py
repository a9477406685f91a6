"""Cutting long text for display at a word boundary, with an ellipsis.

Shared by the template tags of every app (evidence excerpts, review cards), so it sits
in core where any layer may reach it.
"""

from __future__ import annotations


def clip_start(text, limit=160) -> str:
    """The last ``limit`` characters, starting at a word boundary, with an ellipsis."""
    text = str(text or "")
    limit = int(limit)
    if len(text) <= limit:
        return text
    tail = text[-limit:]
    cut = tail.find(" ")
    return "…" + (tail[cut + 1 :] if 0 <= cut < 40 else tail)


def clip_end(text, limit=160) -> str:
    """The first ``limit`` characters, ending at a word boundary, with an ellipsis."""
    text = str(text or "")
    limit = int(limit)
    if len(text) <= limit:
        return text
    head = text[:limit]
    cut = head.rfind(" ")
    return (head[:cut] if cut > limit - 40 else head) + "…"
