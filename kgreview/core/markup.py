"""Source Markdown as safe HTML, with highlights that cover exact offsets of the raw text.

Lessons are Markdown; proposals quote them by offsets into the raw text. Rendering
removes syntax (``**``, ``# ``, link targets), so a highlight cannot be placed by
offsets after the fact. Instead every span boundary becomes a private-use sentinel
character inserted into the raw text before parsing; the render rules for text, inline
code, fences and code blocks split their content at the sentinels and wrap the pieces in
the highlight element. Each sentinel names the set of spans covering the text after
it, so the highlight is closed and reopened at every token boundary and nesting stays
valid, and overlapping spans need no stack.

A sentinel must not change how the text parses. Two things make sure of it:

- Before parsing, a first pass over the raw text (without sentinels) finds where each
  line's inline or code content starts and ends; a boundary in block syntax (``# ``,
  ``- ``, ``> ``, a fence line, a table's delimiter row, a link reference definition)
  moves to the nearest content, and a boundary inside inline syntax that a character
  would break (a link target, an escape, an entity, a run of ``**``) moves to its edge.
  Moving over characters that are never shown changes nothing visible.
- Emphasis looks at the characters around a delimiter run; the inline state used here
  looks through sentinels, so ``__bold__`` next to a boundary still opens and closes.

The HTML is then sanitised by nh3 with an explicit allow-list; raw HTML in the source is
never HTML (``html=False``) and only http, https and mailto links survive.

:func:`locate_quote` goes the other way: from text a person selected on the rendered page
back to raw offsets, comparing only the characters that rendering shows.
"""

from __future__ import annotations

import html as html_lib
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml, isMdAsciiPunct, isPunctChar, isWhiteSpace
from markdown_it.helpers import parseLinkDestination, parseLinkTitle
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline.state_inline import Scanned, StateInline
from markdown_it.token import Token

__all__ = ["ALLOWED_ATTRIBUTES", "ALLOWED_TAGS", "Span", "locate_quote", "render_markdown"]

# --- the sanitiser's allow-list ----------------------------------------------------------

ALLOWED_TAGS = frozenset(
    {
        "p",
        *(f"h{n}" for n in range(1, 7)),
        "ul",
        "ol",
        "li",
        "blockquote",
        "pre",
        "code",
        "em",
        "strong",
        "del",
        "s",
        "a",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "hr",
        "br",
        "mark",
    }
)
ALLOWED_ATTRIBUTES: Mapping[str, frozenset[str]] = {
    "a": frozenset({"href", "title", "class", "id"}),
    "mark": frozenset({"class", "id", "title"}),
    "ol": frozenset({"start"}),
    "th": frozenset({"style"}),
    "td": frozenset({"style"}),
}
URL_SCHEMES = frozenset({"http", "https", "mailto"})
LINK_REL = "nofollow noopener"
HIGHLIGHT_TAGS = frozenset({"mark", "a"})
_DATA_ATTR = re.compile(r"data-[a-z0-9][a-z0-9-]*\Z")


def _sanitise(html: str) -> str:
    # Relative URLs pass: the highlight links we emit point into this site. Links from the
    # source never reach here with one (see _link_open).
    return nh3.clean(
        html,
        tags=set(ALLOWED_TAGS),
        attributes={tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()},
        generic_attribute_prefixes={"data-"},
        url_schemes=set(URL_SCHEMES),
        link_rel=LINK_REL,
        filter_style_properties={"text-align"},
        strip_comments=True,
    )


# --- spans --------------------------------------------------------------------------------


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
            if name not in allowed and not _DATA_ATTR.match(name):
                raise ValueError(f"<{self.tag}> highlights cannot carry {name!r}")


# --- newlines: markdown-it turns \r\n into \n, offsets stay in the caller's text --------


@dataclass(frozen=True, slots=True)
class _Newlines:
    removed: tuple[int, ...]  # raw offsets of each \r dropped from a \r\n

    def to_norm(self, raw: int) -> int:
        return raw - bisect_left(self.removed, raw)

    def to_raw(self, norm: int) -> int:
        shifted = [r - i for i, r in enumerate(self.removed)]
        return norm + bisect_right(shifted, norm - 1)


def _normalise(text: str) -> tuple[str, _Newlines]:
    if "\r" not in text:
        return text, _Newlines(())
    removed = tuple(m.start() for m in re.finditer(r"\r(?=\n)", text))
    return text.replace("\r\n", "\n").replace("\r", "\n"), _Newlines(removed)


# --- the parser --------------------------------------------------------------------------

