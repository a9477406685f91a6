"""Offline bootstrap, one chunk: what the linguistic pipeline reads in it.

Each chunk is read once (``read_chunk``): its sentences tagged, the sentences holding a
cue of a relation (or a definition) parsed, and its terms scored (``linguistic.terms``).
From one chunk come:

- **type cues**: "X is a Y" (the reader's own definition construction), "Ys such as X
  and Z", "the following Ys:", a heading naming a plural ("SQL Commands", "Lock
  Modes"), and the noun right after an identifier ("the `work_mem` parameter");
- **terms** with their head noun ("ACCESS EXCLUSIVE lock" is a lock), which cluster;
- **relations** stated by a cue verb of the lexicon between two terms
  (``linguistic.relations.find_relations``), for the vocabulary and for the cue
  lexicon's relations the vocabulary lacks;
- **attribute cues**: a label "X (integer)" and "defaults to V" / "the default is V";
- **lists** of terms ("A, B and C"), whose typed members type the rest, and
  **synonyms** of type nouns ("parameters (also called settings)").

A statement form in capitals ("CREATE TRIGGER") is read as a command, and a common noun
("a new trigger") under a key of its own, apart from an identifier spelled alike.

``offline`` aggregates the readings of a corpus into a draft.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..relations import normalise_label
from ..text import name_key, singular
from ..types import RelationSpec
from .types import DocChunk, Quote
from .words import GENERIC_HEADS, STOP_HEADS, is_statement

# The cue lexicon's relations, as the vocabulary would name them, for a relation the
# graph's vocabulary lacks (proposed only with clear cue evidence).
LEXICON_RELATIONS = {
    "part_of": ("Part of", "is part of", False, True),
    "requires": ("Requires", "requires", False, False),
    "uses": ("Uses", "uses", False, False),
    "produces": ("Produces", "produces", False, False),
    "configures": ("Configures", "configures", False, False),
    "alternative_to": ("Alternative to", "is an alternative to", True, False),
    "contrasts_with": ("Contrasts with", "contrasts with", True, False),
    "applies_to": ("Applies to", "applies to", False, False),
    "builds_on": ("Builds on", "builds on", False, True),
}
DATATYPE_WORDS = {
    "integer": "integer",
    "int": "integer",
    "bigint": "integer",
    "boolean": "boolean",
    "bool": "boolean",
    "string": "string",
    "text": "string",
    "enum": "string",
    "enumeration": "string",
    "floating point": "decimal",
    "float": "decimal",
    "real": "decimal",
    "numeric": "decimal",
    "decimal": "decimal",
    "date": "date",
    "url": "uri",
    "uri": "uri",
}
LABEL_TYPED = re.compile(
    r"^\s*(?P<name>[A-Za-z_][\w.$-]*(?: [A-Za-z_][\w.$-]*)?)\s+\((?P<dt>"
    + "|".join(sorted(map(re.escape, DATATYPE_WORDS), key=len, reverse=True))
    + r")\)",
    re.IGNORECASE,
)
DEFAULT = re.compile(
    r"\b(?:defaults? to|[Tt]he default(?: value)?(?: setting)? (?:is|of \S+ is)|"
    r"[Dd]efault(?: value)?:)\s+(?:(?:normally|usually|typically|generally|currently|"
    r"always|now|also|simply|set to|equal to)\s+)*"
    r"(?P<value>[`'\"]?[-\w.:/]+(?: ?(?:kB|MB|GB|TB|ms|s|min|h))?)",
)
# "X (also called Y)", "X, also known as Y": two names of one kind.
SYNONYM = re.compile(
    r"(?P<a>\w+)\s*(?:\(|,)\s*(?:also|sometimes|often)\s+(?:called|known as|named)\s+"
    r"(?:an? |the )?(?P<b>\w+)"
)
# "two megabytes (`2MB`)": the literal in brackets after a number spelled out.
SPELLED_OUT = re.compile(r"\s+[A-Za-z]+\s+\(\s*[`'\"]?([-\w.:/]+?)[`'\"]?\s*\)")
NUMBER_WORDS = frozenset(
    ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
)
BOOLEAN_WORDS = frozenset({"on", "off", "true", "false", "yes", "no"})
PLURAL_TAGS = frozenset({"NNS", "NNPS"})
COMMON = "~"  # the key of a common noun, apart from names spelled alike
IDENTIFIER = re.compile(r"_|[a-z][0-9]|^[a-z]+[A-Z]|\w\.\w{2,}")


# --- One chunk ----------------------------------------------------------------------------


@dataclass(frozen=True)
class TermSeen:
    key: str
    name: str
    head: str  # the singular head noun of a name of several words, else ""
    tail: str  # its last two words (singular), else ""
    classifier: str  # the noun right after it when it is an identifier, else ""
    quote: Quote


@dataclass(frozen=True)
class TypeCue:
    how: str  # "definition", "such_as", "following", "heading"
    phrase: str  # the type's words, singular, lower case, at most two
    member_key: str
    member: str
    quote: Quote


@dataclass(frozen=True)
class RelationSeen:
    relation: str
    source_key: str
    source: str
    target_key: str
    target: str
    quote: Quote


@dataclass(frozen=True)
class AttributeSeen:
    subject_key: str
    subject: str
    key: str
    value: str
    quote: Quote


@dataclass
class ChunkReading:
    chunk: DocChunk
    terms: list[TermSeen] = field(default_factory=list)
    type_cues: list[TypeCue] = field(default_factory=list)
    relations: list[RelationSeen] = field(default_factory=list)
    attributes: list[AttributeSeen] = field(default_factory=list)
    # term keys listed together ("A, B and C"): typed neighbours type the rest
    lists: list[tuple[str, ...]] = field(default_factory=list)
    # two type phrases said to name one kind ("parameters (also called settings)")
    synonyms: list[tuple[str, str, Quote]] = field(default_factory=list)


def lexicon_specs(vocabulary: Sequence[RelationSpec]) -> list[RelationSpec]:
    """The vocabulary, and the cue lexicon's relations it lacks (by key or by meaning)."""
    known = {normalise_label(n) for s in vocabulary for n in (s.key, s.label, s.verb)}
    known |= {s.key for s in vocabulary}
    extra = [
        RelationSpec(key, label, verb, "", symmetric, acyclic)
        for key, (label, verb, symmetric, acyclic) in LEXICON_RELATIONS.items()
        if key not in known and normalise_label(verb) not in known
    ]
    return [*vocabulary, *extra]


