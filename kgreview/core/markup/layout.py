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
from markdown_it.token import Token

# The first pass needs only the blocks: where each line's content lies, and the references.
_BLOCKS = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
_BLOCKS.core.ruler.disable(["inline", "text_join"])


# The escape rule takes a backslash and whatever follows it (shown as is if not punctuation).
_ESCAPE = re.compile(r"\\.", re.DOTALL)
ENTITY = re.compile(r"&(?:#[xX][0-9A-Fa-f]{1,6}|#[0-9]{1,7}|[A-Za-z][A-Za-z0-9]{1,31});")
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
class Layout:
    """The first pass: per line, where content lies; inside it, what a sentinel breaks."""

    text: str
    content: list[tuple[int, int, bool, int]]  # (start, end, is_code, block): sorted
    guarded: frozenset[int]  # content starts that must not take a sentinel (see layout_of)
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
            if p in self.guarded:  # a table's header cell starting with block syntax
                if start:  # its first shown character after that syntax
                    while p in self.guarded:
                        p += 1
                    continue
                if i > 0:
                    p = self.content[i - 1][1]
                    continue
            if self.content[i][2]:  # inside code every character is literal
                return p
            zone = self._zone_at(p)
            if zone is None:
                return p
            p = zone.to_start if start else zone.to_end
        return p


@dataclass(frozen=True, slots=True)
class _Lines:
    """The raw text's lines: where each starts, and its bounds without the newline."""

    text: str
    starts: list[int]

    @classmethod
    def of(cls, text: str) -> _Lines:
        starts = [0]
        starts.extend(m.end() for m in re.finditer("\n", text))
        return cls(text, starts)

    def __len__(self) -> int:
        return len(self.starts)

    def bounds(self, i: int) -> tuple[int, int]:
        end = self.starts[i + 1] - 1 if i + 1 < len(self.starts) else len(self.text)
        return self.starts[i], end


@dataclass(frozen=True, slots=True)
class _Content:
    """What the block pass found: where content lies, and the starts that take no sentinel."""

    ranges: list[tuple[int, int, bool, int]]  # (start, end, is_code, block): sorted
    guarded: frozenset[int]


def layout_of(text: str) -> Layout:
    """The first pass: the blocks' content, then the inline syntax a sentinel would break."""
    env: dict[str, Any] = {}
    content = _content(_BLOCKS.parse(text, env), _Lines.of(text))
    where = _Where.of(content.ranges)
    zones = _syntax_zones(text) + _image_zones(text, where)
    hidden: list[tuple[int, int]] = []
    for zone in _link_target_zones(text, where):
        zones.append(zone)
        hidden.append((zone.lo, zone.hi))
    for zone, hides in _reference_zones(text, where, env.get("references") or {}):
        zones.append(zone)
        if hides:
            hidden.append((zone.lo, zone.hi))
    zones.sort(key=lambda z: (z.lo, z.hi))
    hidden.sort()
    return Layout(
        text=text, content=content.ranges, guarded=content.guarded, zones=zones, hidden=hidden
    )


# --- where content lies -------------------------------------------------------------------


def _content(tokens: list[Token], lines: _Lines) -> _Content:
    """Each block token's content, line by line, as raw ranges (see ``Layout.content``)."""
    ranges: list[tuple[int, int, bool, int]] = []
    guarded: set[int] = set()
    cell_cursor: dict[int, int] = {}  # line index -> where the next cell's search begins
    previous = heading_markup = ""
    for block, token in enumerate(tokens):
        kind = token.type
        if kind == "inline" and token.map:
            if previous in ("th_open", "td_open"):
                header = previous == "th_open"
                for at, end, guard in _cell_ranges(token, lines, cell_cursor, header=header):
                    ranges.append((at, end, False, block))
                    guarded.update(guard)
            else:
                opener = heading_markup if previous == "heading_open" else ""
                for at, end in _inline_ranges(token, lines, opener):
                    ranges.append((at, end, False, block))
        elif kind in ("fence", "code_block") and token.map:
            for at, end in _code_ranges(token, lines):
                ranges.append((at, end, True, block))
        previous = kind
        heading_markup = token.markup if kind == "heading_open" else ""
    ranges.sort()
    return _Content(ranges, frozenset(guarded))


def _inline_lines(token: Token, lines: _Lines) -> Iterator[tuple[int, int, str, str]]:
    """(line index, line start, content, raw line) of each non-blank line of an inline
    token."""
    assert token.map is not None
    for k, part in enumerate(token.content.split("\n")):
        index = token.map[0] + k
        part = part.strip(" \t")
        if not part or index >= len(lines):
            continue
        s, e = lines.bounds(index)
        yield index, s, part, lines.text[s:e]


def _inline_ranges(token: Token, lines: _Lines, opener: str) -> Iterator[tuple[int, int]]:
    """A paragraph's or heading's content on each of its lines."""
    for _, s, part, source in _inline_lines(token, lines):
        if opener.startswith("#"):
            # ATX heading: the first match after the opening hashes ("# # #" is
            # a heading of "#" followed by its closing sequence).
            hashes = source.find(opener)
            at = source.find(part, hashes + len(opener)) if hashes >= 0 else -1
        else:  # a paragraph line ends with its content
            at = source.rstrip(" \t").rfind(part)
        if at >= 0:
            yield s + at, s + at + len(part)
            continue
        # Tabs expanded by the parser: fall back to the line minus its prefix.
        body = source.rstrip(" \t")
        prefix = _BLOCK_PREFIX.match(body)
        begin = prefix.end() if prefix else 0
        if begin < len(body):
            yield s + begin, s + len(body)