_ENV_KEY = "kgreview.markup"
_HEADING_SHIFT = "kgreview.markup.heading_shift"
_LINKS = "kgreview.markup.links"  # a stack: was each open source link written as <a>?


class _SentinelInline(StateInline):
    """Inline state whose emphasis scan looks through sentinels at a run's neighbours."""

    def scanDelims(self, start: int, canSplitWord: bool) -> Scanned:  # noqa: N802, N803
        render = self.env.get(_ENV_KEY)
        if render is None:
            return super().scanDelims(start, canSplitWord)
        sentinels = render.sentinel_of
        src, maximum = self.src, self.posMax
        marker = src[start]
        pos = start
        while pos < maximum and src[pos] == marker:
            pos += 1
        count = pos - start
        before = start - 1
        while before >= 0 and src[before] in sentinels:
            before -= 1
        after = pos
        while after < maximum and src[after] in sentinels:
            after += 1
        last = src[before] if before >= 0 else " "
        nxt = src[after] if after < maximum else " "
        # From here on as StateInline.scanDelims.
        last_punct = isMdAsciiPunct(ord(last)) or isPunctChar(last)
        next_punct = isMdAsciiPunct(ord(nxt)) or isPunctChar(nxt)
        last_space = isWhiteSpace(ord(last))
        next_space = isWhiteSpace(ord(nxt))
        left = not (next_space or (next_punct and not (last_space or last_punct)))
        right = not (last_space or (last_punct and not (next_space or next_punct)))
        can_open = left and (canSplitWord or not right or last_punct)
        can_close = right and (canSplitWord or not left or next_punct)
        return Scanned(can_open, can_close, count)


def _parse_inline(src: str, md: MarkdownIt, env: dict, tokens: list[Token]) -> list[Token]:
    """ParserInline.parse with the sentinel-aware state; also used for image alt text."""
    state = _SentinelInline(src, md, env, tokens)
    md.inline.tokenize(state)
    for rule in md.inline.ruler2.getRules(""):
        rule(state)
    return state.tokens


def _join_soft_breaks(state: StateCore) -> None:
    """Soft breaks become text, so a highlight runs on across the lines of a paragraph."""
    for token in state.tokens:
        if token.type != "inline" or not token.children:
            continue
        joined: list[Token] = []
        for child in token.children:
            if child.type == "softbreak":
                child = Token("text", "", 0, content="\n")
            if child.type == "text" and joined and joined[-1].type == "text":
                joined[-1].content += child.content
            else:
                joined.append(child)
        token.children = joined


class _References(dict):
    """Reference definitions keyed as usual; a lookup ignores sentinels in the label."""

    def __init__(self, sentinels: re.Pattern[str]) -> None:
        super().__init__()
        self._sentinels = sentinels

    def _key(self, label: Any) -> Any:
        if isinstance(label, str) and self._sentinels.search(label):
            label = re.sub(r"\s+", " ", self._sentinels.sub("", label)).strip()
        return label

    def get(self, label: Any, default: Any = None) -> Any:
        return super().get(self._key(label), default)

    def __contains__(self, label: object) -> bool:
        return super().__contains__(self._key(label))

    def __getitem__(self, label: Any) -> Any:
        return super().__getitem__(self._key(label))


# --- rendering: the pieces between sentinels ---------------------------------------------