class ChunkReader:
    """Reads chunks; the cue table and the parse rule are built once per vocabulary."""

    def __init__(self, vocabulary: Sequence[RelationSpec]) -> None:
        from ..linguistic.cues import cue_table, cue_words
        from ..linguistic.nlp import ParseWhen
        from ..linguistic.verbs import cue_from_verb

        self.specs = lexicon_specs(vocabulary)
        self.keys = {s.key for s in self.specs}
        self.table = cue_table(self.specs, cue_from_verb)
        self.when = ParseWhen(cue_words(self.table, self.keys), definitions=True)

    def read(self, chunk: DocChunk) -> ChunkReading:
        from ..linguistic.markup import read_sentences
        from ..linguistic.nlp import pipeline
        from ..linguistic.relations import find_relations
        from ..linguistic.terms import TermTable

        sentences = read_sentences(chunk.text)
        docs = pipeline().analyse([s.clean for s in sentences], parse_if=self.when)
        terms = TermTable(None)
        for index, (sentence, parsed) in enumerate(zip(sentences, docs, strict=True)):
            terms.read(index, parsed, sentence)
        terms.score()
        terms.collapse_generic_tails()
        terms.score()
        reading = ChunkReading(chunk)

        def quote(index: int) -> Quote:
            s = sentences[index]
            start = chunk.offset + s.start
            text = chunk.text[s.start : s.end][:2000]
            return Quote(chunk.slug, chunk.revision_id, start, start + len(text), text)

        def term_at(index: int, tok) -> tuple[str, str]:
            return _term_at(terms, index, tok, sentences[index])

        _terms(reading, terms, docs, quote)
        label = ""  # the last label line ("`work_mem` (integer)"): what follows describes it
        for index, (sentence, doc) in enumerate(zip(sentences, docs, strict=True)):
            if sentence.heading:
                _heading(reading, doc, quote(index))
                label = ""
                continue
            label = _label(reading, sentence, quote(index)) or label
            _listed(reading, doc, index, term_at, quote)
            _neighbours(reading, doc, index, term_at)
            _synonyms(reading, doc, sentence.clean, quote(index))
            _defaults(reading, sentence.clean, doc, index, term_at, label, quote)
            if not doc.has_annotation("DEP"):
                continue
            for item in find_relations(doc, self.table, contrast=False, is_a=True):
                source_key, source = term_at(index, doc[item.source])
                target_key, target = term_at(index, doc[item.target])
                if not source_key or not target_key or source_key == target_key:
                    continue
                if item.relation == "is_a":
                    phrase = _phrase(doc, doc[item.target])
                    if phrase:
                        reading.type_cues.append(
                            TypeCue(
                                "definition",
                                phrase,
                                source_key,
                                source,
                                _named(quote(index), source),
                            )
                        )
                    continue
                reading.relations.append(
                    RelationSeen(
                        item.relation,
                        source_key,
                        source,
                        target_key,
                        target,
                        _named(quote(index), source, other=target),
                    )
                )
        return reading


