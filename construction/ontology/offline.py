"""Offline bootstrap: an ontology drafted from chunks with the linguistic pipeline.

Each chunk is read once (``reading.read_chunk``: type cues, terms with their head
noun, relations stated by a cue verb between two terms, attribute cues).

``bootstrap_offline`` aggregates the chunks: a phrase becomes a type when enough terms
cluster under it in enough sources (generic heads only with a modifier); a two-word
type whose head is a type is its subtype, unless its modifier is a type too (then it
folds into its head, as two heads called one another fold); each term takes the type
its cues vote for, a bare noun naming a type is of it, and a listed term takes its
typed neighbours' type; relations between typed terms, stated in two sentences, give
patterns (a relation the vocabulary lacks becomes a relation type only with clear cue
evidence); attributes go to the type of the concept they describe. Every item keeps
its own quotes. Deterministic.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..keys import relation_key
from ..text import name_key
from ..types import LLMUsage, RelationSpec
from .draft import additions, spread_quotes
from .reading import (
    BOOLEAN_WORDS,
    COMMON,
    LEXICON_RELATIONS,
    ChunkReader,
    ChunkReading,
)
from .types import (
    AttributeDraft,
    DocChunk,
    KnownOntology,
    OntologyDraft,
    PatternDraft,
    Quote,
    RelationTypeDraft,
    TypeDraft,
)
from .words import GENERIC_HEADS, STOP_HEADS

# --- Aggregation over the corpus ------------------------------------------------------------


@dataclass
class _Phrase:
    members: dict[str, str] = field(default_factory=dict)  # term key -> name
    cues: Counter = field(default_factory=Counter)
    sources: set[str] = field(default_factory=set)
    quotes: list[Quote] = field(default_factory=list)
    spellings: Counter = field(default_factory=Counter)

    def score(self) -> int:
        strong = self.cues["definition"] + self.cues["such_as"] + self.cues["following"]
        return len(self.members) + 2 * strong + self.cues["heading"]


@dataclass(frozen=True)
class Settings:
    min_members: int = 3  # distinct concepts a type gathers
    min_score: int = 5
    max_types: int = 30
    # A pattern of a relation the vocabulary has: one sentence joining two typed terms by
    # the relation's cue. Few sentences of a manual do (evaluation/ontology/README.md),
    # so a pattern stated once is proposed, its support saying so; a curator decides.
    min_pattern_support: int = 1
    # The patterns a new relation type is proposed with (it needs three statements).
    min_new_pattern_support: int = 2
    min_relation_support: int = 3  # a new relation type: clear cue evidence
    min_attribute_support: int = 2
    max_quotes: int = 5


def _phrases(readings: Sequence[ChunkReading], known_labels: dict[str, str]) -> dict[str, _Phrase]:
    phrases: dict[str, _Phrase] = defaultdict(_Phrase)

    def add(phrase: str, member_key: str, member: str, how: str, q: Quote) -> None:
        p = phrases[phrase]
        if member_key and member_key != name_key(phrase):
            p.members.setdefault(member_key, member)
        if how:
            p.cues[how] += 1
        p.sources.add(q.source_slug)
        p.quotes.append(q)

    for reading in readings:
        for t in reading.terms:
            if t.head:
                add(t.head, t.key, t.name, "", t.quote)
            if t.tail and t.tail in phrases or t.tail in known_labels:
                add(t.tail, t.key, t.name, "", t.quote)
            if t.classifier:
                add(t.classifier, t.key, t.name, "", t.quote)
        for c in reading.type_cues:
            add(c.phrase, c.member_key, c.member, c.how, c.quote)
            if " " in c.phrase:  # "configuration parameter" also speaks for "parameter"
                phrases[c.phrase.split()[-1]].sources.add(c.quote.source_slug)
    # A second pass: two-word tails now known as phrases gather their terms too.
    for reading in readings:
        for t in reading.terms:
            if t.tail and t.tail in phrases and t.key not in phrases[t.tail].members:
                add(t.tail, t.key, t.name, "", t.quote)
    return phrases


def _kept_types(
    phrases: dict[str, _Phrase], *, sources: int, settings: Settings, known: KnownOntology
) -> dict[str, _Phrase]:
    """The phrases that name types, best first. A two-word phrase under a kept head
    ("maintenance command" under "command") needs less: its strong cues (definitions,
    lists) from one source are enough."""
    need_sources = min(2, sources)
    known_words = {name_key(t.label) for t in known.types}
    known_words |= {name_key(t.key.replace("_", " ")) for t in known.types}

    def fits(phrase: str, p: _Phrase, *, under_kept: bool) -> bool:
        if phrase in STOP_HEADS or phrase in GENERIC_HEADS:
            return False
        if name_key(phrase) in known_words:
            return True
        if len(p.members) < settings.min_members or p.score() < settings.min_score:
            return False
        strong = p.cues["definition"] + p.cues["such_as"] + p.cues["following"]
        return len(p.sources) >= need_sources or (under_kept and strong >= 2)

    def ranked(items):
        return sorted(items, key=lambda item: (-item[1].score(), item[0]))

    heads = ranked(
        (ph, p) for ph, p in phrases.items() if " " not in ph and fits(ph, p, under_kept=False)
    )
    kept = dict(heads[: settings.max_types])
    compounds = ranked(
        (ph, p)
        for ph, p in phrases.items()
        if " " in ph and fits(ph, p, under_kept=ph.split()[-1] in kept)
    )
    room = max(0, settings.max_types - len(kept))
    kept.update(compounds[: max(room, settings.max_types // 3)])
    return kept


def _fold_twins(
    kept: dict[str, _Phrase], readings: Sequence[ChunkReading]
) -> tuple[dict[str, _Phrase], dict[str, str]]:
    """Near twins made one type; returns the types left and, for each folded phrase,
    the phrase it went into. Two rules:

    - a compound whose modifier is itself a type ("parameter setting" with "parameter"
      a type; "database file" with "database") names a setting of a parameter, a file
      of a database: not a kind of setting or file, so it folds into its head;
    - two heads the documents call one another ("configuration parameters (also called
      settings)") fold, the one with less support into the other.
    """
    folded: dict[str, str] = {}
    for phrase in list(kept):
        words = phrase.split()
        if len(words) == 2 and words[0] in kept and words[1] in kept:
            folded[phrase] = words[1]
    said = Counter(
        tuple(sorted((a, b)))
        for r in readings
        for a, b, _ in r.synonyms
        if a in kept and b in kept and " " not in a + b
    )
    for a, b in sorted(said):
        if a in folded or b in folded:
            continue
        small, big = sorted((a, b), key=lambda ph: (kept[ph].score(), ph))
        folded[small] = big
    for small, big in folded.items():
        while big in folded:
            big = folded[big]
        folded[small] = big
        into, p = kept[big], kept[small]
        for key, name in p.members.items():
            into.members.setdefault(key, name)
        into.cues.update(p.cues)
        into.sources |= p.sources
        into.quotes.extend(p.quotes)
    left = {ph: p for ph, p in kept.items() if ph not in folded}
    return left, folded


def type_key_of(phrase: str) -> str:
    return relation_key(phrase)[:64]


def _term_types(
    readings: Sequence[ChunkReading],
    kept: dict[str, _Phrase],
    known: KnownOntology,
    folded: dict[str, str] | None = None,
) -> dict[str, str]:
    """Each term's type key, by the votes of its cues (definitions and lists count
    most, then the noun after an identifier, then its head noun). A bare noun that
    names a type is of it ("creates a new trigger": a trigger); a term listed with
    others ("A, B and C") takes the type its typed neighbours share when two of them
    at least have it and none has another."""
    folded = folded or {}
    by_label = {name_key(t.label): t.key for t in known.types if t.active}
    by_label |= {name_key(t.key.replace("_", " ")): t.key for t in known.types if t.active}

    def key_of(phrase: str) -> str:
        if not phrase:
            return ""
        known_key = by_label.get(name_key(phrase))
        if known_key:
            return known_key
        phrase = folded.get(phrase, phrase)
        return type_key_of(phrase) if phrase in kept else ""

    votes: dict[str, Counter] = defaultdict(Counter)
    for reading in readings:
        for c in reading.type_cues:
            if c.member_key:
                key = key_of(c.phrase) or key_of(c.phrase.split()[-1])
                if key:
                    votes[c.member_key][key] += 3
        for t in reading.terms:
            for phrase, weight in ((t.classifier, 2), (t.tail, 2), (t.head, 1)):
                key = key_of(phrase)
                if key:
                    votes[t.key][key] += weight
    types = {term: counts.most_common(1)[0][0] for term, counts in votes.items() if counts}
    for phrase in (*kept, *folded):
        types[name_key(phrase)] = types[COMMON + name_key(phrase)] = key_of(phrase)
    _neighbour_types(types, readings)
    return types


def _neighbour_types(types: dict[str, str], readings: Sequence[ChunkReading]) -> None:
    """Listed terms ("A, B and C") without a type take the one their typed neighbours
    share: two of them at least, and no neighbour of another type."""
    for reading in readings:
        for listed in reading.lists:
            shared = {types[k] for k in listed if k in types}
            if len(shared) == 1 and sum(k in types for k in listed) >= 2:
                (type_key,) = shared
                for k in listed:
                    types.setdefault(k, type_key)


def _type_drafts(
    kept: dict[str, _Phrase], known: KnownOntology, settings: Settings
) -> list[TypeDraft]:
    drafts = []
    kept_keys = {type_key_of(p) for p in kept} | known.type_keys()
    for phrase, p in kept.items():
        key = type_key_of(phrase)
        parent = ""
        if " " in phrase:
            head = type_key_of(phrase.split()[-1])
            parent = head if head in kept_keys and head != key else ""
        strong = sorted(
            (q for q in p.quotes if q.name and p.members.get(name_key(q.name))),
            key=lambda q: (q.source_slug, q.start or 0),
        )
        quotes = spread_quotes(strong or p.quotes, settings.max_quotes)
        members = list(p.members.values())[:12]
        cues = ", ".join(f"{n} {how.replace('_', ' ')}" for how, n in sorted(p.cues.items()))
        label = phrase[:1].upper() + phrase[1:]
        description = (
            f"{len(p.members)} concepts of the documents are {label.lower()}s "
            f"(such as {', '.join(members[:4])}), in {len(p.sources)} sources"
            + (f"; cues: {cues}" if cues else "")
            + "."
        )
        drafts.append(
            TypeDraft(
                key=key,
                label=label,
                parent_key=parent,
                description=description,
                support=p.score(),
                sources=len(p.sources),
                members=tuple(members),
                labels=(phrase,),
                quotes=quotes,
            )
        )
    return drafts


def _relation_drafts(
    readings: Sequence[ChunkReading],
    types_of: dict[str, str],
    vocabulary: Sequence[RelationSpec],
    settings: Settings,
    *,
    sources: int,
) -> tuple[list[PatternDraft], list[RelationTypeDraft]]:
    in_vocabulary = {s.key: s for s in vocabulary}
    # a pattern's support is the sentences that state it: "associated with the table,
    # view, or foreign table" is one statement, however many ends it lists
    groups: dict[tuple[str, str, str], dict[tuple, Quote]] = defaultdict(dict)
    for reading in readings:
        for r in reading.relations:
            domain, range_ = types_of.get(r.source_key, ""), types_of.get(r.target_key, "")
            if not domain or not range_:
                continue
            spec = in_vocabulary.get(r.relation)
            symmetric = spec.symmetric if spec else LEXICON_RELATIONS[r.relation][2]
            if symmetric and range_ < domain:
                domain, range_ = range_, domain
            at = (r.quote.source_slug, r.quote.revision_id, r.quote.start)
            groups[(r.relation, domain, range_)].setdefault(at, r.quote)
    patterns: list[PatternDraft] = []
    new: dict[str, list[tuple[tuple[str, str], list[Quote]]]] = defaultdict(list)
    for (relation, domain, range_), stated in groups.items():
        quotes = list(stated.values())
        slugs = {q.source_slug for q in quotes}
        if relation in in_vocabulary:
            if len(quotes) < settings.min_pattern_support:
                continue
            patterns.append(
                PatternDraft(
                    relation,
                    domain,
                    range_,
                    support=len(quotes),
                    sources=len(slugs),
                    description=(
                        f"Sources state {_a(domain)} {in_vocabulary[relation].verb} {_a(range_)} "
                        f"{_times(len(quotes))} in {len(slugs)} "
                        f"source{'s' if len(slugs) != 1 else ''}."
                    ),
                    quotes=spread_quotes(quotes, settings.max_quotes),
                )
            )
        else:
            new[relation].append(((domain, range_), quotes))
    relation_types = []
    for relation, pairs in new.items():
        quotes = [q for _, qs in pairs for q in qs]
        slugs = {q.source_slug for q in quotes}
        if len(quotes) < settings.min_relation_support or len(slugs) < min(2, sources):
            continue
        label, verb, symmetric, acyclic = LEXICON_RELATIONS[relation]
        shapes = sorted(
            (pair for pair, qs in pairs if len(qs) >= settings.min_new_pattern_support),
            key=lambda pair: -len(dict(pairs)[pair]),
        )
        relation_types.append(
            RelationTypeDraft(
                key=relation,
                label=label,
                verb=verb,
                description=(
                    f"Sources say one concept {verb} another {len(quotes)} times in "
                    f"{len(slugs)} sources, in the cue words the reader knows for it."
                ),
                symmetric=symmetric,
                acyclic=acyclic,
                patterns=tuple(shapes[:8]),
                support=len(quotes),
                sources=len(slugs),
                labels=(relation,),
                quotes=spread_quotes(quotes, settings.max_quotes),
            )
        )
    patterns.sort(key=lambda d: (-d.support, d.relation_key, d.domain_key, d.range_key))
    relation_types.sort(key=lambda d: (-d.support, d.key))
    return patterns, relation_types


def _datatype(key: str, values: Iterable[str]) -> str:
    if key == "data_type":
        return "string"
    seen = [v.lower() for v in values]
    if seen and all(re.fullmatch(r"-?\d+", v) for v in seen):
        return "integer"
    if seen and all(re.fullmatch(r"-?\d+(\.\d+)?", v) for v in seen):
        return "decimal"
    if seen and all(v in BOOLEAN_WORDS for v in seen):
        return "boolean"
    return "string"


ATTRIBUTE_LABELS = {"default_value": "Default value", "data_type": "Data type"}


def _attribute_drafts(
    readings: Sequence[ChunkReading], types_of: dict[str, str], settings: Settings
) -> list[AttributeDraft]:
    groups: dict[tuple[str, str], list[Quote]] = defaultdict(list)
    for reading in readings:
        for a in reading.attributes:
            type_key = types_of.get(a.subject_key, "")
            if type_key:
                groups[(type_key, a.key)].append(a.quote)
    drafts = []
    for (type_key, key), quotes in sorted(groups.items()):
        if len(quotes) < settings.min_attribute_support:
            continue
        slugs = {q.source_slug for q in quotes}
        label = ATTRIBUTE_LABELS[key]
        drafts.append(
            AttributeDraft(
                type_key=type_key,
                key=key,
                label=label,
                datatype=_datatype(key, (q.value for q in quotes)),
                description=(
                    f"The documents give a {type_key.replace('_', ' ')}'s "
                    f"{label.lower()} {len(quotes)} times in {len(slugs)} sources."
                ),
                support=len(quotes),
                sources=len(slugs),
                quotes=spread_quotes(quotes, settings.max_quotes),
            )
        )
    return drafts


def _once(readings: Sequence[ChunkReading]) -> list[ChunkReading]:
    """Each sentence's evidence once: chunks overlap, so the sentences they share are
    read twice."""
    seen: set[tuple] = set()

    def fresh(kind: str, q: Quote, *what: str) -> bool:
        at = (kind, q.source_slug, q.revision_id, q.start, *what)
        if at in seen:
            return False
        seen.add(at)
        return True

    out = []
    for r in readings:
        out.append(
            ChunkReading(
                r.chunk,
                terms=[t for t in r.terms if fresh("term", t.quote, t.key)],
                type_cues=[
                    c for c in r.type_cues if fresh("cue", c.quote, c.how, c.phrase, c.member_key)
                ],
                relations=[
                    x
                    for x in r.relations
                    if fresh("rel", x.quote, x.relation, x.source_key, x.target_key)
                ],
                attributes=[
                    a for a in r.attributes if fresh("attr", a.quote, a.key, a.subject_key)
                ],
                lists=r.lists,
                synonyms=[y for y in r.synonyms if fresh("syn", y[2], y[0], y[1])],
            )
        )
    return out


def draft_from_readings(
    readings: Sequence[ChunkReading],
    *,
    vocabulary: Sequence[RelationSpec],
    known: KnownOntology | None = None,
    settings: Settings | None = None,
) -> OntologyDraft:
    """The whole draft (before leaving out what the graph has: see ``additions``)."""
    known = known or KnownOntology()
    settings = settings or Settings()
    readings = _once(readings)
    sources = len({r.chunk.slug for r in readings})
    known_labels = {name_key(t.label): t.key for t in known.types}
    phrases = _phrases(readings, known_labels)
    kept = _kept_types(phrases, sources=sources, settings=settings, known=known)
    kept, folded = _fold_twins(kept, readings)
    types_of = _term_types(readings, kept, known, folded)
    patterns, relation_types = _relation_drafts(
        readings, types_of, vocabulary, settings, sources=sources
    )
    return OntologyDraft(
        types=tuple(_type_drafts(kept, known, settings)),
        relation_types=tuple(relation_types),
        patterns=tuple(patterns),
        attributes=tuple(_attribute_drafts(readings, types_of, settings)),
        chunks_read=len(readings),
        usage=LLMUsage(),
    )


def bootstrap_offline(
    chunks: Sequence[DocChunk],
    *,
    vocabulary: Sequence[RelationSpec],
    known: KnownOntology | None = None,
    settings: Settings | None = None,
) -> OntologyDraft:
    """Draft an ontology from ``chunks`` and return only what ``known`` lacks."""
    known = known or KnownOntology()
    reader = ChunkReader(vocabulary)
    readings = [reader.read(chunk) for chunk in chunks]
    whole = draft_from_readings(readings, vocabulary=vocabulary, known=known, settings=settings)
    return additions(whole, known)


def _times(n: int) -> str:
    """ "once", "twice", "3 times"."""
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def _a(word: str) -> str:
    """A word with its article: "a setting", "an argument"."""
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"
