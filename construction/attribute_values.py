"""STATE: the attribute values a document states for concepts the graph knows, found by
rules. Pure: text and the concepts to look for in, ``StatedValue`` values out.

Only two kinds of attribute are read, named by their key or label, and only for concepts
whose type declares them (the caller says which, ``Target``):

- a **default** ("default", "default value"): "The default value of work_mem is 4MB.",
  "work_mem defaults to 4MB.", and, in the paragraphs under a reference entry that names
  the concept ("`work_mem` (`integer`)"), "The default value is four megabytes (`4MB`).",
  "The default is `on`.", "It defaults to 64 megabytes (`64MB`).", "The TCP port the
  server listens on; 5432 by default.";
- a **value type** ("type", "value type", "data type"): the reference entry itself,
  "`shared_buffers` (`integer`)", as manuals of settings write them.

Precise before broad: the value is the first literal the clause quotes in backticks, or
else its first few words up to a comma, a parenthesis or "which", less a hedge
("typically"); a clause longer than
``VALUE_WORDS`` words without a literal states nothing here. The entry that carries a
subject ends at the next entry or heading. The caller holds each value to its
attribute's datatype before queueing it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from .text import name_key

VALUE_WORDS = 4
DEFAULT, VALUE_TYPE = "default", "value_type"

# The value types reference entries name ("floating point" before "point" and the like).
TYPE_WORDS = ("floating point", "integer", "boolean", "string", "enum", "real", "text")

_NAME = r"`?(?P<name>[A-Za-z_][\w.\-]{0,80}(?: [A-Za-z_][\w.\-]{0,40}){0,3})`?"
# "`work_mem` (`integer`)" alone on its line: a reference entry.
ENTRY = re.compile(
    r"^[ \t]*`?(?P<name>[A-Za-z_][\w.\-]{0,80})`?[ \t]*\(`?(?P<type>"
    + "|".join(TYPE_WORDS)
    + r")`?\)[ \t]*$",
    re.MULTILINE | re.IGNORECASE,
)
HEADING = re.compile(r"^#{1,6} ", re.MULTILINE)
# The concept named in the sentence.
NAMED = (
    re.compile(
        r"\bthe default(?: value| setting)? (?:of|for) " + _NAME + r" is (?P<rest>.+)", re.I
    ),
    re.compile(r"(?:^|[\s,])" + _NAME + r" defaults to (?P<rest>.+)"),
)
# The concept carried from the entry above.
CARRIED = (
    re.compile(r"^the default(?: value| setting)? is (?P<rest>.+)", re.I),
    re.compile(r"^(?:it|this (?:parameter|setting|option|value)) defaults to (?P<rest>.+)", re.I),
    re.compile(r"^defaults to (?P<rest>.+)", re.I),
    re.compile(r"[;,]\s+(?P<rest>[^;,.]{1,40}?)\s+by default\b", re.I),
)
# Words that hedge a value rather than state it ("typically 100").
HEDGES = re.compile(r"^(?:typically|usually|normally|currently|by default)\s+", re.I)
LITERAL = re.compile(r"`([^`\n]{1,200})`")
CUT = re.compile(r",|;|\s\(|\swhich\b|\smeaning\b|\sindicating\b|\sso\b|\sbut\b", re.I)
SENTENCE = re.compile(r"[^.!?\n]+(?:\.(?!\d)|[!?]|$)", re.MULTILINE)


@dataclass(frozen=True)
class Target:
    """A concept to look for and the attributes its type declares: (type key, attribute
    key, label) each."""

    concept_id: int
    name: str
    names: tuple[str, ...]
    attributes: tuple[tuple[str, str, str], ...]


@dataclass(frozen=True)
class StatedValue:
    """A value the text states for a concept's attribute, with the span that states it
    (``quote`` is ``text[start:end]``); ``how`` names the rule."""

    concept_id: int
    name: str
    type_key: str
    attribute_key: str
    value: str
    start: int
    end: int
    quote: str
    how: str
    confidence: float


def role_of(key: str, label: str) -> str:
    """Which of the two kinds this reader knows an attribute is ("" for neither)."""
    words = set(re.split(r"[\s_\-]+", f"{key} {label}".lower()))
    if "default" in words:
        return DEFAULT
    if "type" in words or "datatype" in words:
        return VALUE_TYPE
    return ""


def value_of(rest: str) -> str | None:
    """The value a clause states: its first backticked literal (before a cut), else its
    first few words up to a comma, a parenthesis or "which"; None when it has neither."""
    cut = CUT.search(rest)
    head = rest[: cut.start()] if cut else rest
    literal = LITERAL.search(rest[: (cut.end() + 60) if cut else len(rest)])
    if literal:
        return literal.group(1).strip() or None
    head = HEDGES.sub("", head.strip().rstrip(".").strip())
    if not head or len(head.split()) > VALUE_WORDS:
        return None
    return head


class _Index:
    """The targets by name key, and each target's attribute for a role."""

    def __init__(self, targets: Iterable[Target]) -> None:
        self.by_key: dict[str, Target] = {}
        for t in targets:
            for name in (t.name, *t.names):
                key = name_key(name)
                if key:
                    self.by_key.setdefault(key, t)

    def find(self, name: str) -> Target | None:
        """The target a captured name stands for: the whole of it, else its last words
        (a name captured with the words before it), less a trailing "setting"."""
        words = name.strip().strip("`").split()
        for first in range(len(words)):
            candidate = " ".join(words[first:]).strip("`")
            for form in (candidate, re.sub(r"\s+(?:setting|parameter|option)$", "", candidate)):
                found = self.by_key.get(name_key(form))
                if found is not None:
                    return found
        return None