def _term_at(terms, index: int, tok, sentence) -> tuple[str, str]:
    """The term a token stands for (key, name): a statement form it is part of, the
    scored term whose head it is, a proper noun, or a common noun under its own key."""
    form = statement_at(tok.doc, tok)
    if form:
        return name_key(form), form
    cand = terms.at(index, tok.i)
    common = (
        tok.pos_ == "NOUN"
        and tok.is_alpha
        and tok.text[1:].islower()
        and "code" not in sentence.marked(tok.idx, tok.idx + len(tok.text))
    )
    if cand is not None and not (common and len(cand.name.split()) == 1):
        return cand.key, cand.name
    if tok.pos_ == "PROPN" and tok.is_alpha:
        return name_key(tok.text), tok.text
    if common:
        lemma = singular(tok.lemma_.lower())
        if lemma in STOP_HEADS or lemma in GENERIC_HEADS:
            return "", ""  # "a value", "the object": no concept
        # a common noun names the kind ("creates a new trigger"), never the identifier
        # spelled alike (the `format` function): its own key
        return COMMON + name_key(lemma), tok.lemma_
    return "", ""


def _label(reading: ChunkReading, sentence, q: Quote) -> str:
    """A label line "`work_mem` (integer)": the data type of what it names, and the
    name (what follows describes it), or ""."""
    found = LABEL_TYPED.match(sentence.clean)
    if not found or not (sentence.label or found.start() == 0):
        return ""
    label, datatype = found.group("name"), found.group("dt").lower()
    q = _named(q, label, value=datatype)
    reading.attributes.append(AttributeSeen(name_key(label), label, "data_type", datatype, q))
    return label


def read_chunk(chunk: DocChunk, *, vocabulary: Sequence[RelationSpec]) -> ChunkReading:
    """One chunk read on its own (a reader is made for it)."""
    return ChunkReader(vocabulary).read(chunk)


def _named(q: Quote, name: str, *, other: str = "", value: str = "") -> Quote:
    return Quote(q.source_slug, q.revision_id, q.start, q.end, q.quote, name, other, value)


def _phrase(doc, tok) -> str:
    """A type's words from its head noun: the noun and at most one noun before it,
    singular and in lower case ("configuration parameters" -> "configuration parameter")."""
    if tok.pos_ not in ("NOUN", "PROPN") or not tok.is_alpha:
        return ""
    head = singular(tok.lemma_.lower() if tok.pos_ == "NOUN" else tok.lower_)
    if head in STOP_HEADS or len(head) < 3:
        return ""
    prev = doc[tok.i - 1] if tok.i > 0 else None
    if (
        prev is not None
        and prev.pos_ == "NOUN"
        and prev.is_alpha
        and prev.whitespace_
        and (prev.i == 0 or doc[prev.i - 1].text not in ("-", "/"))
        and prev.lower_ not in STOP_HEADS
    ):
        return f"{prev.lower_} {head}"
    return "" if head in GENERIC_HEADS else head


