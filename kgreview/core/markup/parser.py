"""The markdown-it parser and its render rules: emphasis that looks through sentinels,
soft breaks joined into text, reference labels read without sentinels, and the text,
code, link, heading and image rules that wrap the pieces between sentinels in their
highlight."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml, isMdAsciiPunct, isPunctChar, isWhiteSpace
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline.state_inline import Scanned, StateInline
from markdown_it.token import Token

from .sanitise import ALLOWED_ATTRIBUTES, URL_SCHEMES
from .spans import Span, cover_attrs

ENV_KEY = "kgreview.markup"
HEADING_SHIFT = "kgreview.markup.heading_shift"
_LINKS = "kgreview.markup.links"  # a stack: was each open source link written as <a>?


class _SentinelInline(StateInline):
    """Inline state whose emphasis scan looks through sentinels at a run's neighbours."""

    def scanDelims(self, start: int, canSplitWord: bool) -> Scanned:  # noqa: N802, N803
        render = self.env.get(ENV_KEY)
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


class References(dict):
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
class RenderState:
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
        attrs.update(cover_attrs(self.spans, cover))
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
    render: RenderState | None = env.get(ENV_KEY)
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
    shift = env.get(HEADING_SHIFT, 0)
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


MD = _parser()
