"""Cues: the words that state each relation of a vocabulary, and the words that make a
sentence worth parsing.

A cue is a predicate of the vocabulary's words: a verb ("requires", "consists of", "is
built on"), a noun after "be" ("is part of", "is a prerequisite for", "is a kind of") or
an adjective after "be" ("is related to", "is based on"). Each relation key of the two
starting vocabularies has its cues here (``BUILT_IN``); a relation a curator added is
read by the cue its own verb makes (``verbs.cue_from_verb``). How a cue's two sides are
read off the parse is ``relations``'.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..types import RelationSpec


@dataclass(frozen=True)
class Cue:
    """A predicate that states a relation between its subject and its object.

    ``kind``: "verb" (the lemma is the verb), "noun" (a noun after "be": "is part of"),
    "adj" (an adjective or participle after "be": "is related to"). ``prep``: the
    preposition that introduces the object, if any. ``inverse``: the subject is the
    relation's target ("Y contains X" states "X is part of Y"). ``passive``: the verb
    form only counts in the passive ("is based on").
    """

    relation: str
    lemma: str
    kind: str
    prep: str | None = None
    inverse: bool = False
    passive: bool | None = None  # None: either voice
    confidence: float = 0.75


def _cues(relation: str, *specs: tuple) -> list[Cue]:
    return [Cue(relation, *spec) for spec in specs]


# Built-in cues per relation key; the keys are those of the two starting vocabularies
# (curriculum, documentation). A vocabulary relation not listed is read by its verb.
BUILT_IN: dict[str, list[Cue]] = {
    "prerequisite": _cues(
        "prerequisite",
        ("prerequisite", "noun", "for", False, None, 0.9),
        ("prerequisite", "noun", "to", False, None, 0.85),
    ),
    "builds_on": _cues(
        "builds_on",
        ("build", "verb", "on", False, None, 0.85),
        ("build", "verb", "upon", False, None, 0.85),
        ("extend", "verb", None, False, False, 0.8),
        ("refinement", "noun", "of", False, None, 0.8),
        ("extension", "noun", "of", False, None, 0.8),
        ("generalization", "noun", "of", False, None, 0.75),
        ("base", "adj", "on", False, True, 0.8),
        ("base", "verb", "on", False, True, 0.8),
    ),
    "part_of": _cues(
        "part_of",
        ("part", "noun", "of", False, None, 0.85),
        ("component", "noun", "of", False, None, 0.85),
        ("member", "noun", "of", False, None, 0.75),
        ("stage", "noun", "of", False, None, 0.75),
        ("phase", "noun", "of", False, None, 0.75),
        ("belong", "verb", "to", False, None, 0.75),
        ("consist", "verb", "of", True, None, 0.85),
        ("comprise", "verb", None, True, False, 0.8),
        ("contain", "verb", None, True, False, 0.7),
        ("include", "verb", None, True, False, 0.7),
        ("compose", "verb", "of", True, True, 0.8),
        ("make", "verb", "of", True, True, 0.7),
    ),
    "is_a": _cues(
        "is_a",
        ("kind", "noun", "of", False, None, 0.85),
        ("type", "noun", "of", False, None, 0.85),
        ("form", "noun", "of", False, None, 0.75),
        ("variant", "noun", "of", False, None, 0.8),
        ("subclass", "noun", "of", False, None, 0.85),
        ("special case", "noun", "of", False, None, 0.8),
    ),
    "requires": _cues(
        "requires",
        ("require", "verb", None, False, None, 0.8),
        ("need", "verb", None, False, False, 0.7),
        ("depend", "verb", "on", False, None, 0.75),
        ("rely", "verb", "on", False, None, 0.7),
    ),
    "uses": _cues(
        "uses",
        ("use", "verb", None, False, False, 0.7),
        ("utilize", "verb", None, False, False, 0.7),
        ("employ", "verb", None, False, False, 0.7),
        ("invoke", "verb", None, False, False, 0.65),
    ),
    "produces": _cues(
        "produces",
        ("produce", "verb", None, False, None, 0.75),
        ("generate", "verb", None, False, None, 0.75),
        ("create", "verb", None, False, None, 0.7),
        ("emit", "verb", None, False, None, 0.7),
        ("output", "verb", None, False, None, 0.7),
    ),
    "configures": _cues(
        "configures",
        ("control", "verb", None, False, None, 0.7),
        ("configure", "verb", None, False, None, 0.75),
        ("determine", "verb", None, False, None, 0.65),
        ("govern", "verb", None, False, None, 0.7),
    ),
    "alternative_to": _cues(
        "alternative_to",
        ("alternative", "noun", "to", False, None, 0.85),
        ("substitute", "noun", "for", False, None, 0.75),
        ("alias", "noun", "for", False, None, 0.75),
        ("alias", "noun", "to", False, None, 0.75),
        ("alias", "noun", "of", False, None, 0.75),
        ("synonym", "noun", "for", False, None, 0.75),
        ("synonym", "noun", "of", False, None, 0.75),
    ),
    "contrasts_with": _cues(
        "contrasts_with",
        ("contrast", "verb", "with", False, None, 0.8),
        ("differ", "verb", "from", False, None, 0.75),
        ("different", "adj", "from", False, None, 0.7),
    ),
    "applies_to": _cues(
        "applies_to",
        ("apply", "verb", "to", False, None, 0.8),
        ("use", "verb", "for", False, True, 0.75),
        ("use", "verb", "in", False, True, 0.6),
        ("useful", "adj", "for", False, None, 0.7),
        ("help", "verb", "with", False, False, 0.6),
    ),
    "related": _cues(
        "related",
        ("relate", "adj", "to", False, None, 0.75),
        ("related", "adj", "to", False, None, 0.75),
        ("associate", "adj", "with", False, None, 0.7),
        ("associated", "adj", "with", False, None, 0.7),
        ("connect", "adj", "to", False, None, 0.7),
        ("connected", "adj", "to", False, None, 0.7),
    ),
}
# Words that set two terms against each other (read by ``relations``' own code).
CONTRAST_WORDS = {
    "unlike": {"ADP", "SCONJ"},
    "contrast": {"NOUN"},
    "compare": {"VERB"},
    "compared": {"VERB"},
    "whereas": {"SCONJ"},
}


def cue_table(vocabulary: Sequence[RelationSpec], derive) -> dict[str, list[Cue]]:
    """Cues by predicate lemma for the relations of this vocabulary.

    ``derive(spec)`` gives the cues a relation without built-in ones is read by.
    """
    table: dict[str, list[Cue]] = {}
    keys = {spec.key for spec in vocabulary}
    for spec in vocabulary:
        cues = BUILT_IN.get(spec.key)
        if cues is None:
            cues = derive(spec)
        if spec.key == "prerequisite" and "requires" not in keys:
            cues = [*cues, *NEEDS_AS_PREREQUISITE]
        for cue in cues:
            table.setdefault(cue.lemma.split()[-1], []).append(cue)
    return table


# With a teaching vocabulary and no relation for needs, "X requires Y" and "X depends on
# Y" are read as Y coming first, but weakly: in a manual they mean a privilege, a
# setting or a lock, not something to learn (the confidence puts them below the gate).
NEEDS_AS_PREREQUISITE = [
    Cue("prerequisite", "require", "verb", None, True, False, 0.3),
    Cue("prerequisite", "depend", "verb", "on", True, None, 0.3),
]


# The parts of speech a cue word is a cue in, by the kind of cue.
CUE_POS = {"verb": {"VERB", "AUX"}, "noun": {"NOUN", "PROPN"}, "adj": {"ADJ", "VERB"}}


def cue_words(table: dict[str, list[Cue]], keys: set[str]) -> dict[str, set[str]]:
    """The words whose presence, in the right part of speech, makes a sentence worth
    parsing for this vocabulary."""
    found: dict[str, set[str]] = {}
    for word, cues in table.items():
        for cue in cues:
            found.setdefault(word, set()).update(CUE_POS[cue.kind])
    if "contrasts_with" in keys:
        for word, tags in CONTRAST_WORDS.items():
            found.setdefault(word, set()).update(tags)
    if "prerequisite" in keys:
        from .study import STUDY_CUES

        for word, tags in STUDY_CUES.items():
            found.setdefault(word, set()).update(tags)
    return found
