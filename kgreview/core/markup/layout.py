"""The first pass over the raw text: where in each line a sentinel may go without
changing how the text parses, and where a boundary that may not moves to."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.helpers import parseLinkDestination, parseLinkTitle

# The first pass needs only the blocks: where each line's content lies, and the references.
_BLOCKS = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
_BLOCKS.core.ruler.disable(["inline", "text_join"])


# The escape rule takes a backslash and whatever follows it (shown as is if not punctuation).
_ESCAPE = re.compile(r"\\.", re.DOTALL)
_ENTITY = re.compile(r"&(?:#[xX][0-9A-Fa-f]{1,6}|#[0-9]{1,7}|[A-Za-z][A-Za-z0-9]{1,31});")
_RUN = re.compile(r"\*{2,}|_{2,}|~{2,}|`{2,}")
# A code span drops one space inside each backtick run when both are there; a sentinel
# between the run and the space would keep it.
_CODE_PADDING = (re.compile(r"`+[ \t\n]+"), re.compile(r"[ \t\n]+`+"))
_AUTOLINK = re.compile(
    r"<[A-Za-z][A-Za-z0-9+.\-]{1,31}:[^<>\x00-\x20]*>"
    r"|<[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*>"
)
_BLOCKY = frozenset("`~>-+*#_=0123456789")
_REF_USE = re.compile(r"\](?=\[([^\[\]]{0,999})\])")  # lookahead: "[a][b][c]" overlaps
_BLOCK_PREFIX = re.compile(r"(?:[ \t]*(?:>|(?:[-+*]|\d{1,9}[.)]|#{1,6})(?=[ \t]|$)))*[ \t]*")


def _normalise_label(label: str) -> str:
    return re.sub(r"\s+", " ", label.strip()).lower().upper()


@dataclass(frozen=True, slots=True)
class _Zone:
    """Positions ``lo < p < hi`` take no sentinel; a start moves to ``to_start``."""

    lo: int
    hi: int
    to_start: int
    to_end: int


@dataclass
class _Layout:
    """The first pass: per line, where content lies; inside it, what a sentinel breaks."""

    text: str
    content: list[tuple[int, int, bool, int]]  # (start, end, is_code, block): sorted
    guarded: frozenset[int]  # content starts that must not take a sentinel (see _layout)
    zones: list[_Zone]  # sorted by lo
    hidden: list[tuple[int, int]]  # raw ranges inside content that rendering never shows
    _starts: list[int] = field(default_factory=list)
    _zone_los: list[int] = field(default_factory=list)
    _zone_reach: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._starts = [a for a, *_ in self.content]
        self._zone_los = [z.lo for z in self.zones]
        reach = 0
        for z in self.zones:
            reach = max(reach, z.hi)
            self._zone_reach.append(reach)

    def _content_at(self, p: int) -> int:
        """Index of the content range holding position p, or -(insertion point) - 1."""
        i = bisect_right(self._starts, p) - 1
        if i >= 0 and p <= self.content[i][1]:
            return i
        return -(i + 1) - 1

    def _zone_at(self, p: int) -> _Zone | None:
        i = bisect_left(self._zone_los, p) - 1
        while i >= 0 and self._zone_reach[i] > p:
            zone = self.zones[i]
            if zone.lo < p < zone.hi:
                return zone
            i -= 1
        return None

    def snap(self, p: int, *, start: bool) -> int:
        """The nearest position at or after (a start) or before (an end) that takes a
        sentinel without changing the parse, moving only over characters never shown."""
        for _ in range(12):
            i = self._content_at(p)
            if i < 0:
                nxt = -i - 1  # first range starting after p
                if start:
                    p = self.content[nxt][0] if nxt < len(self.content) else len(self.text)
                else:
                    p = self.content[nxt - 1][1] if nxt > 0 else 0
                if (start and nxt >= len(self.content)) or (not start and nxt == 0):
                    return p
                continue
            if p in self.guarded and i > 0:
                p = self.content[i - 1][1]
                continue
            if self.content[i][2]:  # inside code every character is literal
                return p
            zone = self._zone_at(p)
            if zone is None:
                return p
            p = zone.to_start if start else zone.to_end
        return p


def _line_bounds(text: str) -> list[int]:
    starts = [0]
    starts.extend(m.end() for m in re.finditer("\n", text))
    return starts


def _layout(text: str) -> _Layout:
    env: dict[str, Any] = {}
    tokens = _BLOCKS.parse(text, env)
    line_starts = _line_bounds(text)
    n_lines = len(line_starts)

    def line(i: int) -> tuple[int, int]:
        end = line_starts[i + 1] - 1 if i + 1 < n_lines else len(text)
        return line_starts[i], end

    content: list[tuple[int, int, bool, int]] = []
    guarded: set[int] = set()
    cell_cursor: dict[int, int] = {}
    previous = heading_markup = ""
    for block, token in enumerate(tokens):
        kind = token.type
        if kind == "inline" and token.map:
            in_cell = previous in ("th_open", "td_open")
            opener = heading_markup if previous == "heading_open" else ""
            for k, part in enumerate(token.content.split("\n")):
                index = token.map[0] + k
                part = part.strip(" \t")
                if not part or index >= n_lines:
                    continue
                s, e = line(index)
                source = text[s:e]
                if in_cell:
                    at, size = _find_cell(source, part, cell_cursor.get(index, 0))
                    if at < 0:
                        continue
                    cell_cursor[index] = at + size
                    content.append((s + at, s + at + size, False, block))
                    if previous == "th_open" and not source[:at].strip() and part[0] in _BLOCKY:
                        # A table's header row is tried before every other block rule, so
                        # "```a | b" or "> a | b" heads a table; but the same characters
                        # ended the block before it. A sentinel in front would not.
                        syntax = _BLOCK_PREFIX.match(part)
                        fence = re.match(r"`+|~+", part)
                        reach = max(syntax.end() if syntax else 0, fence.end() if fence else 0)
                        guarded.update(range(s + at, s + at + max(reach, 1)))
                    continue
                if opener.startswith("#"):
                    # ATX heading: the first match after the opening hashes ("# # #" is
                    # a heading of "#" followed by its closing sequence).
                    hashes = source.find(opener)
                    at = source.find(part, hashes + len(opener)) if hashes >= 0 else -1
                else:  # a paragraph line ends with its content
                    at = source.rstrip(" \t").rfind(part)
                if at >= 0:
                    content.append((s + at, s + at + len(part), False, block))
                else:  # tabs expanded by the parser: fall back to the line minus its prefix
                    body = source.rstrip(" \t")
                    prefix = _BLOCK_PREFIX.match(body)
                    begin = prefix.end() if prefix else 0
                    if begin < len(body):
                        content.append((s + begin, s + len(body), False, block))
        elif kind in ("fence", "code_block") and token.map:
            first = token.map[0] + (1 if kind == "fence" else 0)
            for k, part in enumerate(token.content.split("\n")[:-1]):
                index = first + k
                if not part.strip() or index >= n_lines:
                    continue  # a sentinel on a blank line could end the block
                s, e = line(index)
                if text[s:e].endswith(part):
                    content.append((e - len(part), e, True, block))
        previous = kind
        heading_markup = token.markup if kind == "heading_open" else ""
    content.sort()

    code = [(a, b) for a, b, is_code, _ in content if is_code]
    starts = [a for a, *_ in content]
    block_start: dict[int, int] = {}
    for a, _, _, block in content:
        block_start.setdefault(block, a)

    def paragraph_start(p: int) -> int | None:
        """Where the inline content holding position p starts (links stay inside it)."""
        i = bisect_right(starts, p) - 1
        if i < 0 or p > content[i][1] or content[i][2]:
            return None
        return block_start[content[i][3]]

    code_starts = [a for a, _ in code]

    def in_code(p: int) -> bool:
        i = bisect_right(code_starts, p) - 1
        return i >= 0 and p < code[i][1]

    zones: list[_Zone] = []
    hidden: list[tuple[int, int]] = []
    for m in _ESCAPE.finditer(text):
        zones.append(_Zone(m.start(), m.end(), m.start(), m.start()))
    for m in _ENTITY.finditer(text):
        zones.append(_Zone(m.start(), m.end(), m.start(), m.end()))
    for m in _RUN.finditer(text):
        zones.append(_Zone(m.start(), m.end(), m.end(), m.start()))
    for padding in _CODE_PADDING:
        for m in padding.finditer(text):
            zones.append(_Zone(m.start(), m.end(), m.end(), m.start()))
    for m in _AUTOLINK.finditer(text):
        zones.append(_Zone(m.start(), m.end(), m.start(), m.end()))
    for m in re.finditer(r"!\[", text):
        if not in_code(m.start()):
            zones.append(_Zone(m.start(), m.end(), m.end(), m.start()))
    for end in _link_targets(text, paragraph_start):
        lo, hi = end
        if not in_code(lo):
            zones.append(_Zone(lo, hi, hi, lo))
            hidden.append((lo, hi))
    references = env.get("references") or {}
    for m in _REF_USE.finditer(text):
        if in_code(m.start()):
            continue
        label = m.group(1)
        lo = m.start()
        if references and (not label or _normalise_label(label) in references):
            hi = lo + len(label) + 3  # "][label]"
            zones.append(_Zone(lo, hi, hi, lo))
            hidden.append((lo, hi))
        else:
            # Even when "[b]" is no reference, a sentinel between "[a]" and "[b]" would
            # let "[a]" stand alone as a shortcut reference.
            zones.append(_Zone(lo, lo + 2, lo + 2, lo))
    zones.sort(key=lambda z: (z.lo, z.hi))
    hidden.sort()
    return _Layout(
        text=text, content=content, guarded=frozenset(guarded), zones=zones, hidden=hidden
    )


def _find_cell(line: str, cell: str, after: int) -> tuple[int, int]:
    """(offset, length) of a table cell's text in its line; the parser unescapes "\\|"."""
    at = line.find(cell, after)
    if at >= 0 or "|" not in cell:
        return at, len(cell)
    pattern = "".join(r"\\?\|" if ch == "|" else re.escape(ch) for ch in cell)
    found = re.compile(pattern).search(line, after)
    return (found.start(), found.end() - found.start()) if found else (-1, 0)


