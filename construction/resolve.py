"""SEARCH: resolve endpoint names to known concepts, or decide they are new.

Exact name and alias keys first, then rapidfuzz over a blocked candidate set, so a
lookup against 50,000 concepts compares a few dozen strings rather than all of them.
Names that differ only in a number or identifier ("GPT-3", "GPT-4") never fuzzy-match.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from rapidfuzz import fuzz, process

from .keys import new_concept_key
from .text import clean_display, display_case, identifiers, name_key, name_keys, split_abbreviation
from .types import ConceptMention, IndexEntry, Resolution

DEFAULT_THRESHOLD = 90.0
MIN_FUZZY_LENGTH = 5
NAME_MAX = 200
STOPWORDS = frozenset(
    {
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "with",
        "by",
        "at",
        "from",
        "as",
        "is",
        "are",
        "be",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "they",
        "them",
        "which",
        "who",
        "what",
        "we",
        "you",
        "i",
        "he",
        "she",
        "their",
        "our",
        "your",
        "his",
        "her",
        "there",
        "here",
        "not",
        "no",
        "but",
        "so",
        "if",
    }
)


def _sorted_words(key: str) -> str:
    return " ".join(sorted(key.split()))


def _block_keys(key: str) -> set[str]:
    """Blocking keys: shared word prefixes, or the prefix of the spaceless name."""
    blocks = {"#" + key.replace(" ", "")[:4]}
    for word in key.split():
        if len(word) >= 3 and word not in STOPWORDS:
            blocks.add(word[:3])
    return blocks


class InMemoryConceptIndex:
    """A ``ConceptIndex`` held in memory: a dict for exact keys, blocks for fuzzy ones.

    Kept in step incrementally: ``add`` registers an entry under keys, ``discard`` takes
    every key of a concept (or proposal) out again, each in time proportional to that
    endpoint's names, so a caller never rebuilds the index for one change.
    """

    def __init__(self, *, threshold: float = DEFAULT_THRESHOLD) -> None:
        self.threshold = threshold
        # The winning entry per key; where several endpoints claim one key, every claim
        # in registration order, so that discarding the winner hands the key on.
        self._exact: dict[str, IndexEntry] = {}
        self._claims: dict[str, list[IndexEntry]] = {}
        self._by_endpoint: dict[tuple[int | None, int | None], list[str]] = {}
        # Blocks hold the sorted-word forms of keys (an ordered set per block).
        self._blocks: dict[str, dict[str, None]] = defaultdict(dict)
        self._sorted_keys: dict[str, list[str]] = {}
        self._max_words = 1

    def __len__(self) -> int:
        return len(self._exact)

    @property
    def max_words(self) -> int:
        return self._max_words

    @staticmethod
    def _winner(claims: list[IndexEntry]) -> IndexEntry:
        # Canonical names win over aliases; otherwise the first registration stays,
        # so the same graph always resolves the same way.
        for claim in claims:
            if claim.is_canonical:
                return claim
        return claims[0]

    def add(self, entry: IndexEntry, *, keys: Iterable[str]) -> None:
        endpoint = (entry.concept_id, entry.proposal_id)
        for key in keys:
            if not key:
                continue
            current = self._exact.get(key)
            if current is None:
                self._exact[key] = entry
                sorted_form = _sorted_words(key)
                forms = self._sorted_keys.setdefault(sorted_form, [])
                if not forms:
                    for block in _block_keys(key):
                        self._blocks[block][sorted_form] = None
                forms.append(key)
            else:
                claims = self._claims.get(key) or [current]
                if entry in claims:
                    continue
                claims.append(entry)
                self._claims[key] = claims
                self._exact[key] = self._winner(claims)
            self._by_endpoint.setdefault(endpoint, []).append(key)
            self._max_words = max(self._max_words, min(8, key.count(" ") + 1))

    def discard(self, *, concept_id: int | None = None, proposal_id: int | None = None) -> int:
        """Take every name of one concept (or proposed concept) out; the keys it shared
        with another endpoint go to that one. Returns how many keys were touched."""
        endpoint = (concept_id, proposal_id)
        keys = list(dict.fromkeys(self._by_endpoint.pop(endpoint, [])))
        for key in keys:
            claims = [
                c for c in self._claims.pop(key, []) if (c.concept_id, c.proposal_id) != endpoint
            ]
            if len(claims) > 1:
                self._claims[key] = claims
            if claims:
                self._exact[key] = self._winner(claims)
                continue
            self._exact.pop(key, None)
            sorted_form = _sorted_words(key)
            forms = self._sorted_keys.get(sorted_form, [])
            if key in forms:
                forms.remove(key)
            if not forms:
                self._sorted_keys.pop(sorted_form, None)
                for block in _block_keys(key):
                    members = self._blocks.get(block)
                    if members is not None:
                        members.pop(sorted_form, None)
                        if not members:
                            del self._blocks[block]
        return len(keys)

    def add_name(self, entry: IndexEntry) -> None:
        """Register an entry under the key of its name (and of its abbreviation, if any)."""
        self.add(entry, keys=name_keys(entry.name))

    def exact(self, key: str) -> IndexEntry | None:
        return self._exact.get(key)

    def lookup(self, key: str) -> IndexEntry | None:
        return self._exact.get(key)

    def fuzzy(self, key: str) -> tuple[IndexEntry, float] | None:
        if len(key) < MIN_FUZZY_LENGTH:
            return None
        pool: set[str] = set()
        for block in _block_keys(key):
            pool.update(self._blocks.get(block, ()))
        if not pool:
            return None
        wanted_ids = identifiers(key)
        # Blocks hold keys with their words pre-sorted, so plain ratio here equals
        # token_sort_ratio on the keys without re-sorting thousands of strings per lookup.
        best: tuple[str, float] | None = None
        for sorted_form, score, _ in process.extract(
            _sorted_words(key),
            pool,
            scorer=fuzz.ratio,
            score_cutoff=self.threshold,
            limit=5,
        ):
            candidate = self._sorted_keys[sorted_form][0]
            if len(candidate) < MIN_FUZZY_LENGTH or identifiers(candidate) != wanted_ids:
                continue
            if best is None or score > best[1] or (score == best[1] and candidate < best[0]):
                best = (candidate, score)
        if best is None:
            return None
        return self._exact[best[0]], round(float(best[1]), 1)


def _usable(key: str) -> bool:
    if not key or len(key) > NAME_MAX:
        return False
    meaningful = [w for w in key.split() if w not in STOPWORDS]
    return bool(meaningful) and any(ch.isalpha() for ch in key)


def resolve_name(
    name: str,
    index,
    *,
    mention: ConceptMention | None = None,
) -> Resolution | None:
    """Resolve one endpoint name. None means nothing usable is left of the name.

    ``mention`` carries what the extractor knows about the concept (a definitional
    name, aliases, a description) and is used for new concepts and for extra keys.
    """
    display = clean_display(name)
    long, short = split_abbreviation(display)
    names = [display]
    if mention is not None:
        names += [clean_display(mention.name)]
        names += [clean_display(a) for a in mention.aliases]
    keys: list[str] = []
    for item in names:
        keys += [key for key in name_keys(item) if key not in keys]
    if not keys or not _usable(keys[0]) or len(display) > NAME_MAX:
        return None

    for key in keys:
        entry = index.exact(key)
        if entry is not None:
            canonical_key = name_key(split_abbreviation(entry.canonical)[0])
            return Resolution(
                name=display,
                key=entry.key,
                canonical=entry.canonical,
                match="exact" if key == canonical_key else "alias",
                score=100.0,
                concept_id=entry.concept_id,
                proposal_id=entry.proposal_id,
                matched_name=entry.name,
            )
    for key in keys:
        found = index.fuzzy(key)
        if found is not None:
            entry, score = found
            return Resolution(
                name=display,
                key=entry.key,
                canonical=entry.canonical,
                match="fuzzy",
                score=score,
                concept_id=entry.concept_id,
                proposal_id=entry.proposal_id,
                matched_name=entry.name,
            )

    canonical = display_case(long)
    aliases: list[str] = []
    description = ""
    if mention is not None:
        m_long, m_short = split_abbreviation(clean_display(mention.name))
        if _usable(name_key(m_long)):
            canonical = display_case(m_long)
        extra = [m_short] if m_short else []
        extra += [clean_display(a) for a in mention.aliases]
        aliases += [a for a in extra if a]
        description = mention.description.strip()
    if short:
        aliases.append(short)
    if long != canonical and name_key(long) != name_key(canonical):
        aliases.append(long)
    seen = {name_key(canonical)}
    unique_aliases = []
    for alias in aliases:
        key = name_key(alias)
        if key and key not in seen and len(alias) <= NAME_MAX:
            seen.add(key)
            unique_aliases.append(alias)
    return Resolution(
        name=display,
        key=new_concept_key(canonical),
        canonical=canonical,
        match="new",
        aliases=tuple(unique_aliases),
        description=description[:2000],
    )


class OverlayIndex:
    """A per-source view over a shared index: additions stay local until committed.

    The shared index lives as long as a worker process; a source whose proposals are
    never written (an error, a rollback) must not leave its new concepts behind in it.
    """

    def __init__(self, base) -> None:
        self.base = base
        self.local = InMemoryConceptIndex(threshold=getattr(base, "threshold", DEFAULT_THRESHOLD))

    @property
    def max_words(self) -> int:
        return max(self.base.max_words, self.local.max_words)

    def exact(self, key: str) -> IndexEntry | None:
        return self.local.exact(key) or self.base.exact(key)

    lookup = exact

    def fuzzy(self, key: str) -> tuple[IndexEntry, float] | None:
        found = [f for f in (self.local.fuzzy(key), self.base.fuzzy(key)) if f is not None]
        return max(found, key=lambda f: f[1]) if found else None

    def add(self, entry: IndexEntry, *, keys: Iterable[str]) -> None:
        self.local.add(entry, keys=keys)
