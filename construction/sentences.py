"""Sentences: a Markdown text split into headings and sentences, with offsets into it."""

from __future__ import annotations

import re
from collections.abc import Iterator

ABBREVIATIONS = frozenset(
    {
        "e.g",
        "i.e",
        "a.k.a",
        "vs",
        "etc",
        "cf",
        "dr",
        "mr",
        "mrs",
        "ms",
        "fig",
        "al",
        "approx",
        "no",
        "vol",
        "eq",
        "resp",
        "incl",
    }
)
SENTENCE_END = re.compile(r"[.!?]+[\"')\]*_]*(?=\s)")
LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
HEADING_MARK = re.compile(r"^\s*#{1,6}\s+")


def block_spans(text: str) -> Iterator[tuple[int, int, bool]]:
    """Paragraphs, headings and list items as (start, end, is_heading)."""
    pos = 0
    para_start: int | None = None
    para_end = 0
    for line in text.splitlines(keepends=True):
        start, end = pos, pos + len(line.rstrip("\r\n"))
        pos += len(line)
        stripped = line.strip()
        heading = HEADING_MARK.match(line)
        item = LIST_MARK.match(line)
        if not stripped or heading or item:
            if para_start is not None:
                yield para_start, para_end, False
                para_start = None
            if heading:
                yield start + heading.end(), end, True
            elif item:
                para_start, para_end = start + item.end(), end
            continue
        if para_start is None:
            para_start = start + (len(line) - len(line.lstrip()))
        para_end = end
    if para_start is not None:
        yield para_start, para_end, False


def sentences(text: str) -> list[tuple[int, int, bool]]:
    """Sentence spans (start, end, is_heading) with offsets into ``text``."""
    spans: list[tuple[int, int, bool]] = []
    for block_start, block_end, is_heading in block_spans(text):
        if is_heading:
            spans.append((block_start, block_end, True))
            continue
        chunk = text[block_start:block_end]
        cursor = 0
        for match in SENTENCE_END.finditer(chunk):
            before = chunk[cursor : match.start()].rsplit(None, 1)
            last_word = before[-1].lower().rstrip(".") if before else ""
            if match.group().startswith(".") and (
                last_word in ABBREVIATIONS or (len(last_word) == 1 and last_word.isalpha())
            ):
                continue
            rest = chunk[match.end() :].lstrip()
            if rest and not (rest[0].isupper() or rest[0].isdigit() or rest[0] in "\"'(*_`["):
                continue
            end = match.end()
            if chunk[cursor:end].strip():
                spans.append(_trim(text, block_start + cursor, block_start + end))
            cursor = end
        if chunk[cursor:].strip():
            spans.append(_trim(text, block_start + cursor, block_end))
    return spans


def _trim(text: str, start: int, end: int) -> tuple[int, int, bool]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end, False
