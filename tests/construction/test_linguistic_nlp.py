"""The English pipeline as the linguistic reader runs it: spaCy's own annotations, faster."""

from __future__ import annotations

from pathlib import Path

import pytest
import spacy

from construction.linguistic.nlp import MODEL_PACKAGE, ParseWhen, pipeline

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def paragraphs() -> list[str]:
    found = []
    for path in sorted((ROOT / "corpus").glob("*.md"))[:12]:
        found += [p for p in path.read_text().split("\n\n") if p.strip()]
    return found


@pytest.fixture(scope="module")
def reference():
    return spacy.load(MODEL_PACKAGE, exclude=["ner", "senter"])


def _annotations(doc) -> list[tuple]:
    return [(t.tag_, t.pos_, t.lemma_, t.dep_, t.head.i, str(t.morph)) for t in doc]


def test_pipeline_gives_spacys_own_tags_lemmas_and_parse(paragraphs, reference):
    """Every token's tag, part of speech, lemma, label, head and features are what spaCy's
    pipeline gives, although the ruler and lemmatiser run as tables and blis is off."""
    ours = pipeline().analyse(paragraphs)
    theirs = list(reference.pipe(paragraphs))
    assert [_annotations(d) for d in ours] == [_annotations(d) for d in theirs]


def test_sentences_parsed_later_are_annotated_as_if_parsed_at_once(paragraphs, reference):
    """Tagging all, then parsing the chosen ones and applying the parse-dependent rules
    again, gives the same annotations as spaCy's single pass."""
    ours = pipeline().analyse(paragraphs, parse_if=lambda columns: True)
    theirs = list(reference.pipe(paragraphs))
    assert [_annotations(d) for d in ours] == [_annotations(d) for d in theirs]


def test_only_the_sentences_chosen_are_parsed():
    """A sentence the predicate turns down keeps its tags and lemmas but no parse."""
    docs = pipeline().analyse(
        ["Indexes speed up queries.", "Vacuum reclaims storage."],
        parse_if=lambda columns: len(columns) == 5,
    )
    assert [d.has_annotation("DEP") for d in docs] == [True, False]
    assert [t.lemma_ for t in docs[1]][1:] == ["reclaim", "storage", "."]


def test_parse_when_wants_a_cue_word_in_its_part_of_speech_and_two_nouns():
    """ "use" as a verb between two nouns is worth parsing; "use" as a noun, or a cue
    with one noun, is not; "is a" is worth it only when definitions are wanted."""
    when = ParseWhen({"use": {"VERB"}}, definitions=False)
    with_definitions = ParseWhen({}, definitions=True)
    docs = pipeline().analyse(
        [
            "The planner uses statistics.",
            "The use of statistics is common.",
            "It uses statistics.",
            "A tablespace is a directory.",
        ],
        parse_if=lambda columns: False,
    )
    from spacy.attrs import LEMMA, LOWER, POS

    columns = [d.to_array([POS, LEMMA, LOWER]) for d in docs]
    assert [when(c) for c in columns] == [True, False, False, False]
    assert [with_definitions(c) for c in columns] == [False, False, False, True]


def test_pipeline_is_loaded_once_per_process():
    """Two calls share one loaded pipeline."""
    assert pipeline() is pipeline()
    assert pipeline().version.startswith(MODEL_PACKAGE)


@pytest.mark.parametrize(
    "text, verb, subject",
    [
        ("Chain-of-thought prompting builds on few-shot prompting.", "builds", "prompting"),
        ("HNSW builds on the idea of a proximity graph: every vector is a node.", "builds", "HNSW"),
    ],
)
def test_a_verb_read_as_a_plural_noun_in_a_verbless_sentence_is_a_verb_again(text, verb, subject):
    """The one place the pipeline parts from spaCy: a sentence of prose whose first clause
    has no verb, because its verb was tagged a plural noun after the subject, gets the verb
    back (tag, part of speech, lemma) and the noun before it as its subject."""
    (doc,) = pipeline().analyse([text])
    (tok,) = [t for t in doc if t.text == verb]
    assert (tok.tag_, tok.pos_, tok.lemma_) == ("VBZ", "VERB", "build")
    assert [t.text for t in doc if t.dep_ == "nsubj" and t.head.i == tok.i] == [subject]


@pytest.mark.parametrize("text", ["Creating Indexes", "Tables and their sizes.", "Data types"])
def test_headings_and_verbless_fragments_keep_their_nouns(text):
    """No full stop, or no noun before and nothing after the plural: left as tagged."""
    (doc,) = pipeline().analyse([text])
    theirs = spacy.load(MODEL_PACKAGE, exclude=["ner", "senter"])(text)
    assert [t.tag_ for t in doc] == [t.tag_ for t in theirs]