@dataclass
class _RenderState:
    """What one render call knows: the sentinels, what each one opens, what is open."""

    spans: Sequence[Span]
    sentinel_of: dict[str, int]  # sentinel character -> segment index
    covering: list[tuple[int, ...]]  # segment index -> indexes of the covering spans
    pattern: re.Pattern[str]
    segment: int = -1
    emitted_ids: set[str] = field(default_factory=set)
    _opening: dict[tuple[int, bool], tuple[str, str, int]] = field(default_factory=dict)

    def opening(self, in_link: bool) -> tuple[str, str, int] | None:
        """(tag, attributes without the id, primary span) for the current segment."""
        if self.segment < 0 or not self.covering[self.segment]:
            return None
        cache_key = (self.segment, in_link)
        cached = self._opening.get(cache_key)
        if cached is None:
            cached = self._build(self.covering[self.segment], in_link)
            self._opening[cache_key] = cached
        return cached

    def _build(self, cover: tuple[int, ...], in_link: bool) -> tuple[str, str, int]:
        primary = min(cover, key=lambda i: (self.spans[i].rank, i))
        span = self.spans[primary]
        tag = span.tag
        attrs = {k: v for k, v in span.attrs.items() if k != "id"}
        if tag == "a" and in_link:
            # A link inside the source's own link would nest <a>; mark it instead.
            tag = "mark"
            attrs = {k: v for k, v in attrs.items() if k in ALLOWED_ATTRIBUTES["mark"]}
        labels = [self.spans[i].label for i in cover if self.spans[i].label]
        if labels:
            attrs["title"] = ", ".join(labels)
        keys = [self.spans[i].key for i in cover if self.spans[i].key]
        if keys:
            attrs["data-spans"] = " ".join(keys)
        rendered = "".join(f' {k}="{escapeHtml(str(v))}"' for k, v in attrs.items())
        return tag, rendered, primary

    def pieces(self, content: str, *, in_link: bool) -> str:
        """Escaped ``content``, each stretch between sentinels wrapped in its highlight."""
        out: list[str] = []
        pos = 0
        for match in self.pattern.finditer(content):
            if match.start() > pos:
                out.append(self._wrap(content[pos : match.start()], in_link))
            self.segment = self.sentinel_of[match.group()]
            pos = match.end()
        if pos < len(content):
            out.append(self._wrap(content[pos:], in_link))
        return "".join(out)

    def _wrap(self, piece: str, in_link: bool) -> str:
        escaped = escapeHtml(piece)
        opening = self.opening(in_link)
        if opening is None:
            return escaped
        tag, attrs, primary = opening
        span_id = self.spans[primary].attrs.get("id")
        if span_id and span_id not in self.emitted_ids:
            self.emitted_ids.add(span_id)
            attrs = f' id="{escapeHtml(span_id)}"' + attrs
        return f"<{tag}{attrs}>{escaped}</{tag}>"


def _pieces(env: dict, content: str) -> str:
    render: _RenderState | None = env.get(_ENV_KEY)
    if render is None:
        return escapeHtml(content)
    return render.pieces(content, in_link=bool(env.get(_LINKS)))


def _text(self, tokens, idx, options, env) -> str:
    return _pieces(env, tokens[idx].content)


def _code_inline(self, tokens, idx, options, env) -> str:
    return f"<code>{_pieces(env, tokens[idx].content)}</code>"


def _code_block(self, tokens, idx, options, env) -> str:
    # The fence's info string is dropped: no class on <code> passes the sanitiser anyway.
    return f"<pre><code>{_pieces(env, tokens[idx].content)}</code></pre>\n"


def _safe_href(href: str) -> str | None:
    scheme = href.split(":", 1)[0].lower() if ":" in href else ""
    return href if scheme in URL_SCHEMES else None


def _link_open(self, tokens, idx, options, env) -> str:
    token = tokens[idx]
    href = _safe_href(token.attrGet("href") or "")
    env.setdefault(_LINKS, []).append(href is not None)
    if href is None:  # relative, #anchor or a scheme we do not follow: text only
        return ""
    title = token.attrGet("title")
    title_attr = f' title="{escapeHtml(str(title))}"' if title else ""
    return f'<a href="{escapeHtml(href)}"{title_attr}>'


def _link_close(self, tokens, idx, options, env) -> str:
    links = env.get(_LINKS)
    return "</a>" if links and links.pop() else ""


def _heading(self, tokens, idx, options, env) -> str:
    token = tokens[idx]
    shift = env.get(_HEADING_SHIFT, 0)
    if shift:
        token.tag = f"h{min(6, int(token.tag[1]) + shift)}"
    return self.renderToken(tokens, idx, options, env)


def _image(self, tokens, idx, options, env) -> str:
    """An image shows as its alt text: no requests to other hosts from a lesson."""
    return self.renderInline(tokens[idx].children or [], options, env)


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    md.inline.parse = _parse_inline  # this instance only: the core rule and images call it
    md.core.ruler.push("kg_join_soft_breaks", _join_soft_breaks)
    for name, rule in {
        "text": _text,
        "code_inline": _code_inline,
        "code_block": _code_block,
        "fence": _code_block,
        "link_open": _link_open,
        "link_close": _link_close,
        "image": _image,
        "heading_open": _heading,
        "heading_close": _heading,
    }.items():
        md.add_render_rule(name, rule)
    return md


_MD = _parser()
# The first pass needs only the blocks: where each line's content lies, and the references.
_BLOCKS = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
_BLOCKS.core.ruler.disable(["inline", "text_join"])


# --- layout: where in the raw text a sentinel may go -------------------------------------

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


# --- sentinels ----------------------------------------------------------------------------

_PRIVATE_USE = ((0xE000, 0xF8FF), (0xF0000, 0xFFFFD), (0x100000, 0x10FFFD))
_PRIVATE_USE_RE = re.compile("[\ue000-\uf8ff\U000f0000-\U000ffffd\U00100000-\U0010fffd]")


