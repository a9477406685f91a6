"""Finding quotes in a text, and the one rule for "is this evidence still there?".

Quote finding compares with runs of whitespace collapsed (and typographic quotes, dashes
and Markdown emphasis ignored) but always returns offsets into the original text, so
``text[start:end]`` is what the reviewer sees.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left
from collections.abc import Sequence

from .text import EMPHASIS, TYPOGRAPHIC
from .types import Span

_NON_SPACE = re.compile(r"\S+")
_SPECIAL = re.compile("[" + re.escape("".join(chr(c) for c in TYPOGRAPHIC)) + "]")
_SPECIAL_OR_EMPHASIS = re.compile(
    "[" + re.escape("".join(chr(c) for c in TYPOGRAPHIC) + "".join(EMPHASIS)) + "]"
)


def _normalised_with_map(text: str, *, drop_emphasis: bool) -> tuple[str, array]:
    """The comparison form of ``text`` and, per character of it, its offset in ``text``.

    Whitespace runs become one space, typographic characters their ASCII forms, and
    (optionally) Markdown emphasis markers disappear. Words without such characters are
    copied whole, which keeps this fast on long texts.
    """
    special = _SPECIAL_OR_EMPHASIS if drop_emphasis else _SPECIAL
    pieces: list[str] = []
    # One machine integer per character: a list of Python ints would cost 36 bytes a
    # character, over 100 MB for a 1,000-page document.
    where = array("q")
    offsets: Sequence[int]
    for match in _NON_SPACE.finditer(text):
        token, base = match.group(), match.start()
        if special.search(token) is None:
            piece, offsets = token, range(base, base + len(token))
        else:
            chars: list[str] = []
            kept: list[int] = []
            for i, ch in enumerate(token):
                if drop_emphasis and ch in EMPHASIS:
                    continue
                for out in ch.translate(TYPOGRAPHIC):
                    chars.append(out)
                    kept.append(base + i)
            piece, offsets = "".join(chars), kept
            if not piece:
                continue
        if pieces:
            pieces.append(" ")
            where.append(base - 1)
        pieces.append(piece)
        where.extend(offsets)
    return "".join(pieces), where


class QuoteFinder:
    """Finds quotes in one text, normalising the text once for many quotes."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._haystack, self._where = _normalised_with_map(text, drop_emphasis=True)

    def find(self, quote: str, *, within: tuple[int, int] | None = None) -> Span | None:
        """Where ``quote`` occurs, compared with whitespace runs collapsed.

        Returns offsets into the original text and the original substring, or None.
        Typographic quotes and dashes count as their ASCII forms; Markdown emphasis
        markers are ignored. ``within`` (start, end offsets of the original text) looks
        there first, so a sentence repeated in a long document is found in the chunk
        that quoted it; anywhere else in the text is the fallback.
        """
        probe, _ = _normalised_with_map(
            quote.translate(TYPOGRAPHIC).strip().strip("\"'").strip(), drop_emphasis=True
        )
        if not probe.strip():
            return None
        at = -1
        if within is not None:
            lo = bisect_left(self._where, within[0])
            hi = bisect_left(self._where, within[1])
            at = self._haystack.find(probe, lo, hi)
        if at == -1:
            at = self._haystack.find(probe)
        if at == -1:
            return None
        start = self._where[at]
        end = self._where[at + len(probe) - 1] + 1
        start, end = _balance_emphasis(self.text, start, end)
        return Span(start=start, end=end, quote=self.text[start:end])


def find_quote(text: str, quote: str) -> Span | None:
    """Where ``quote`` occurs in ``text`` (see ``QuoteFinder.find``)."""
    return QuoteFinder(text).find(quote)


def _balance_emphasis(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen a span by the Markdown markers that open or close just outside it.

    "**RAG** is ..." quoted from "RAG" onwards would otherwise show a stray "**".
    """
    for marker in ("**", "__", "`", "*", "_"):
        inside = text[start:end].count(marker)
        if inside % 2 == 0:
            continue
        if text[max(0, start - len(marker)) : start] == marker:
            start -= len(marker)
        elif text[end : end + len(marker)] == marker:
            end += len(marker)
    return start, end


def quote_key(quote: str) -> str:
    """A comparison key for evidence: "is this the same evidence as before?"."""
    probe, _ = _normalised_with_map(quote, drop_emphasis=True)
    return probe.casefold().strip(" .\"'")


def evidence_present(quote: str, revision: str | QuoteFinder) -> bool:
    """Whether an edge's evidence quote is still in a revision's text (or its finder).

    The one rule, for the agents that retire edges whose evidence vanished and for the
    API's explanation of an edge: present when ``QuoteFinder.find`` finds it, that is
    with whitespace runs collapsed, typographic quotes and dashes read as ASCII and
    Markdown emphasis ignored, so a reformatted sentence still counts while a reworded
    one does not. An empty quote is never present. Pass a ``QuoteFinder`` to check many
    quotes against one text: it normalises the text once.
    """
    finder = revision if isinstance(revision, QuoteFinder) else QuoteFinder(revision)
    return finder.find(quote) is not None
