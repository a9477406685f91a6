"""The linguistic offline reader: terms and the relations the sentences state between them.

For one chunk:

1. Its prose is cut into sentences and cleaned of markup (``markup``), keeping where
   each word was and which words were code, strong, emphasised or a heading.
2. Every sentence is tagged and lemmatised (``nlp``); those holding a cue word of the
   vocabulary and two nouns are also parsed.
3. Term candidates are collected from every sentence and scored for termhood over the
   whole chunk (``terms``).
4. Each parsed sentence's cues give relations between the heads of their subject and
   object (``relations``); a side that is not a term drops the relation.
5. The best ``max_edges`` distinct edges are kept, each quoting its sentence verbatim,
   with a confidence from the cue, the two terms' scores and any hedge (``confidence``).

Deterministic: the same chunk, vocabulary and known names give the same answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..protocols import Lexicon
from ..text import name_key
from ..types import Candidate, ConceptMention, Extraction, LLMUsage, RelationSpec, SourceDoc
from .confidence import edge_confidence, signs
from .cues import BUILT_IN, Cue, cue_table, cue_words
from .markup import Sentence, read_sentences
from .nlp import MODEL_PACKAGE, MODEL_VERSION, ParseWhen, pipeline
from .relations import LABEL, PREVIOUS, Found, find_relations
from .study import STUDY_WORDS, TOPIC, find_study_order
from .terms import TERM_SCORE, TermTable
from .terms import Candidate as Term
from .words import GENERIC_WORDS

READER_VERSION = "ling-1"


@dataclass(frozen=True)
class Drafted:
    """A relation between two terms, ready to rank."""

    relation: str
    source: Term
    target: Term
    confidence: float
    sentence: int
    cue: str
    signs: tuple[float, ...] = ()  # what the confidence was computed from
    # The sentence or label the quote starts at: one before ``sentence`` when a side the
    # sentence does not name ("Creates ...", "This parameter ...") was named there.
    first: int = -1


class LinguisticExtractor:
    """READ with an NLP pipeline: deterministic, offline, no network."""

    name = "offline"
    model = f"{READER_VERSION}+{MODEL_PACKAGE}-{MODEL_VERSION}"
    local = True

    def __init__(self, concept_types: Sequence = ()) -> None:
        self._derived: dict[tuple, list[Cue]] = {}
        self._when: tuple[tuple, ParseWhen] | None = None
        # The graph's concept types (``ontology.KnownType``): a new concept is typed.
        self.concept_types: tuple = tuple(concept_types)
        self._types: tuple[tuple, Any] | None = None

    def extract(
        self,
        doc: SourceDoc,
        *,
        vocabulary: Sequence[RelationSpec],
        lexicon: Lexicon,
        max_edges: int,
    ) -> Extraction:
        sentences = read_sentences(doc.text)
        table = cue_table(vocabulary, self._derive)
        keys = {s.key for s in vocabulary}
        when = self._parse_when(table, keys)
        nlp = pipeline()
        docs = nlp.analyse([s.clean for s in sentences], parse_if=when)
        terms = TermTable(lexicon)
        for index, (sentence, parsed) in enumerate(zip(sentences, docs, strict=True)):
            terms.read(index, parsed, sentence)
        terms.score()
        terms.collapse_generic_tails()
        _mark_definitions(terms, docs)
        terms.score()
        topic = _topic(terms, doc)
        places = _places(terms, sentences, docs)
        drafted = []
        for index, parsed in enumerate(docs):
            if sentences[index].heading or not parsed.has_annotation("DEP"):
                continue
            found = list(
                find_relations(
                    parsed, table, contrast="contrasts_with" in keys, is_a="is_a" in keys
                )
            )
            if "prerequisite" in keys:
                found += find_study_order(parsed)
            for item in found:
                draft = _draft(terms, index, parsed, item, {TOPIC: (topic, index), **places[index]})
                if draft is not None:
                    drafted.append(draft)
        candidates, used = _select(doc, sentences, drafted, vocabulary, max_edges)
        concepts = tuple(
            ConceptMention(
                name=t.name,
                description=_description(doc, sentences, docs, t),
                verbatim=t.identifier,
                type_key=self._type_of(t, doc, sentences, docs),
            )
            for t in used
        )
        return Extraction(
            concepts=concepts,
            candidates=candidates,
            usage=LLMUsage(),
            extractor=self.name,
            model=self.model,
        )

    def _type_of(self, term: Term, doc: SourceDoc, sentences: list[Sentence], docs) -> str:
        """The graph's concept type that fits ``term`` (``ontology.typing``): from a
        definition "X is a Y", the noun after it, its head noun, the heading above it."""
        if not self.concept_types:
            return ""
        from ..ontology.typing import TypeIndex, type_for_term

        if self._types is None or self._types[0] != self.concept_types:
            self._types = (self.concept_types, TypeIndex(self.concept_types))
        defined_as = classifier = ""
        for m in term.mentions:
            parsed = docs[m.sentence]
            tok = parsed[m.last]
            after = parsed[m.last + 1] if m.last + 1 < len(parsed) else None
            if not classifier and after is not None and after.pos_ == "NOUN":
                classifier = after.lemma_
            if defined_as or not parsed.has_annotation("DEP"):
                continue
            if tok.dep_ == "nsubj" and tok.head.lemma_ == "be":
                attr = next((c for c in tok.head.children if c.dep_ == "attr"), None)
                if attr is not None and attr.pos_ in ("NOUN", "PROPN"):
                    words = [w.text for w in attr.lefts if w.dep_ == "compound"]
                    defined_as = " ".join([*words, attr.text])
        first = min((m.sentence for m in term.mentions), default=0)
        headings = [s.clean for s in sentences[: first + 1] if s.heading]
        return type_for_term(
            term.name,
            self._types[1],
            defined_as=defined_as,
            classifier=classifier,
            section=(*doc.section, *headings[-1:]),
        )

    def _parse_when(self, table: dict[str, list[Cue]], keys: set[str]) -> ParseWhen:
        """Which sentences to parse for this vocabulary (kept per vocabulary)."""
        signature = (tuple(sorted(keys)), tuple(sorted(table)))
        if self._when is None or self._when[0] != signature:
            alone = STUDY_WORDS if "prerequisite" in keys else frozenset()
            self._when = (
                signature,
                ParseWhen(cue_words(table, keys), definitions="is_a" in keys, alone=alone),
            )
        return self._when[1]

    def _derive(self, spec: RelationSpec) -> list[Cue]:
        key = (spec.key, spec.verb)
        if key not in self._derived:
            from .verbs import cue_from_verb

            self._derived[key] = cue_from_verb(spec)
        return self._derived[key]


def _mark_definitions(terms: TermTable, docs) -> None:
    """A term that is the subject of "is a ..." in its own sentence is being defined."""
    for (index, head), found in terms.heads.items():
        tok = docs[index][head]
        if _defines(tok):
            for cand in found:
                cand.defined = True


def _topic(terms: TermTable, doc: SourceDoc) -> Term | None:
    """The term the document is about: its title's, else its first heading's."""
    for title in (doc.title, *doc.section[:1]):
        cand = terms.candidates.get(name_key(title))
        if cand is not None and cand.score >= TERM_SCORE:
            return cand
    for cand in terms.candidates.values():
        if any("heading" in m.kinds for m in cand.mentions) and cand.score >= TERM_SCORE:
            return cand
    return None


Place = tuple["Term | None", int]  # a term, and the sentence (or label) that names it


def _places(terms: TermTable, sentences: list[Sentence], docs) -> list[dict[int, Place]]:
    """For each sentence, the terms its unnamed sides stand for, each with where it is
    named: the label or heading right above its paragraph (``LABEL``), and what the
    sentence before it in the same paragraph was about (``PREVIOUS``; for a paragraph's
    first sentence, the label)."""
    out: list[dict[int, Place]] = []
    label: tuple[int, Term | None, int] | None = None  # (block, term, sentence)
    for index, sentence in enumerate(sentences):
        if sentence.heading or sentence.label:
            label = (sentence.block, _label_term(terms, index, sentence), index)
            out.append({})
            continue
        above: Place = (None, index)
        if label is not None and label[0] == sentence.block - 1:
            above = (label[1], label[2])
        previous = above
        if index and sentences[index - 1].block == sentence.block:
            previous = (_subject_term(terms, index - 1, docs[index - 1]), index - 1)
        out.append({LABEL: above, PREVIOUS: previous})
    return out


# A reference entry's label: a signature ("*class* poplib.POP3_SSL(host, port=...)",
# "tempfile.mkstemp(suffix=None)") or a command-line option ("--source-pgdata=directory").
SIGNATURE = re.compile(
    r"^(?P<kind>(?:(?:abstract|async|class|exception|classmethod|staticmethod|method"
    r"|function|attribute|data|property|coroutine|awaitable)\s+)*)"
    r"(?P<name>[A-Za-z_][\w.]*\w)\s*(?P<call>\()?"
)
# A field line ("Source code: Lib/tempfile.py", "Module: email.mime"): says where the
# entry lives, names no subject for the sentences under it.
FIELD = re.compile(r"^[A-Z][\w ]{0,30}:\s+\S")
OPTION = re.compile(r"^(?P<name>--?[A-Za-z][\w-]*)(?:[= \[].*)?$")


def _label_term(terms: TermTable, index: int, sentence: Sentence) -> Term | None:
    """What a label or heading names: the callable of a signature, the option of an
    option's line, else its best term (an identifier first)."""
    text = sentence.clean.strip()
    if sentence.label and FIELD.match(text):
        return None
    signature = SIGNATURE.match(text) or OPTION.match(text)
    if (
        signature is not None
        and not (signature.groupdict().get("kind") or "")
        and not (signature.groupdict().get("call") or signature.re is OPTION)
    ):
        signature = None  # a plain word or name: the terms below choose
    if sentence.label and signature is not None:
        name = signature["name"]
        kind = signature.groupdict().get("kind") or ""
        if signature.groupdict().get("call") and not {"class", "exception"} & set(kind.split()):
            name += "()"
        return terms.named(name, index)
    found = [c for (i, _), cands in terms.heads.items() if i == index for c in cands]
    found = [c for c in found if c.score >= TERM_SCORE]
    if not found:
        return None
    coded = [c for c in found if c.identifier]
    return (coded or found)[0] if coded else max(found, key=lambda c: c.score)