def _sentinels(count: int, text: str) -> list[str]:
    """``count`` private-use characters that do not occur in ``text``."""
    taken = set(_PRIVATE_USE_RE.findall(text))
    chosen: list[str] = []
    for low, high in _PRIVATE_USE:
        for code in range(low, high + 1):
            if len(chosen) == count:
                return chosen
            ch = chr(code)
            if ch not in taken:
                chosen.append(ch)
    if len(chosen) < count:
        raise ValueError(f"too many highlight boundaries ({count})")
    return chosen


def _char_class(chars: Sequence[str]) -> re.Pattern[str]:
    """A character class matching exactly ``chars`` (sorted code points), as ranges."""
    codes = sorted(ord(c) for c in chars)
    parts: list[str] = []
    i = 0
    while i < len(codes):
        j = i
        while j + 1 < len(codes) and codes[j + 1] == codes[j] + 1:
            j += 1
        parts.append(re.escape(chr(codes[i])) + ("-" + re.escape(chr(codes[j])) if j > i else ""))
        i = j + 1
    return re.compile("[" + "".join(parts) + "]")


# --- the public functions ------------------------------------------------------------------


def render_markdown(
    text: str, spans: Sequence[Span] = (), *, heading_offset: int = 0
) -> SafeString:
    """``text`` as sanitised HTML (block elements, no wrapper) with each span highlighted.

    ``heading_offset`` demotes the source's headings (1: ``#`` becomes ``<h2>``, up to
    ``<h6>``) so they fit under the page's own.

    A span's highlight covers exactly the shown characters of ``text[start:end]``: it is
    split into several elements wherever the text crosses an element boundary (emphasis,
    a list item, a table cell), and covers nothing of the syntax rendering removes. Spans
    may overlap; empty or out-of-range spans are ignored.
    """
    raw = text or ""
    spans = list(spans)
    norm, newlines = _normalise(raw)
    size = len(norm)
    cuts: list[tuple[int, int, int]] = []
    if spans:
        layout = _layout(norm)
        for index, span in enumerate(spans):
            start = min(max(newlines.to_norm(span.start), 0), size)
            end = min(max(newlines.to_norm(span.end), 0), size)
            if start >= end:
                continue
            start, end = layout.snap(start, start=True), layout.snap(end, start=False)
            if start < end:
                cuts.append((start, end, index))
    if not cuts:
        return mark_safe(_sanitise(_MD.render(norm, {_HEADING_SHIFT: heading_offset})))

    positions = sorted({p for start, end, _ in cuts for p in (start, end)})
    chars = _sentinels(len(positions), norm)
    pattern = _char_class(chars)
    opens: dict[int, list[int]] = {}
    closes: dict[int, list[int]] = {}
    for start, end, index in cuts:
        opens.setdefault(start, []).append(index)
        closes.setdefault(end, []).append(index)
    active: set[int] = set()
    covering: list[tuple[int, ...]] = []
    pieces: list[str] = []
    previous = 0
    for k, p in enumerate(positions):
        active.difference_update(closes.get(p, ()))
        active.update(opens.get(p, ()))
        covering.append(tuple(sorted(active)))
        pieces.append(norm[previous:p])
        pieces.append(chars[k])
        previous = p
    pieces.append(norm[previous:])
    source = "".join(pieces)

    state = _RenderState(
        spans=spans,
        sentinel_of={c: k for k, c in enumerate(chars)},
        covering=covering,
        pattern=pattern,
    )
    env = {"references": _References(pattern), _ENV_KEY: state, _HEADING_SHIFT: heading_offset}
    html = _MD.renderer.render(_MD.parse(source, env), _MD.options, env)
    # Any sentinel left where no rule looks (there should be none) must not reach the page.
    return mark_safe(_sanitise(pattern.sub("", html)))


# What a rendered page never shows of these, so a selection is compared without them.
_MARKUP = "*_~`#>|[]\\!"  # "!" of an image; a shown "!" is ignored on both sides alike
_SELECTION_RUN = re.compile(r"[^\s" + re.escape(_MARKUP) + r"]+")
_NON_SPACE_RUN = re.compile(r"\S+")
_SHOWN_RUN = re.compile(
    _ENTITY.pattern + r"|[^\s&" + re.escape(_MARKUP) + r"]+|&",
)
_BEFORE_LIMIT = 300


def _squash(rendered: str) -> str:
    return "".join(_SELECTION_RUN.findall(rendered or ""))