def _opened(text: str, close: int, floor: int) -> bool:
    """Whether the "]" at ``close`` has an unmatched "[" after ``floor``."""
    depth = 0
    for j in range(close - 1, max(floor, close - 1_000) - 1, -1):
        ch = text[j]
        if ch in "[]" and not (j > 0 and text[j - 1] == "\\"):
            if ch == "]":
                depth += 1
            elif depth == 0:
                return True
            else:
                depth -= 1
    return False


def _link_targets(
    text: str, paragraph_start: Callable[[int], int | None]
) -> Iterator[tuple[int, int]]:
    """(position of ``]``, position after ``)``) of each inline link's ``](target "title")``."""
    size = len(text)
    for m in re.finditer(r"\]\(", text):
        floor = paragraph_start(m.start())
        if floor is None or not _opened(text, m.start(), floor):
            continue  # "](" with no "[" before it in its paragraph is text, shown as it is
        pos = m.end()
        while pos < size and text[pos] in " \t\n":
            pos += 1
        if pos >= size:
            continue
        target = parseLinkDestination(text, pos, size)
        if target.ok:
            pos = target.pos
            gap = pos
            while pos < size and text[pos] in " \t\n":
                pos += 1
            title = parseLinkTitle(text, pos, size)
            if pos < size and gap != pos and title.ok:
                pos = title.pos
                while pos < size and text[pos] in " \t\n":
                    pos += 1
        if pos < size and text[pos] == ")":
            yield m.start(), pos + 1