def _subject_term(terms: TermTable, index: int, doc) -> Term | None:
    if not doc.has_annotation("DEP"):
        return None
    for tok in doc:
        if tok.dep_ in ("nsubj", "nsubjpass"):
            cand = terms.at(index, tok.i)
            if cand is not None and cand.score >= TERM_SCORE:
                return cand
    return None


def _draft(
    terms: TermTable, index: int, doc, found: Found, places: dict[int, Place]
) -> Drafted | None:
    first = index
    sides = []
    topic = places.get(TOPIC, (None, index))[0]
    pointer = False
    for side in (found.source, found.target):
        if side >= 0:
            said = terms.at(index, side)
            meant = _or_topic(said, doc[side], topic)
            pointer = pointer or meant is not said
            sides.append(meant)
            continue
        pointer = pointer or side != LABEL
        term, named = places.get(side, (None, index))
        sides.append(term)
        first = min(first, named)
    source, target = sides
    if source is None or target is None or source is target:
        return None
    if source.score < TERM_SCORE or target.score < TERM_SCORE:
        return None
    for side, term in ((found.source, source), (found.target, target)):
        if side >= 0 and _particular(doc, term, index, side):
            return None
    values = signs(
        cue=found.confidence,
        sides=(source.score, target.score),
        label=LABEL in (found.source, found.target),
        pointer=pointer,
        tokens=len(doc),
    )
    return Drafted(
        found.relation,
        source,
        target,
        edge_confidence(values),
        index,
        doc[found.cue].text,
        values,
        first,
    )


