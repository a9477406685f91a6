"""DEFINE: the names a document defines for the things it talks about, found by rules.

One deterministic pass over a text, whatever extractor reads it, finds where it gives
a thing a second name, each with the sentence that says so:

- "Transmission Control Protocol (TCP)": an abbreviation in parentheses after its long
  form, accepted only where the abbreviation's letters are found in the long form in
  order, right to left, the first one starting a word. That is the rule of Schwartz and
  Hearst ("A simple algorithm for identifying abbreviation definitions in biomedical
  text", Pacific Symposium on Biocomputing 8, 2003), written here from the paper;
- "TCP (Transmission Control Protocol)": the same the other way round;
- "X, also called Y", "also known as", "also referred to as", "(aka Y)", "X, or Y for
  short", "X (hereafter Y)";
- "X, i.e. Y", only where one of the two is an abbreviation of the other (otherwise
  "i.e." explains rather than names).

The rules are in ``construction.definition_rules``.

Precise before broad: a parenthesis holding a year, a unit, a citation, a list, a
cross-reference ("see below", "Figure 3") or an example ("e.g. TCP") defines nothing; a
pair where either name is a plain common word ("packet") or both are one name is left
out. Pure: text in, ``Definition`` values out.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from .definition_rules import in_sentence
from .sentences import sentences
from .text import name_key
from .types import ConceptMention

# A word in general English at least this often (wordfreq's Zipf scale: 3 is once per
# million words) is a plain common word when written alone in lower case.
COMMON_ZIPF = 3.0


@dataclass(frozen=True)
class Definition:
    """A second name a document gives a thing, with the sentence that gives it.

    ``name`` is the name defined (the long form, or the name a cue follows) and
    ``alias`` the other one; ``name_at`` and ``alias_at`` are their offsets in the text,
    ``start`` and ``end`` the sentence's (``quote`` is ``text[start:end]``); ``how``
    names the pattern ("long (short)", "short (long)", "also called", "for short",
    "hereafter", "aka", "i.e.").
    """

    name: str
    alias: str
    how: str
    name_at: int
    alias_at: int
    start: int
    end: int
    quote: str

    def names(self) -> tuple[str, str]:
        return (self.name, self.alias)


@functools.lru_cache(maxsize=8192)
def common_word(name: str) -> bool:
    """Whether a name is a plain common word: one word in lower case that general
    English uses often ("packet", "frame"; not "datagram", "TCP" or "Ethernet")."""
    if " " in name.strip() or not name.isalpha() or not name.islower():
        return False
    from wordfreq import zipf_frequency  # a large table: loaded on first use only

    return zipf_frequency(name, "en") >= COMMON_ZIPF


def definitions(text: str) -> tuple[Definition, ...]:
    """Every definition in ``text``, in reading order, each pair once per sentence."""
    found: list[Definition] = []
    for start, end, _heading in sentences(text):
        seen: set[tuple[str, str]] = set()
        for item in _in_sentence(text, start, end):
            pair = (name_key(item.name), name_key(item.alias))
            if pair not in seen and _usable(item):
                seen.add(pair)
                found.append(item)
    return tuple(found)


def defined_before(found: Sequence[Definition], end: int) -> list[tuple[str, str]]:
    """The (name, alias) pairs defined before offset ``end``, each once, in order."""
    out: list[tuple[str, str]] = []
    keys: set[tuple[str, str]] = set()
    for item in found:
        pair = (name_key(item.name), name_key(item.alias))
        if item.start < end and pair not in keys:
            keys.add(pair)
            out.append(item.names())
    return out


def _usable(item: Definition) -> bool:
    name, alias = item.name, item.alias
    if not name or not alias or name_key(name) == name_key(alias):
        return False
    if not name_key(name) or not name_key(alias):
        return False
    return not (common_word(name) or common_word(alias))


def _in_sentence(text: str, start: int, end: int) -> Iterator[Definition]:
    sentence = text[start:end]
    for name, alias, how in in_sentence(sentence):
        yield Definition(
            name=name[0],
            alias=alias[0],
            how=how,
            name_at=start + name[1],
            alias_at=start + alias[1],
            start=start,
            end=end,
            quote=sentence,
        )


# --- Attaching definitions to what an extractor read ------------------------------------


def with_definitions(
    mentions: Sequence[ConceptMention], found: Sequence[Definition]
) -> tuple[ConceptMention, ...]:
    """The extractor's concept mentions with the names the document defines for them
    added as aliases; a defined pair no mention names becomes a mention of its own (used
    only if an edge names it). Names join by key: a name that is an alias of one mention
    and a defined name of another makes them one."""
    groups: list[list[str]] = []  # display names, the first one the mention's name
    descriptions: list[str] = []
    by_key: dict[str, int] = {}

    def join(names: Sequence[str], description: str = "") -> None:
        keys = [k for k in (name_key(n) for n in names) if k]
        hits = sorted({by_key[k] for k in keys if k in by_key})
        if not hits:
            groups.append([])
            descriptions.append("")
            hits = [len(groups) - 1]
        into = hits[0]
        for other in hits[1:]:  # two mentions one definition joins: the first keeps them
            groups[into] += groups[other]
            descriptions[into] = descriptions[into] or descriptions[other]
            groups[other] = []
            for key, index in list(by_key.items()):
                if index == other:
                    by_key[key] = into
        for name in names:
            key = name_key(name)
            if key and all(name_key(n) != key for n in groups[into]):
                groups[into].append(name)
            if key:
                by_key[key] = into
        descriptions[into] = descriptions[into] or description

    for mention in mentions:
        join([mention.name, *mention.aliases], mention.description)
    for item in found:
        join(item.names())
    verbatim = {name_key(m.name) for m in mentions if m.verbatim}
    typed: dict[str, str] = {}
    for m in mentions:
        for name in (m.name, *m.aliases):
            if m.type_key:
                typed.setdefault(name_key(name), m.type_key)
    return tuple(
        ConceptMention(
            name=names[0],
            aliases=tuple(names[1:]),
            description=description,
            verbatim=name_key(names[0]) in verbatim,
            type_key=next((typed[name_key(n)] for n in names if name_key(n) in typed), ""),
        )
        for names, description in zip(groups, descriptions, strict=True)
        if names
    )
