"""The sanitiser: nh3 with an explicit allow-list of tags and attributes; only http,
https and mailto links survive, each with rel="nofollow noopener". No style attribute
survives: a table column's alignment becomes a class (the Content-Security-Policy refuses
inline styles)."""

from __future__ import annotations

import re
from collections.abc import Mapping

import nh3

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
    "th": frozenset({"class"}),
    "td": frozenset({"class"}),
}
URL_SCHEMES = frozenset({"http", "https", "mailto"})
LINK_REL = "nofollow noopener"
HIGHLIGHT_TAGS = frozenset({"mark", "a"})
DATA_ATTR = re.compile(r"data-[a-z0-9][a-z0-9-]*\Z")
# What markdown-it writes for an aligned table column (raw HTML in a source is escaped
# before this, so only the renderer's own cells match).
_ALIGNED_CELL = re.compile(r'<(th|td) style="text-align:(left|right|center)">')


def sanitise_html(html: str) -> str:
    # Relative URLs pass: the highlight links we emit point into this site. Links from the
    # source never reach here with one (see _link_open).
    html = _ALIGNED_CELL.sub(r'<\1 class="align-\2">', html)
    return nh3.clean(
        html,
        tags=set(ALLOWED_TAGS),
        attributes={tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()},
        generic_attribute_prefixes={"data-"},
        url_schemes=set(URL_SCHEMES),
        link_rel=LINK_REL,
        strip_comments=True,
    )
