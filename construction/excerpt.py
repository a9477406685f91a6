"""Where an excerpt around a quote begins and ends: at sentence or paragraph boundaries.

A reviewer reads a quote in its context. Cut at a character count, the context starts
mid-word ("…ee we offer is…"); cut here, it starts where a paragraph or a sentence (a
list item, a heading) starts and ends where one ends, and holds as many whole sentences
as fit in the room given. Only a sentence longer than the room itself is cut, at a word,
and marked with an ellipsis.
"""

from __future__ import annotations

from construction.sentences import sentences

__all__ = ["excerpt_bounds", "head_of", "tail_of"]

ELLIPSIS = "…"
_WORD_SLACK = 40  # a cut looks this far for a space before giving up on whole words


def excerpt_bounds(text: str, start: int, end: int, *, limit: int) -> tuple[int, int, bool, bool]:
    """(begin, finish, cut_before, cut_after) of the excerpt around ``text[start:end]``.

    ``begin`` is the paragraph's start when it is at most ``limit`` characters before
    the quote, else the earliest sentence start within ``limit``, else the start of the
    sentence the quote begins in when that is within twice ``limit``; only then a word
    (``cut_before`` is true: show an ellipsis). ``finish`` likewise after ``end``.
    """
    para_start = text.rfind("\n\n", 0, start)
    para_start = 0 if para_start == -1 else para_start + 2
    para_end = text.find("\n\n", end)
    para_end = len(text) if para_end == -1 else para_end
    begin, cut_before = para_start, False
    if start - para_start > limit:
        begin, cut_before = _begin(text, para_start, start, limit)
    finish, cut_after = para_end, False
    if para_end - end > limit:
        finish, cut_after = _finish(text, end, para_end, limit)
    return begin, finish, cut_before, cut_after


def _begin(text: str, para_start: int, start: int, limit: int) -> tuple[int, bool]:
    low = max(para_start, start - 2 * limit)
    starts = [low + s for s, _, _ in sentences(text[low:start])]
    if low > para_start and starts:
        starts = starts[1:]  # the window's first "sentence" may start mid-sentence
    within = [s for s in starts if start - s <= limit]
    if within:
        return min(within), False
    if starts:
        return max(starts), False
    return _word_after(text, start - limit, start), True


def _finish(text: str, end: int, para_end: int, limit: int) -> tuple[int, bool]:
    high = min(para_end, end + 2 * limit)
    ends = [end + e for _, e, _ in sentences(text[end:high])]
    if high < para_end and ends:
        ends = ends[:-1]  # the window's last "sentence" may end mid-sentence
    within = [e for e in ends if e - end <= limit]
    if within:
        return max(within), False
    if ends:
        return min(ends), False
    return _word_before(text, end, end + limit), True


def _word_after(text: str, at: int, start: int) -> int:
    space = text.find(" ", at, min(start, at + _WORD_SLACK))
    return space + 1 if space != -1 else at


def _word_before(text: str, end: int, at: int) -> int:
    space = text.rfind(" ", max(end, at - _WORD_SLACK), at)
    return space if space != -1 else at


def tail_of(text: str, limit: int) -> str:
    """The end of ``text`` in at most about ``limit`` characters, starting at a sentence
    (whole sentences when any fit), else at a word after an ellipsis."""
    if len(text) <= limit:
        return text
    begin, _, cut, _ = excerpt_bounds(text, len(text), len(text), limit=limit)
    return (ELLIPSIS if cut else "") + text[begin:]


def head_of(text: str, limit: int) -> str:
    """The start of ``text`` in at most about ``limit`` characters, ending at a sentence
    (whole sentences when any fit), else at a word before an ellipsis."""
    if len(text) <= limit:
        return text
    _, finish, _, cut = excerpt_bounds(text, 0, 0, limit=limit)
    return text[:finish] + (ELLIPSIS if cut else "")