def _cell_ranges(
    token: Token, lines: _Lines, cursor: dict[int, int], *, header: bool
) -> Iterator[tuple[int, int, range]]:
    """A table cell's content, with the positions in it that must not take a sentinel.

    ``cursor`` holds, per line, where the previous cell ended; it moves on as cells are
    found, so a cell's text is looked for after its row's earlier cells.
    """
    for index, s, part, source in _inline_lines(token, lines):
        at, size = _find_cell(source, part, cursor.get(index, 0))
        if at < 0:
            continue
        cursor[index] = at + size
        guard = range(0)
        if header and not source[:at].strip() and part[0] in _BLOCKY:
            # A table's header row is tried before every other block rule, so
            # "```a | b" or "> a | b" heads a table; but the same characters
            # ended the block before it. A sentinel in front would not.
            syntax = _BLOCK_PREFIX.match(part)
            fence = re.match(r"`+|~+", part)
            reach = max(syntax.end() if syntax else 0, fence.end() if fence else 0)
            guard = range(s + at, s + at + max(reach, 1))
        yield s + at, s + at + size, guard


def _code_ranges(token: Token, lines: _Lines) -> Iterator[tuple[int, int]]:
    """A fence's or an indented code block's lines, blank ones left out (a sentinel on a
    blank line could end the block)."""
    assert token.map is not None
    first = token.map[0] + (1 if token.type == "fence" else 0)
    for k, part in enumerate(token.content.split("\n")[:-1]):
        index = first + k
        if not part.strip() or index >= len(lines):
            continue
        s, e = lines.bounds(index)
        if lines.text[s:e].endswith(part):
            yield e - len(part), e


@dataclass(frozen=True, slots=True)
class _Where:
    """Answers about a position from the content ranges: in code? in which paragraph?"""

    content: list[tuple[int, int, bool, int]]
    starts: list[int]
    block_start: dict[int, int]  # block -> where its first content range starts
    code: list[tuple[int, int]]
    code_starts: list[int]

    @classmethod
    def of(cls, content: list[tuple[int, int, bool, int]]) -> _Where:
        block_start: dict[int, int] = {}
        for a, _, _, block in content:
            block_start.setdefault(block, a)
        code = [(a, b) for a, b, is_code, _ in content if is_code]
        return cls(content, [a for a, *_ in content], block_start, code, [a for a, _ in code])

    def in_code(self, p: int) -> bool:
        i = bisect_right(self.code_starts, p) - 1
        return i >= 0 and p < self.code[i][1]

    def paragraph_start(self, p: int) -> int | None:
        """Where the inline content holding position p starts (links stay inside it)."""
        i = bisect_right(self.starts, p) - 1
        if i < 0 or p > self.content[i][1] or self.content[i][2]:
            return None
        return self.block_start[self.content[i][3]]


# --- what a sentinel would break ------------------------------------------------------------


def _syntax_zones(text: str) -> list[_Zone]:
    """Escapes, entities, delimiter runs, code-span padding and autolinks."""
    zones = [_Zone(m.start(), m.end(), m.start(), m.start()) for m in _ESCAPE.finditer(text)]
    zones.extend(_Zone(m.start(), m.end(), m.start(), m.end()) for m in ENTITY.finditer(text))
    zones.extend(_Zone(m.start(), m.end(), m.end(), m.start()) for m in _RUN.finditer(text))
    for padding in _CODE_PADDING:
        zones.extend(_Zone(m.start(), m.end(), m.end(), m.start()) for m in padding.finditer(text))
    zones.extend(_Zone(m.start(), m.end(), m.start(), m.end()) for m in _AUTOLINK.finditer(text))
    return zones


def _image_zones(text: str, where: _Where) -> list[_Zone]:
    """The "![" that opens an image, outside code."""
    return [
        _Zone(m.start(), m.end(), m.end(), m.start())
        for m in re.finditer(r"!\[", text)
        if not where.in_code(m.start())
    ]


def _link_target_zones(text: str, where: _Where) -> list[_Zone]:
    """Each inline link's ``](target "title")`` outside code: never shown."""
    return [
        _Zone(lo, hi, hi, lo)
        for lo, hi in _link_targets(text, where.paragraph_start)
        if not where.in_code(lo)
    ]


def _reference_zones(text: str, where: _Where, references: dict) -> Iterator[tuple[_Zone, bool]]:
    """Each "][label]" outside code, and whether it is never shown (a known reference).

    A "]" that closes the label of the reference just before it starts nothing: in
    "[a][][b]" the "[]" makes "[a]" a collapsed reference and "[b]" stands alone, a
    shortcut reference whose "b" is shown.
    """
    consumed = -1  # end of the last reference's "][label]"
    for m in _REF_USE.finditer(text):
        if where.in_code(m.start()) or m.start() < consumed:
            continue
        label = m.group(1)
        lo = m.start()
        if references and (not label or _normalise_label(label) in references):
            hi = lo + len(label) + 3  # "][label]"
            consumed = hi
            yield _Zone(lo, hi, hi, lo), True
        else:
            # Even when "[b]" is no reference, a sentinel between "[a]" and "[b]" would
            # let "[a]" stand alone as a shortcut reference.
            yield _Zone(lo, lo + 2, lo + 2, lo), False


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
