"""SEARCH: resolve endpoint names to known concepts, or decide they are new.

Exact name and alias keys first, then the fuzzy path: the same words in another order,
plural or spelling ("Normalised tokens search" / "Token search normalization"), two
words joined or split ("multi head" / "multihead"), or a word the graph does not know
misspelling one it does ("vectr search"). Each is a dict lookup on the query's words,
so a lookup costs the same against 500,000 concepts as against 50. A name with a known
word where a known name has another known word is another concept ("heap sort" / "heap
port"), and names that differ in a number or identifier ("GPT-3", "GPT-4"), or in an
acronym ("HTTP" / "HTTPS", "SSL handshake" / "TLS handshake"), never fuzzy-match.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import product

from rapidfuzz import fuzz, process
from rapidfuzz.distance import OSA

from .keys import new_concept_key
from .text import (
    acronym_clash,
    acronym_words,
    clean_display,
    display_case,
    identifiers,
    name_key,
    name_keys,
    spelling,
    split_abbreviation,
)
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


MAX_COMBINATIONS = 64  # spellings of a query's unknown words tried at most
MAX_TWINS = 8  # names of one spelling form compared with a query at most


def _sorted_words(key: str) -> str:
    return " ".join(sorted(key.split()))


def _spelling_order(key: str) -> str:
    """A key's words in the order of its spelling form."""
    return " ".join(sorted(key.split(), key=spelling))


def spelling_form(key: str) -> str:
    """What a key shares with its reorderings, plurals and other spellings: the
    ``spelling`` of each word, sorted ("Normalised tokens search" and "search token
    normalized" have one form)."""
    return " ".join(sorted(spelling(word) for word in key.split()))


def edits_allowed(word: str) -> int:
    """How many edits a misspelt word may be from the word it stands for: none below five
    letters ("port" is not "sort"), one up to eight ("vectr"), two from nine."""
    if len(word) < 5 or not word.isalpha():
        return 0
    return 1 if len(word) < 9 else 2


# Endings that make another word of one stem ("ranked" / "ranker", "tuned" / "tune",
# "encoding" / "encoder"): a word one such ending from a known word is no misspelling.
ENDINGS = frozenset(
    {"", "e", "s", "ed", "er", "es", "or", "ing", "ion", "ive", "al", "ly", "ers", "ment", "ity"}
)


def another_ending(word: str, other: str) -> bool:
    """Whether ``word`` and ``other`` are one stem (three letters or more) with two
    different ``ENDINGS``, not one word misspelt ("ranked" / "ranker", but not "vectr" /
    "vector" or "planing" / "planning"). A final "e" or "s" alone is not an ending here
    ("spars" / "sparse" is a typo; plurals are ``spelling``'s)."""
    for ending in ENDINGS:
        if not word.endswith(ending):
            continue
        stem = word[: len(word) - len(ending)]
        rest = other[len(stem) :]
        if (
            len(stem) >= 3
            and other.startswith(stem)
            and rest != ending
            and rest in ENDINGS
            and {ending, rest} not in ({"", "e"}, {"", "s"})
        ):
            return True
    return False


def _shelf(word: str) -> str:
    return f"{word[0]}{len(word)}"