def _attribute(target: Target, role: str) -> tuple[str, str] | None:
    for type_key, key, label in target.attributes:
        if role_of(key, label) == role:
            return type_key, key
    return None


def _stated(
    target: Target,
    role: str,
    value: str,
    span: tuple[int, int],
    text: str,
    how: str,
    confidence: float,
) -> StatedValue | None:
    attribute = _attribute(target, role)
    if attribute is None:
        return None
    start, end = span
    return StatedValue(
        concept_id=target.concept_id,
        name=target.name,
        type_key=attribute[0],
        attribute_key=attribute[1],
        value=value,
        start=start,
        end=end,
        quote=text[start:end],
        how=how,
        confidence=confidence,
    )


def _entries(text: str) -> list[tuple[int, int, str, str]]:
    """(start, end, name, type word) of each reference entry, and (start, start, "", "")
    for each heading, in text order: what carries a subject and what ends it."""
    marks = [(m.start(), m.end(), m.group("name"), m.group("type")) for m in ENTRY.finditer(text)]
    marks += [(m.start(), m.start(), "", "") for m in HEADING.finditer(text)]
    return sorted(marks)


def _sentences(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    for m in SENTENCE.finditer(text, start, end):
        s, e = m.start(), m.end()
        while s < e and text[s].isspace():
            s += 1
        if e > s:
            yield s, e


def stated_values(text: str, targets: Iterable[Target]) -> list[StatedValue]:
    """Every value ``text`` states for the targets' default and value-type attributes, in
    reading order, one per concept and attribute (the first the text states)."""
    index = _Index(targets)
    if not index.by_key:
        return []
    found: list[StatedValue] = []
    marks = _entries(text)
    bounds = [m[0] for m in marks] + [len(text)]
    # Text before the first entry or heading carries no subject.
    regions: list[tuple[Target | None, int, int]] = [(None, 0, bounds[0])]
    for (start, end, name, type_word), stop in zip(marks, bounds[1:], strict=True):
        subject = index.find(name) if name else None
        if subject is not None:
            stated = _stated(
                subject, VALUE_TYPE, type_word.lower(), (start, end), text, "reference entry", 0.9
            )
            if stated is not None:
                found.append(stated)
        regions.append((subject, end, stop))
    for subject, start, stop in regions:
        for span in _sentences(text, start, stop):
            stated = _in_sentence(text, span, subject, index)
            if stated is not None:
                found.append(stated)
    seen: set[tuple[int, str]] = set()
    unique = []
    for s in sorted(found, key=lambda s: s.start):
        if (s.concept_id, s.attribute_key) not in seen:
            seen.add((s.concept_id, s.attribute_key))
            unique.append(s)
    return unique


def _in_sentence(
    text: str, span: tuple[int, int], subject: Target | None, index: _Index
) -> StatedValue | None:
    sentence = text[span[0] : span[1]]
    for pattern in NAMED:
        m = pattern.search(sentence)
        if m is None:
            continue
        target = index.find(m.group("name"))
        value = value_of(m.group("rest"))
        if target is not None and value:
            return _stated(target, DEFAULT, value, span, text, "named default", 0.8)
    if subject is None:
        return None
    for pattern in CARRIED:
        m = pattern.search(sentence)
        if m is not None:
            value = value_of(m.group("rest"))
            if value:
                return _stated(subject, DEFAULT, value, span, text, "entry's default", 0.75)
    return None
