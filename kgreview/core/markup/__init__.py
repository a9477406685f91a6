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

The package, by stage: ``sanitise`` (the allow-list), ``spans`` (highlights and
newlines), ``layout`` (the first pass), ``parser`` (markdown-it and its rules),
``render`` (``render_markdown``), ``plain`` (``plain_text``, a snippet's words without
its syntax) and ``locate`` (``locate_quote``). Templates, graph
pages and mending import the public names from here.
"""

from .locate import locate_quote
from .plain import plain_text
from .render import render_markdown
from .sanitise import ALLOWED_ATTRIBUTES, ALLOWED_TAGS
from .spans import Span, cover_attrs

__all__ = [
    "ALLOWED_ATTRIBUTES",
    "ALLOWED_TAGS",
    "Span",
    "cover_attrs",
    "locate_quote",
    "plain_text",
    "render_markdown",
]
