"""Finding the concepts a question names: through the name index only, so an answer can
never start from a concept the graph does not hold.

The same steps as the resolver's (``construction.resolve.resolve_name``) without its
last one, making a new concept: every key of the name (both halves of "X (Y)") exactly,
then the same keys fuzzily. A name that matches nothing, or only a proposal, is unknown.
"""

from __future__ import annotations

from ..text import name_key, name_keys, singular, split_abbreviation, words
from .protocols import NameIndex
from .types import Found


def find_concept(said: str, index: NameIndex) -> Found | None:
    """The concept ``said`` names, or None when the graph does not know it."""
    keys = name_keys(said)
    for key in keys:
        entry = index.exact(key)
        if entry is not None and entry.concept_id is not None:
            canonical_key = name_key(split_abbreviation(entry.canonical)[0])
            match = "exact" if key == canonical_key else "alias"
            return Found(said=said, concept_id=entry.concept_id, name=entry.canonical, match=match)
    for key in keys:
        fuzzy = index.fuzzy(key)
        if fuzzy is None:
            continue
        entry, score = fuzzy
        if entry.concept_id is not None:
            return Found(
                said=said,
                concept_id=entry.concept_id,
                name=entry.canonical,
                match="fuzzy",
                score=score,
            )
    return None


def occurs_in(said: str, question: str) -> bool:
    """Whether the question writes ``said`` (or either half of "X (Y)"), ignoring case,
    punctuation, articles and plurals."""
    asked = _stems(question)
    for key in name_keys(said):
        stems = _stems(key)
        size = len(stems)
        if size and any(asked[i : i + size] == stems for i in range(len(asked) - size + 1)):
            return True
    return False


def _stems(text: str) -> list[str]:
    return [singular(word) for word in words(name_key(text))]