def _terms(reading: ChunkReading, terms, docs, quote) -> None:
    from ..linguistic.terms import TERM_SCORE

    for cand in terms.candidates.values():
        if cand.score < TERM_SCORE or not cand.mentions:
            continue
        mention = cand.mentions[0]
        doc = docs[mention.sentence]
        words = cand.name.split()
        head = tail = classifier = ""
        if is_statement(cand.name):
            # "CREATE TRIGGER" is a command, not a trigger
            q = _named(quote(mention.sentence), cand.name)
            reading.terms.append(TermSeen(cand.key, cand.name, "command", "", "", q))
            continue
        if len(words) > 1 and not cand.of_phrase and words[-1].isalpha():
            head = singular(words[-1].lower())
            prev = words[-2].lower()
            if prev.isalpha() and prev not in STOP_HEADS:
                tail = f"{prev} {head}"
        if cand.identifier or len(words) == 1:
            for m in cand.mentions:
                after = docs[m.sentence][m.last + 1] if m.last + 1 < len(docs[m.sentence]) else None
                if (
                    after is not None
                    and after.pos_ == "NOUN"
                    and after.is_alpha
                    and not after.text.isupper()  # "CREATE TRIGGER": no classifier
                ):
                    classifier = singular(after.lemma_.lower())
                    mention, doc = m, docs[m.sentence]
                    break
        if head in STOP_HEADS:
            head = tail = ""
        if head in GENERIC_HEADS:
            head = ""  # "database object" may be a type; "object" alone is none
        if classifier in STOP_HEADS or classifier in GENERIC_HEADS:
            classifier = ""
        if not (head or tail or classifier):
            continue
        del doc
        base = " ".join(words[:-1])
        if (
            head
            and len(words) == 2
            and not words[-1].isupper()
            and (IDENTIFIER.search(base) or base.isupper())
        ):
            # "the `work_mem` setting", "the VACUUM command": the name is the identifier
            reading.terms.append(
                TermSeen(name_key(base), base, "", "", head, _named(quote(mention.sentence), base))
            )
        reading.terms.append(
            TermSeen(
                cand.key,
                cand.name,
                head,
                tail,
                classifier,
                _named(quote(mention.sentence), cand.name),
            )
        )


def statement_at(doc, tok) -> str:
    """The statement form a capitalised token is part of ("CREATE" of "CREATE INDEX
    creates an index"), or ""."""
    if not (tok.text.isupper() and tok.is_alpha):
        return ""

    def caps(i: int) -> bool:
        return 0 <= i < len(doc) and doc[i].text.isupper() and doc[i].is_alpha

    start = tok.i
    while caps(start - 1) and doc[start - 1].whitespace_ and tok.i - start < 3:
        start -= 1
    end = tok.i
    while caps(end + 1) and doc[end].whitespace_ and end - start < 3:
        end += 1
    for first in range(start, tok.i + 1):
        name = doc[first : end + 1].text
        if is_statement(name):
            return name
    return ""


def _heading(reading: ChunkReading, doc, q: Quote) -> None:
    """A heading ending in a plural noun names a type: "SQL Commands", "Lock Modes"."""
    last = next((t for t in reversed(doc) if not t.is_punct), None)
    if last is None or last.tag_ not in PLURAL_TAGS:
        return
    phrase = _phrase(doc, last)
    if phrase:
        reading.type_cues.append(TypeCue("heading", phrase, "", "", q))


