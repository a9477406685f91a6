"""``render_markdown``: sentinels inserted at every span boundary, the text rendered by
the sentinel-aware parser, the result sanitised."""

from __future__ import annotations

import re
from collections.abc import Sequence

from django.utils.safestring import SafeString, mark_safe

from .layout import layout_of
from .parser import ENV_KEY, HEADING_SHIFT, MD, References, RenderState
from .sanitise import sanitise_html
from .spans import Span, normalise

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
    norm, newlines = normalise(raw)
    size = len(norm)
    cuts: list[tuple[int, int, int]] = []
    if spans:
        layout = layout_of(norm)
        for index, span in enumerate(spans):
            start = min(max(newlines.to_norm(span.start), 0), size)
            end = min(max(newlines.to_norm(span.end), 0), size)
            if start >= end:
                continue
            start, end = layout.snap(start, start=True), layout.snap(end, start=False)
            if start < end:
                cuts.append((start, end, index))
    if not cuts:
        return mark_safe(sanitise_html(MD.render(norm, {HEADING_SHIFT: heading_offset})))

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

    state = RenderState(
        spans=spans,
        sentinel_of={c: k for k, c in enumerate(chars)},
        covering=covering,
        pattern=pattern,
    )
    env = {"references": References(pattern), ENV_KEY: state, HEADING_SHIFT: heading_offset}
    html = MD.renderer.render(MD.parse(source, env), MD.options, env)
    # Any sentinel left where no rule looks (there should be none) must not reach the page.
    return mark_safe(sanitise_html(pattern.sub("", html)))