def _select(
    doc: SourceDoc,
    sentences: list[Sentence],
    drafted: list[Drafted],
    vocabulary: Sequence[RelationSpec],
    max_edges: int,
) -> tuple[tuple[Candidate, ...], list[Term]]:
    """Best first, one candidate per edge, at most ``max_edges``; and the terms used."""
    symmetric = {s.key for s in vocabulary if s.symmetric}  # cues come from it alone
    seen: set[tuple[str, str, str]] = set()
    out: list[Candidate] = []
    used: list[Term] = []
    for item in sorted(drafted, key=lambda d: (-d.confidence, d.sentence)):
        if len(out) >= max(0, max_edges):
            break
        a, b = item.source.key, item.target.key
        key = (
            (min(a, b), item.relation, max(a, b))
            if item.relation in symmetric
            else (a, item.relation, b)
        )
        if a == b or key in seen:
            continue
        seen.add(key)
        sentence = sentences[item.sentence]
        # The quote names both sides: from the label or sentence naming a side the
        # sentence leaves unnamed ("Creates ..." under its entry's label).
        start = sentences[item.first].start if 0 <= item.first < item.sentence else sentence.start
        quote = doc.text[start : sentence.end]
        out.append(
            Candidate(
                source=item.source.name,
                target=item.target.name,
                relation=item.relation,
                confidence=item.confidence,
                reason=_reason(sentence, item),
                evidence=quote,
            )
        )
        used.extend(t for t in (item.source, item.target) if t not in used)
    return tuple(out), used