def _listed(reading: ChunkReading, doc, index: int, term_at, quote) -> None:
    """ "Ys such as X, Z" and "the following Ys": Y is a type, X and Z of it."""
    n = len(doc)
    for tok in doc:
        if tok.lower_ == "such" and tok.i + 1 < n and doc[tok.i + 1].lower_ == "as":
            before = tok.i - 1 if tok.i > 0 and doc[tok.i - 1].text != "," else tok.i - 2
            if before < 0 or doc[before].tag_ not in PLURAL_TAGS:
                continue
            phrase = _phrase(doc, doc[before])
            if not phrase:
                continue
            members: list[tuple[str, str]] = []
            for other in doc[tok.i + 2 :]:
                if other.text in (".", ";", ":", ")") or other.lower_ in ("which", "that"):
                    break
                if other.pos_ in ("VERB", "AUX"):
                    break  # "... such as VACUUM and REINDEX can be run by the daemon"
                key, name = term_at(index, other)
                if key and (key, name) not in members:
                    members.append((key, name))
            for key, name in members[:6]:
                reading.type_cues.append(
                    TypeCue("such_as", phrase, key, name, _named(quote(index), name))
                )
        elif tok.lower_ == "following" and tok.i + 1 < n:
            j = tok.i + 1
            while j + 1 < n and doc[j + 1].pos_ in ("NOUN", "PROPN"):
                j += 1
            end = doc[j + 1].text if j + 1 < n else ""
            if doc[j].tag_ in PLURAL_TAGS and end in (":", "", "."):
                phrase = _phrase(doc, doc[j])
                if phrase:
                    reading.type_cues.append(TypeCue("following", phrase, "", "", quote(index)))


# Tokens a listed item may hold besides its term: articles, adjectives, numbers.
LIST_FILLERS = frozenset({"DET", "ADJ", "NUM", "NOUN", "PROPN", "X", "SYM"})


def _neighbours(reading: ChunkReading, doc, index: int, term_at) -> None:
    """ "A, B and C": the terms listed together, each item's term its last noun (the
    head). Three items at least, separated by commas (and a last "and"/"or"); an item
    holds only its term and its modifiers."""
    items: list[tuple[str, str]] = []
    current: tuple[str, str] = ("", "")
    commas = 0

    def close() -> None:
        nonlocal items, commas
        if len(items) >= 3 and commas >= 1:
            keys = tuple(dict.fromkeys(k for k, _ in items))
            if len(keys) >= 3:
                reading.lists.append(keys)
        items, commas = [], 0

    for tok in doc:
        if tok.text == "," or tok.lower_ in ("and", "or"):
            if current[0]:
                items.append(current)
                current = ("", "")
                commas += tok.text == ","
            elif tok.text == "," or not items:
                close()
            continue
        if tok.pos_ in LIST_FILLERS or tok.text in ("`", "'", '"'):
            if tok.pos_ in ("NOUN", "PROPN", "X", "SYM") or tok.text.isupper():
                key, name = term_at(index, tok)
                if key:
                    current = (key, name)
            continue
        if current[0]:
            items.append(current)
            current = ("", "")
        close()
    if current[0]:
        items.append(current)
    close()


def _synonyms(reading: ChunkReading, doc, clean: str, q: Quote) -> None:
    """ "configuration parameters (also called settings)": two head nouns, one kind."""
    for found in SYNONYM.finditer(clean):
        a, b = (singular(found.group(g).lower()) for g in ("a", "b"))
        if a != b and a.isalpha() and b.isalpha():
            reading.synonyms.append((a, b, q))


def _defaults(reading: ChunkReading, clean: str, doc, index: int, term_at, label: str, quote):
    """ "defaults to V", "the default is V": an attribute of the concept described (the
    sentence's subject before the cue, else the label above)."""
    found = DEFAULT.search(clean)
    if found is None:
        return
    value = found.group("value").strip("`'\"").rstrip(".")
    literal = SPELLED_OUT.match(clean, found.end())
    if literal and value.lower() in NUMBER_WORDS:
        value = literal.group(1)  # "four megabytes (`4MB`)": 4MB
    if not value or value.lower() in ("the", "a", "an", "to", "is", "that", "this"):
        return
    subject = ""
    for tok in doc:
        if tok.idx >= found.start():
            break
        if tok.dep_ in ("nsubj", "nsubjpass"):
            key, name = term_at(index, tok)
            if key:
                subject = name
    subject = subject or label
    if not subject:
        return
    reading.attributes.append(
        AttributeSeen(
            name_key(subject),
            subject,
            "default_value",
            value,
            _named(quote(index), subject, value=value),
        )
    )
