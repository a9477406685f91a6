"""A chunk's prose as sentences the pipeline can read, and the marks that set terms apart.

Stored text is light Markdown (Markdown files, and HTML and Word as they are stored) or
plain text (PDF, .txt). The parser should see words, not ``**`` or backticks, yet every
offset must still point into the stored text, where the quote is. So each sentence is
read into a clean string with a map from each clean character back to the original, and
the Markdown around a stretch of it is kept as a mark: inline code (an identifier, a
command, a setting: kept verbatim, case and all), strong or emphasised words (a term
being introduced), a heading.

What is not prose is left out: fenced and indented code blocks, table rows (cells joined
by " | "), link targets and images, lines of punctuation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..sentences import sentences

__all__ = ["Mark", "Sentence", "read_sentences"]

FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)
INDENTED_CODE = re.compile(r"(?:^(?: {4}|\t)[^\n]*\n?){2,}", re.MULTILINE)
TABLE_ROW = re.compile(r"^[^\n]*\S \| \S[^\n]*$", re.MULTILINE)
RULE_LINE = re.compile(r"^[ \t]*[-=*_|:]{3,}[ \t]*$", re.MULTILINE)

# Inline markup, tried left to right; each names how its content is marked.
_CODE = re.compile(r"(`+)(?P<body>[^`\n]+?)\1")
_IMAGE = re.compile(r"!\[[^\]\n]*\]\([^)\n]*\)")
_LINK = re.compile(r"\[(?P<body>[^\]\n]+)\]\([^)\n]*\)")
_STRONG = re.compile(r"(?<![\w*_])(\*\*|__)(?=\S)(?P<body>[^\n]+?)(?<=\S)\1(?![\w*_])")
_EMPH = re.compile(r"(?<![\w*_\\])([*_])(?=[^\s*_])(?P<body>[^\n*_]+?)(?<=[^\s*_])\1(?![\w*_])")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|])")

MAX_SENTENCE_CHARS = 600  # longer is a table or a list run together, not a sentence
MIN_WORDS = 3
MAX_LABEL_WORDS = 8


@dataclass(frozen=True)
class Mark:
    """A stretch of the clean text with Markdown around it in the original."""

    start: int
    end: int
    kind: str  # "code", "strong", "emphasis", "link"


@dataclass
class Sentence:
    """One sentence: where it is in the chunk, and its words without the markup."""

    start: int
    end: int
    heading: bool
    clean: str
    offsets: list[int]  # clean index -> chunk index (one more entry: the end)
    marks: list[Mark] = field(default_factory=list)
    # A short line standing alone (a definition-list term, "`wal_level` (enum)"): it
    # names what the paragraph after it is about, and is read like a heading.
    label: bool = False
    block: int = 0  # paragraphs, headings and list items counted from the chunk's start

    def original(self, start: int, end: int) -> tuple[int, int]:
        """Chunk offsets of the clean stretch ``[start, end)``."""
        return self.offsets[start], self.offsets[end - 1] + 1 if end > start else self.offsets[end]

    def marked(self, start: int, end: int) -> set[str]:
        """The kinds of marks that cover the clean stretch ``[start, end)`` whole."""
        return {m.kind for m in self.marks if m.start <= start and end <= m.end}


def _blocked(text: str) -> list[tuple[int, int]]:
    spans = [m.span() for m in FENCE.finditer(text)]
    spans += [m.span() for m in INDENTED_CODE.finditer(text)]
    spans += [m.span() for m in TABLE_ROW.finditer(text)]
    spans += [m.span() for m in RULE_LINE.finditer(text)]
    return sorted(spans)


def read_sentences(text: str, *, markdown: bool = True) -> list[Sentence]:
    """The prose sentences and headings of ``text``, each cleaned of its markup."""
    blocked = _blocked(text)
    out = []
    block, previous_end = 0, 0
    for start, end, heading in sentences(text):
        if heading or "\n" in text[previous_end:start]:
            block += 1
        previous_end = end
        if end - start > MAX_SENTENCE_CHARS and not heading:
            continue
        if any(lo < end and start < hi for lo, hi in blocked):
            continue
        sentence = _clean(text, start, end, heading, markdown=markdown)
        if sentence is not None:
            sentence.block = block
            if heading:
                block += 1  # what follows a heading is a block of its own
            out.append(sentence)
    return out


def _clean(text: str, start: int, end: int, heading: bool, *, markdown: bool) -> Sentence | None:
    chars: list[str] = []
    offsets: list[int] = []
    marks: list[Mark] = []
    raw = text[start:end]

    def emit(piece: str, at: int) -> None:
        for k, ch in enumerate(piece):
            if ch in "\r\n\t":
                ch = " "
            if ch == " " and chars and chars[-1] == " ":
                continue
            chars.append(ch)
            offsets.append(at + k)

    if not markdown:
        emit(raw, start)
    else:
        _inline(raw, start, emit, chars, marks)
    while chars and chars[-1] == " ":
        chars.pop()
        offsets.pop()
    lead = 0
    while lead < len(chars) and chars[lead] == " ":
        lead += 1
    clean = "".join(chars[lead:])
    offsets = offsets[lead:]
    if lead:
        marks = [Mark(m.start - lead, m.end - lead, m.kind) for m in marks]
    if not any(c.isalpha() for c in clean):
        return None
    words = len(clean.split())
    label = not heading and words <= MAX_LABEL_WORDS and _standalone(text, start, end, clean)
    if words < (1 if heading or label else MIN_WORDS):
        return None
    offsets.append(offsets[-1] + 1)
    return Sentence(
        start=start,
        end=end,
        heading=heading,
        clean=clean,
        offsets=offsets,
        marks=marks,
        label=label,
    )


def _standalone(text: str, start: int, end: int, clean: str) -> bool:
    """A line on its own, not a sentence: blank lines (or the text's ends) around it and
    no full stop at its end."""
    before = text[max(0, start - 2) : start]
    after = text[end : end + 2]
    alone = (start == 0 or before.endswith("\n\n") or before == "\n") and (
        end == len(text) or after.startswith("\n\n") or after == "\n"
    )
    return alone and not clean.rstrip().endswith((".", ":", ";", ",", "!", "?"))


def _inline(raw: str, base: int, emit, chars: list[str], marks: list[Mark]) -> None:
    """Copy ``raw`` without its inline Markdown, recording what each piece was."""
    pos = 0
    patterns: tuple[tuple[re.Pattern[str], str | None], ...] = (
        (_CODE, "code"),
        (_IMAGE, None),
        (_LINK, "link"),
        (_STRONG, "strong"),
        (_EMPH, "emphasis"),
        (_ESCAPE, None),
    )
    while pos < len(raw):
        best = None
        for pattern, kind in patterns:
            found = pattern.search(raw, pos)
            if found and (best is None or found.start() < best[0].start()):
                best = (found, kind)
        if best is None:
            emit(raw[pos:], base + pos)
            return
        found, kind = best
        emit(raw[pos : found.start()], base + pos)
        if found.re is _ESCAPE:
            emit(found.group(1), base + found.start(1))
        elif kind is not None:
            lo = len(chars)
            body = found.start("body")
            if kind == "code":
                emit(found.group("body"), base + body)
            else:
                _inline(found.group("body"), base + body, emit, chars, marks)
            if len(chars) > lo:
                first = lo + (1 if chars[lo] == " " and len(chars) > lo + 1 else 0)
                marks.append(Mark(first, len(chars), kind))
        pos = found.end()
