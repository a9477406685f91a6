"""``plain_text``: the words of a Markdown snippet as a reader sees them, on one line.

For places that show a short excerpt in a list (the queue's quote under each row), where
rendering blocks would be too much and the raw syntax (``**``, ``# ``, ``[..](..)``) is
noise. It makes no HTML, so there is nothing to sanitise: the template escapes the words.
"""

from __future__ import annotations

from .parser import MD

# Parsing is linear, but a snippet shows about a line: read no more than a few of them.
READ_AT_MOST = 600


def plain_text(text: str, *, read_at_most: int = READ_AT_MOST) -> str:
    """``text`` (Markdown) without its syntax: emphasis, headings, list and quote markers
    and link targets gone, an image by its alt text, code by its content; whitespace,
    line breaks included, folded to single spaces. Raw HTML in the text stays text (the
    parser never reads it as HTML)."""
    words: list[str] = []
    for token in MD.parse((text or "")[:read_at_most], {}):
        if token.type == "inline":
            for child in token.children or ():
                if child.type in ("text", "code_inline", "image"):
                    words.append(child.content)
                elif child.type in ("softbreak", "hardbreak"):
                    words.append(" ")
            words.append(" ")
        elif token.type in ("fence", "code_block"):
            words.extend((token.content, " "))
    return " ".join("".join(words).split())
