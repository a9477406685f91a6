"""Words documentation pages use as furniture, shared by the HTML and PDF readers.

Documentation generators label a note or warning with one word set like a heading
("Note", "Tip"), and put a bar of links around the page ("Prev | Up | Home | Next",
"Edit this page"). These are the labels and link words that say nothing about the
subject; they are left out of the stored text.
"""

from __future__ import annotations

import re

__all__ = [
    "ADMONITION_LABELS",
    "BARE_LABELS",
    "EDIT_LINK",
    "NAV_WORDS",
    "is_admonition_label",
    "is_navigation_line",
    "navigation_lines",
]

# DocBook (note, tip, important, caution, warning), reStructuredText and Sphinx (attention,
# danger, error, hint, seealso, todo, versionadded...), MkDocs Material and GitHub alerts.
ADMONITION_LABELS = frozenset(
    {
        *("note", "notes", "tip", "tips", "hint", "important", "caution", "warning"),
        *("attention", "danger", "error", "see also", "seealso", "todo", "info"),
        *("information", "abstract", "summary", "tldr", "success", "check", "done"),
        *("question", "help", "faq", "failure", "fail", "missing", "bug", "example"),
        *("quote", "cite", "admonition", "remark", "remarks"),
    }
)

# Labels that stand for a note even outside a box that says so (a PDF has no boxes):
# never a section's own title, unlike "Example" or "See Also".
BARE_LABELS = frozenset({"note", "tip", "hint", "important", "caution", "warning", "danger"})

# Words of navigation bars: a line of two or more of these (and arrows), one of them
# "prev" or "next", is a bar, not text.
NAV_WORDS = frozenset({"prev", "previous", "next", "up", "home", "top", "contents", "index"})
_STEPS = frozenset({"prev", "previous", "next"})
_ARROWS = "«»‹›←→↑<>|·•/:\u2190-\u21ff\u25b2-\u25c4"

# Links that lead to the page's source rather than its subject.
EDIT_LINK = re.compile(
    r"^\W*(?:edit(?: this page| on \w+| page| source)?|view (?:page )?source|show source"
    r"|suggest (?:an )?edits?|improve this (?:page|doc\w*)|report an? (?:issue|problem|bug)"
    r"|view on \w+|open an issue|permalink(?: to this \w+)?|¶|#|back to top|skip to"
    r" (?:main )?content)\W*$",
    re.IGNORECASE,
)
_PREV_NEXT = re.compile(
    r"^\W*(?:prev(?:ious)?|«|‹|←)\b.*(?:\bnext|»|›|→)\W*$", re.IGNORECASE | re.DOTALL
)
_MAX_BAR_WORDS = 16
_STEP = re.compile(r"\b(?:prev|previous|next)\b|[«»‹›←→]", re.IGNORECASE)


def is_admonition_label(text: str) -> bool:
    """Whether a note's or warning's label is one of the generic ones ("Note:", "Tip")."""
    return " ".join(text.split()).strip(" :.!").casefold() in ADMONITION_LABELS


def is_navigation_line(text: str) -> bool:
    """Whether a line is a navigation bar: "Prev Up Chapter 13 … Home Next", or only
    navigation words ("Prev | Up | Next")."""
    words = text.split()
    if not words or len(words) > _MAX_BAR_WORDS:
        return False
    if _PREV_NEXT.match(text):
        # Bars name pages by their titles; prose ("Previous runs … see the next") has
        # lower-case words.
        return _title_like(words)
    tokens = re.sub(f"[{_ARROWS}]", " ", text.casefold()).split()
    return len(tokens) > 1 and bool(_STEPS & set(tokens)) and all(t in NAV_WORDS for t in tokens)


def _title_like(words: list[str]) -> bool:
    lower = [w for w in words if w[:1].islower() and w.casefold() not in NAV_WORDS]
    return len(lower) <= 1


_BAR_LINES = 3  # a bar set in large type wraps onto this many lines
_BAR_TAIL = 8  # lines of page titles a bar's second row may wrap onto
_TITLE_WORDS = 8


def navigation_lines(lines: list[str]) -> set[int]:
    """Indices of the lines that are a navigation bar, even wrapped over a few lines;
    and the page titles that follow a bar as its second row ("Chapter 25. Maintenance
    Tasks Home 25.2. Reindexing", DocBook's footer), when one of them is "Home"."""
    found: set[int] = set()
    steps = {i for i, line in enumerate(lines) if _STEP.search(line)}
    if not steps:
        return found  # no "prev", "next" or arrow, no bar: the common case, made cheap
    index = 0
    while index < len(lines):
        span = next(
            (
                n
                for n in range(1, _BAR_LINES + 1)
                if index + n <= len(lines)
                and not steps.isdisjoint(range(index, index + n))
                and is_navigation_line(" ".join(lines[index : index + n]))
            ),
            0,
        )
        if not span:
            index += 1
            continue
        found.update(range(index, index + span))
        index += span
        tail = []
        for after in range(index, min(index + _BAR_TAIL, len(lines))):
            words = lines[after].split()
            if not words or len(words) > _TITLE_WORDS or not _title_like(words):
                break
            tail.append(after)
        if any("Home" in lines[after].split() for after in tail):
            found.update(tail)
            index = tail[-1] + 1
    return found
