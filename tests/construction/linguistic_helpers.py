"""What the linguistic reader's tests share: the two starting vocabularies, a lexicon of
known names, and reading one chunk."""

from __future__ import annotations

from construction.linguistic import LinguisticExtractor
from construction.linguistic.markup import read_sentences
from construction.linguistic.nlp import pipeline
from construction.linguistic.terms import TermTable
from construction.types import IndexEntry, RelationSpec, SourceDoc


def spec(key, verb, symmetric=False, acyclic=False):
    return RelationSpec(key, key, verb, "", symmetric, acyclic)


CURRICULUM = [
    spec("prerequisite", "is a prerequisite for", acyclic=True),
    spec("builds_on", "builds on", acyclic=True),
    spec("part_of", "is part of", acyclic=True),
    spec("contrasts_with", "contrasts with", symmetric=True),
    spec("applies_to", "applies to"),
    spec("related", "is related to", symmetric=True),
]
DOCUMENTATION = [
    spec("is_a", "is a kind of", acyclic=True),
    spec("part_of", "is part of", acyclic=True),
    spec("requires", "requires"),
    spec("uses", "uses"),
    spec("produces", "produces"),
    spec("configures", "configures"),
    spec("alternative_to", "is an alternative to", symmetric=True),
    spec("contrasts_with", "contrasts with", symmetric=True),
    spec("related", "is related to", symmetric=True),
]


class Known:
    """A lexicon of names the graph already has."""

    max_words = 6

    def __init__(self, *names: str, drafted: bool = False) -> None:
        from construction.text import name_key

        self.names = {name_key(n): n for n in names}
        self.drafted = drafted  # only drafted in this run, no concept yet

    def lookup(self, key):
        name = self.names.get(key)
        if not name:
            return None
        concept = None if self.drafted else 1
        return IndexEntry(name=name, canonical=name, key=f"c:{key}", concept_id=concept)


def read(text, vocabulary=DOCUMENTATION, *, known=(), drafted=False, title="Manual", max_edges=20):
    """Read one chunk; ``known`` names are concepts of the graph, or only drafted ones."""
    doc = SourceDoc(slug="manual", revision_id=1, revision_number=1, title=title, text=text)
    return LinguisticExtractor().extract(
        doc, vocabulary=vocabulary, lexicon=Known(*known, drafted=drafted), max_edges=max_edges
    )


def edges(text, vocabulary=DOCUMENTATION, **kwargs):
    return {(c.source, c.relation, c.target) for c in read(text, vocabulary, **kwargs).candidates}


def terms_of(text):
    sentences = read_sentences(text)
    docs = pipeline().analyse([s.clean for s in sentences])
    table = TermTable()
    for index, (sentence, doc) in enumerate(zip(sentences, docs, strict=True)):
        table.read(index, doc, sentence)
    table.collapse_generic_tails()
    table.score()
    return {c.name: c.score for c in table.candidates.values()}