def _or_topic(term: Term | None, tok, topic: Term | None) -> Term | None:
    """A bare noun that is the head of the document's topic stands for the topic when it
    is no term of its own: "An agent is made up of ..." in a lesson on AI agents."""
    if term is not None and term.score >= TERM_SCORE:
        return term
    if topic is None or topic.words < 2 or tok.pos_ != "NOUN":
        return term
    if name_key(tok.lemma_) != name_key(topic.head_word) or any(
        c.dep_ in ("compound", "amod", "nummod", "poss") for c in tok.children
    ):
        return term
    return topic


# Words that make a plain noun point at one particular thing of the text.
POINTING = frozenset({"the", "this", "that", "these", "those", "such"})


def _particular(doc, term: Term, index: int, head: int) -> bool:
    """Whether one plain everyday word stands here for a particular thing rather than
    the concept: "the generator produces 5-tuples" speaks of one generator (the one the
    page describes), "the query can depend on ..." of the example's query. Code,
    capitals and emphasis make it a name; several words make it specific enough. A word
    of everyday documentation ("function", "file") is a name only where it is code, even
    when the chunk writes it in code elsewhere (the keyword `FUNCTION`)."""
    if term.words != 1 or term.known:
        return False
    mention = next((m for m in term.mentions if m.sentence == index and m.last == head), None)
    if mention is None:
        return False
    written = doc[mention.first : mention.last + 1].text
    if term.key in GENERIC_WORDS and "code" not in mention.kinds and not written.isupper():
        return True  # "a function associated with ...": the word, though `FUNCTION` is code
    if term.identifier or mention.kinds or mention.capital or term.name.isupper():
        return False
    return mention.first > 0 and doc[mention.first - 1].lower_ in POINTING


def _reason(sentence: Sentence, item: Drafted) -> str:
    cue = " ".join(item.cue.split())
    return (
        f'The sentence links "{item.source.name}" and "{item.target.name}" by '
        f'"{cue}" ({_why(item)}).'
    )


def _why(item: Drafted) -> str:
    if item.relation in BUILT_IN:
        return f"a cue of {item.relation}"
    return f"the verb of {item.relation}"


def _defines(tok) -> bool:
    """Whether the token is the subject of "is a ..." (its sentence defines it)."""
    return (
        tok.dep_ == "nsubj"
        and tok.head.lemma_ == "be"
        and any(c.dep_ == "attr" for c in tok.head.children)
    )


def _description(doc: SourceDoc, sentences: list[Sentence], docs, term: Term) -> str:
    """The first sentence defining the term ("X is a ..."), if the chunk has one."""
    for mention in term.mentions:
        tok = docs[mention.sentence][mention.last]
        s = sentences[mention.sentence]
        if not s.heading and _defines(tok):
            return " ".join(doc.text[s.start : s.end].split())[:200]
    return ""