@dataclass
class _Projection:
    """The shown characters of a raw text, markup and whitespace dropped, with offsets."""

    text: str
    starts: list[int]  # projected index where each run starts
    raw_starts: list[int]
    raw_ends: list[int]
    atomic: list[bool]  # an entity: one run of projected text for the whole raw entity

    def raw_start(self, j: int) -> int:
        r = bisect_right(self.starts, j) - 1
        return self.raw_starts[r] if self.atomic[r] else self.raw_starts[r] + j - self.starts[r]

    def raw_end(self, j: int) -> int:
        """Raw offset just after the raw character behind projected index ``j``."""
        r = bisect_right(self.starts, j) - 1
        return self.raw_ends[r] if self.atomic[r] else self.raw_starts[r] + j - self.starts[r] + 1


def _project(layout: _Layout) -> _Projection:
    text = layout.text
    parts: list[str] = []
    starts: list[int] = []
    raw_starts: list[int] = []
    raw_ends: list[int] = []
    atomic: list[bool] = []
    length = 0
    hidden = layout.hidden
    h = 0
    for a, b, is_code, _ in layout.content:
        pieces = [(a, b)]
        if not is_code:
            pieces = []
            cursor = a
            while h < len(hidden) and hidden[h][1] <= a:
                h += 1
            k = h
            while k < len(hidden) and hidden[k][0] < b:
                lo, hi = hidden[k]
                if lo > cursor:
                    pieces.append((cursor, lo))
                cursor = max(cursor, hi)
                k += 1
            if cursor < b:
                pieces.append((cursor, b))
        for x, y in pieces:
            for m in _SHOWN_RUN.finditer(text, x, y):
                run = m.group()
                is_entity = run.startswith("&") and run.endswith(";") and len(run) > 1
                shown = _squash(html_lib.unescape(run)) if is_entity else run
                if not shown:
                    continue
                starts.append(length)
                raw_starts.append(m.start())
                raw_ends.append(m.end())
                atomic.append(is_entity)
                parts.append(shown)
                length += len(shown)
    return _Projection("".join(parts), starts, raw_starts, raw_ends, atomic)


def _common_suffix(a: str, a_end: int, b: str) -> int:
    n = 0
    limit = min(a_end, len(b))
    while n < limit and a[a_end - 1 - n] == b[len(b) - 1 - n]:
        n += 1
    return n


def _plain_projection(text: str) -> _Projection:
    """Text shown as it is (a PDF's or a .txt file's): only whitespace is dropped."""
    pieces, starts, raw_starts, raw_ends = [], [], [], []
    at = 0
    for match in _NON_SPACE_RUN.finditer(text):
        pieces.append(match.group())
        starts.append(at)
        raw_starts.append(match.start())
        raw_ends.append(match.end())
        at += len(match.group())
    return _Projection(
        text="".join(pieces),
        starts=starts,
        raw_starts=raw_starts,
        raw_ends=raw_ends,
        atomic=[False] * len(pieces),
    )


def locate_quote(
    text: str, selected: str, before: str = "", *, plain: bool = False
) -> tuple[int, int] | None:
    """Raw offsets ``(start, end)`` of a selection made on the rendered ``text``.

    ``plain``: the text was shown as it is, not as Markdown (a PDF's or a .txt file's),
    so "#", "-" or "*" in it are characters the reader selected, not markup.

    Characters that rendering removes (emphasis markers, backticks, heading hashes, list
    bullets, link targets) and all whitespace are ignored on both sides. When the
    selection occurs more than once, ``before`` (rendered text just before it) picks the
    occurrence it matches best; otherwise the first wins. ``text[start:end]`` starts and
    ends on shown characters of the selection. None if it does not occur.
    """
    wanted = "".join(_NON_SPACE_RUN.findall(selected or "")) if plain else _squash(selected)
    if not wanted or not text:
        return None
    if plain:
        projection = _plain_projection(text)
    else:
        norm, newlines = _normalise(text)
        projection = _project(_layout(norm))
    shown = projection.text
    hits: list[int] = []
    at = shown.find(wanted)
    while at >= 0:
        hits.append(at)
        at = shown.find(wanted, at + 1)
    if not hits:
        return None
    best = hits[0]
    if len(hits) > 1:
        context = ("".join(_NON_SPACE_RUN.findall(before)) if plain else _squash(before))[
            -_BEFORE_LIMIT:
        ]
        if context:
            best = max(hits, key=lambda hit: (_common_suffix(shown, hit, context), -hit))
    start = projection.raw_start(best)
    end = projection.raw_end(best + len(wanted) - 1)
    if plain:
        return start, end
    return newlines.to_raw(start), newlines.to_raw(end)
