"""Highlights as offsets into the raw text (``Span``), and the map between the caller's
newlines and the ``\n`` markdown-it reads."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .sanitise import ALLOWED_ATTRIBUTES, DATA_ATTR, HIGHLIGHT_TAGS


@dataclass(frozen=True, slots=True, eq=False)
class Span:
    """A highlight over ``text[start:end]``.

    ``tag`` is ``mark`` or ``a`` (a link needs ``attrs["href"]``). ``attrs`` may hold
    ``class``, ``id``, ``title``, ``href`` (links only) and ``data-*``. Where spans overlap,
    a piece of text gets the tag and attributes of the covering span with the lowest
    ``rank`` (then the earliest given), ``data-spans`` listing the ``key`` of every
    covering span, and, when any covering span has a ``label``, a title joining them. An
    ``id`` goes on the first element the span gets to itself (ids must stay unique).
    """

    start: int
    end: int
    tag: str = "mark"
    attrs: Mapping[str, str] = field(default_factory=dict)
    key: str = ""
    label: str = ""
    rank: int = 0

    def __post_init__(self) -> None:
        if self.tag not in HIGHLIGHT_TAGS:
            raise ValueError(f"a highlight is <mark> or <a>, not <{self.tag}>")
        allowed = ALLOWED_ATTRIBUTES[self.tag]
        for name in self.attrs:
            if name not in allowed and not DATA_ATTR.match(name):
                raise ValueError(f"<{self.tag}> highlights cannot carry {name!r}")


def cover_attrs(spans: Sequence[Span], cover: Sequence[int]) -> dict[str, str]:
    """What a stretch of text says about every span covering it (``cover`` indexes
    ``spans``): ``title`` joining their labels and ``data-spans`` their keys, each only
    when there is one. The covering span that wins the look brings its own attributes."""
    attrs: dict[str, str] = {}
    labels = [spans[i].label for i in cover if spans[i].label]
    if labels:
        attrs["title"] = ", ".join(labels)
    keys = [spans[i].key for i in cover if spans[i].key]
    if keys:
        attrs["data-spans"] = " ".join(keys)
    return attrs


# --- newlines: markdown-it turns \r\n into \n, offsets stay in the caller's text --------


@dataclass(frozen=True, slots=True)
class _Newlines:
    removed: tuple[int, ...]  # raw offsets of each \r dropped from a \r\n

    def to_norm(self, raw: int) -> int:
        return raw - bisect_left(self.removed, raw)

    def to_raw(self, norm: int) -> int:
        shifted = [r - i for i, r in enumerate(self.removed)]
        return norm + bisect_right(shifted, norm - 1)


def normalise(text: str) -> tuple[str, _Newlines]:
    if "\r" not in text:
        return text, _Newlines(())
    removed = tuple(m.start() for m in re.finditer(r"\r(?=\n)", text))
    return text.replace("\r\n", "\n").replace("\r", "\n"), _Newlines(removed)