class InMemoryConceptIndex:
    """A ``ConceptIndex`` held in memory: a dict for exact keys, word forms for fuzzy ones.

    Fuzzy lookup never scans names. Every key is filed under its spelling form (its
    words' ``spelling``, sorted), and every word of those forms under its first letter
    and length. A lookup reads the query's own form (a reordering, plural or spelling
    variant), the forms with two of its words joined or one split ("multi head" /
    "multihead"), and, for each word the graph does not know, the known words of the
    same first letter within ``edits_allowed`` of it (a typo), each a dict lookup. A word
    the graph knows is never exchanged for another known word: "heap sort" and "heap
    port", "sparse token search" and "dense token search" are two concepts. So the
    cost of a lookup follows the query and the vocabulary, not the number of names.

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
        # Keys by spelling form, in registration order (the first one answers).
        self._forms: dict[str, list[str]] = {}
        # How many forms hold each word, and the words by first letter and length (the
        # blocks a misspelt word is looked up in: an ordered set per block).
        self._words: dict[str, int] = {}
        self._blocks: dict[str, dict[str, None]] = {}
        self._max_words = 1
        # Words some registered name writes as an acronym. Never taken out again: a word
        # once seen as an acronym stays one, which only makes fuzzy matching stricter.
        self._acronyms: set[str] = set()

    def __len__(self) -> int:
        return len(self._exact)

    @property
    def max_words(self) -> int:
        return self._max_words

    @staticmethod
    def _winner(claims: list[IndexEntry]) -> IndexEntry:
        # Canonical names win over aliases, concepts over proposed concepts, then the
        # oldest (lowest id): the same graph always resolves the same way, whatever order
        # its names reached the index in (a full build, or changes applied one by one).
        return min(
            claims,
            key=lambda c: (
                not c.is_canonical,
                c.concept_id is None,
                c.concept_id if c.concept_id is not None else (c.proposal_id or 0),
            ),
        )

    def add(self, entry: IndexEntry, *, keys: Iterable[str], names: Iterable[str] = ()) -> None:
        """Register ``entry`` under ``keys``; ``names`` are the names the keys were made
        from, beside the entry's own (their acronyms are remembered as such)."""
        endpoint = (entry.concept_id, entry.proposal_id)
        for name in {entry.name, entry.canonical, *names}:
            self._acronyms |= acronym_words(name)
        for key in keys:
            if not key:
                continue
            current = self._exact.get(key)
            if current is None:
                self._exact[key] = entry
                form = spelling_form(key)
                forms = self._forms.get(form)
                if forms is None:
                    self._forms[form] = [key]
                    self._count_words(form, 1)
                else:
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

    def _count_words(self, form: str, step: int) -> None:
        for word in set(form.split()):
            count = self._words.get(word, 0) + step
            if count > 0:
                self._words[word] = count
                if count == 1:
                    self._blocks.setdefault(_shelf(word), {})[word] = None
                continue
            self._words.pop(word, None)
            block = self._blocks.get(_shelf(word))
            if block is not None:
                block.pop(word, None)
                if not block:
                    del self._blocks[_shelf(word)]

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
            form = spelling_form(key)
            forms = self._forms.get(form, [])
            if key in forms:
                forms.remove(key)
            if not forms and form in self._forms:
                del self._forms[form]
                self._count_words(form, -1)
        return len(keys)

    def add_name(self, entry: IndexEntry) -> None:
        """Register an entry under the key of its name (and of its abbreviation, if any)."""
        self.add(entry, keys=name_keys(entry.name))

    def exact(self, key: str) -> IndexEntry | None:
        return self._exact.get(key)

    def lookup(self, key: str) -> IndexEntry | None:
        return self._exact.get(key)

    def knows(self, word: str) -> bool:
        """Whether some name in the index has this word (in any of its spellings)."""
        return spelling(word) in self._words

    def is_acronym_word(self, word: str) -> bool:
        """Whether some registered name writes this key word as an acronym."""
        return word in self._acronyms

    def fuzzy(
        self,
        key: str,
        *,
        known: Callable[[str], bool] | None = None,
        acronyms: Iterable[str] = (),
    ) -> tuple[IndexEntry, float] | None:
        """The best known name that ``key`` reorders, respells, joins or splits, or
        misspells (scored at least ``threshold``), with its score; None if there is none.

        ``known`` says which other words count as known (another index's vocabulary):
        such a word is never corrected either. ``acronyms`` are key words the query wrote
        as acronyms; with those the index knows, no name clashing with the query by an
        acronym is offered (``construction.text.acronym_clash``).
        """
        if len(key) < MIN_FUZZY_LENGTH:
            return None
        words = key.split()
        wanted_ids = identifiers(key)
        extra = frozenset(acronyms)

        def acronym(word: str) -> bool:
            return word in extra or word in self._acronyms

        best: tuple[float, float, str] | None = None
        for variant, corrected in self._variants(words, known):
            found = self._forms.get(" ".join(sorted(variant)))
            if not found:
                continue
            # The query's words in the order of the form's, so that a misspelt word is
            # compared with the word it stands for wherever the sort put either.
            if len(variant) == len(words):
                aligned = " ".join(w for _, w in sorted(zip(variant, words, strict=True)))
            else:
                aligned = _sorted_words(key)
            for candidate in found[:MAX_TWINS]:
                if (
                    len(candidate) < MIN_FUZZY_LENGTH
                    or identifiers(candidate) != wanted_ids
                    or acronym_clash(words, candidate.split(), acronym)
                ):
                    continue
                as_written = fuzz.ratio(key, candidate)
                in_form = fuzz.ratio(aligned, _spelling_order(candidate))
                score = max(as_written, in_form)
                if corrected and score < self.threshold:
                    continue
                # Names with the same words in another order ("Sparse dense ..." and
                # "Dense sparse ...") are told apart by the order the query has.
                rank = (score, as_written, candidate)
                if (
                    best is None
                    or rank[:2] > best[:2]
                    or (rank[:2] == best[:2] and candidate < best[2])
                ):
                    best = rank
        if best is None:
            return None
        return self._exact[best[2]], round(float(best[0]), 1)

    def _variants(
        self, words: list[str], elsewhere: Callable[[str], bool] | None = None
    ) -> Iterator[tuple[list[str], bool]]:
        """The word lists a query may stand for, each with whether a misspelt word was
        corrected in it: its own spellings, two neighbours joined, an unknown word split
        in two known ones, and each unknown word exchanged for known words near it."""
        known = self._words
        spelt = [spelling(w) for w in words]
        yield spelt, False
        for i in range(len(words) - 1):
            joined = spelling(words[i] + words[i + 1])
            if joined in known:
                yield spelt[:i] + [joined] + spelt[i + 2 :], False
        unknown = [
            i
            for i, w in enumerate(spelt)
            if w not in known and (elsewhere is None or not elsewhere(words[i]))
        ]
        for i in unknown:
            word = words[i]
            for cut in range(2, len(word) - 1):
                head, tail = spelling(word[:cut]), spelling(word[cut:])
                if head in known and tail in known:
                    yield spelt[:i] + [head, tail] + spelt[i + 1 :], False
        options: list[list[str]] = []
        for i in unknown:
            near = self._near(spelt[i])
            if words[i] != spelt[i]:  # "mixtre" respelt "mixter" is still "mixture"
                near += [w for w in self._near(words[i]) if w not in near]
            if not near:
                return  # a new word the graph has nothing like: no misspelling of a name
            options.append(near)
        if not options:
            return
        for count, choice in enumerate(product(*options)):
            if count >= MAX_COMBINATIONS:
                return
            variant = list(spelt)
            for i, word in zip(unknown, choice, strict=True):
                variant[i] = word
            yield variant, True

    def _near(self, word: str) -> list[str]:
        """Known words that ``word`` may misspell: same first letter, within
        ``edits_allowed`` (a swap of two neighbouring letters is one edit), closest first."""
        edits = edits_allowed(word)
        if not edits:
            return []
        near: list[tuple[int, str]] = []
        for size in range(len(word) - edits, len(word) + edits + 1):
            block = self._blocks.get(f"{word[0]}{size}")  # as ``_shelf`` files them
            if not block:
                continue
            for other, distance, _ in process.extract(
                word,
                block.keys(),
                scorer=OSA.distance,
                score_cutoff=edits,
                limit=None,
            ):
                if not another_ending(word, other):
                    near.append((int(distance), other))
        near.sort()
        return [other for _, other in near]


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
    acronyms = frozenset().union(*(acronym_words(item) for item in names))
    for key in keys:
        found = index.fuzzy(key, acronyms=acronyms)
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

    verbatim = mention is not None and mention.verbatim
    canonical = long if verbatim else display_case(long)
    aliases: list[str] = []
    description = ""
    type_key = mention.type_key if mention is not None else ""
    if mention is not None:
        m_long, m_short = split_abbreviation(clean_display(mention.name))
        if _usable(name_key(m_long)):
            canonical = m_long if verbatim else display_case(m_long)
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
        type_key=type_key,
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

    def is_acronym_word(self, word: str) -> bool:
        base = getattr(self.base, "is_acronym_word", None)
        return self.local.is_acronym_word(word) or (base is not None and base(word))

    def fuzzy(self, key: str, *, acronyms: Iterable[str] = ()) -> tuple[IndexEntry, float] | None:
        # A word the shared index knows is not a misspelling of a local name either, and
        # a word either side writes as an acronym is an acronym on both.
        written = {*acronyms, *(w for w in key.split() if self.is_acronym_word(w))}
        local = self.local.fuzzy(key, known=getattr(self.base, "knows", None), acronyms=written)
        found = [f for f in (local, self.base.fuzzy(key, acronyms=written)) if f is not None]
        return max(found, key=lambda f: f[1]) if found else None

    def add(self, entry: IndexEntry, *, keys: Iterable[str], names: Iterable[str] = ()) -> None:
        self.local.add(entry, keys=keys, names=names)

    def remember(self, resolution: Resolution) -> None:
        """A new concept, findable by any of its names by later mentions in this source."""
        entry = IndexEntry(
            name=resolution.canonical, canonical=resolution.canonical, key=resolution.key
        )
        names = (resolution.canonical, *resolution.aliases)
        keys: list[str] = []
        for item in names:
            keys += [key for key in name_keys(item) if key not in keys]
        self.add(entry, keys=keys, names=names)
