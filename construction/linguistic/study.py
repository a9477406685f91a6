"""Study order: how teaching material says one concept must be learned before another.

"X assumes you know Y", "X requires a working knowledge of Y", "Before studying X, make
sure you are comfortable with Y", "To understand X you need to know Y", "You should
understand Y first": Y is a prerequisite for X, or for the document's topic when X is not
named (``TOPIC``). Read only when the vocabulary has ``prerequisite``; the shared parse
helpers are ``relations``'.
"""

from __future__ import annotations

from collections.abc import Iterator

from .relations import (
    SUBJECTS,
    Found,
    conjoined,
    is_negated,
    object_of_prep,
    prep_objects,
    subjects_of,
)

TOPIC = -1  # a side that is the document's own topic ("make sure you know X first")
KNOWING = frozenset({"understand", "know", "learn", "study", "review", "master", "grasp"})
FAMILIAR = frozenset({"comfortable", "familiar"})
KNOWLEDGE = frozenset({"knowledge", "understanding", "familiarity", "grasp"})
NEEDING = frozenset({"need"})  # "you need Y to follow this lesson"
STUDY_WORDS = KNOWING | FAMILIAR | NEEDING | {"assume"}
# Words that make a sentence worth parsing for study order, in their part of speech.
STUDY_CUES = {
    **{word: {"VERB"} for word in (*KNOWING, *NEEDING, "assume", "require")},
    **{word: {"ADJ"} for word in FAMILIAR},
}
LEARNERS = frozenset({"you", "one", "reader", "readers", "learner", "learners", "we"})
POINTERS = frozenset({"it", "this", "them", "these", "that", "one"})
# Nouns that, after "this", point at the document itself: "before you start this lesson".
DOCUMENTS = frozenset(
    {"lesson", "chapter", "section", "tutorial", "guide", "course", "page", "article", "unit"}
)


def _side(tok) -> int:
    """A token's index, or TOPIC when it only points at the document ("this lesson")."""
    if not hasattr(tok, "lemma_"):  # a slot: the label, or the sentence before
        return tok.i
    if tok.lower_ in POINTERS:
        return TOPIC
    if tok.lemma_.lower() in DOCUMENTS and any(
        c.dep_ == "det" and c.lower_ in ("this", "these", "the") for c in tok.children
    ):
        return TOPIC
    return tok.i


def find_study_order(doc) -> Iterator[Found]:
    """ "X assumes you know Y", "X requires a working knowledge of Y", "Before studying
    X, make sure you are comfortable with Y", "To understand X you need to know Y",
    "You should understand Y first": Y is a prerequisite for X (for the document's
    topic when X is not named)."""
    if doc.text.rstrip().endswith("?"):
        return
    for tok in doc:
        lemma = tok.lemma_.lower()
        if lemma == "assume" and tok.pos_ == "VERB":
            yield from _assumes(tok)
        elif lemma == "require" and tok.pos_ == "VERB":
            for obj in (c for c in tok.children if c.dep_ == "dobj"):
                if obj.lemma_.lower() in KNOWLEDGE:
                    for y in prep_objects(obj, "of"):
                        for x in subjects_of(tok):
                            yield Found("prerequisite", y.i, x.i, tok.i, 0.85)
        elif lemma in KNOWING | NEEDING and tok.pos_ in ("VERB", "AUX"):
            yield from _learn_first(tok, _known_objects(tok))
        elif lemma in FAMILIAR and tok.dep_ == "acomp":
            yield from _learn_first(tok.head, prep_objects(tok, "with"), word=tok)


def _assumes(verb) -> Iterator[Found]:
    subjects = [_side(s) for s in subjects_of(verb) if s.lower_ not in POINTERS | LEARNERS]
    for clause in (c for c in verb.children if c.dep_ in ("ccomp", "xcomp", "parataxis")):
        if clause.lemma_.lower() not in KNOWING and clause.lemma_.lower() != "be":
            continue
        known = _known_objects(clause)
        if clause.lemma_ == "be":
            known = [
                o for c in clause.children if c.lower_ in FAMILIAR for o in prep_objects(c, "with")
            ]
        for y in known:
            for x in subjects:
                yield Found("prerequisite", y.i, x, verb.i, 0.85)


def _known_objects(verb) -> list:
    found = [o for c in verb.children if c.dep_ == "dobj" for o in conjoined(c)]
    for clause in (c for c in verb.children if c.dep_ == "ccomp"):
        if any(w.lower_ in ("how", "what") for w in clause.children):
            found += [s for c in clause.children if c.dep_ in SUBJECTS for s in conjoined(c)]
    return [o for o in found if o.lower_ not in POINTERS and o.pos_ in ("NOUN", "PROPN", "X")]


def _learn_first(verb, known: list, *, word=None) -> Iterator[Found]:
    """What ``known`` must come before: a "before ..." or "to understand ..." phrase
    of the clause, or the topic when it says "first" or points back at it."""
    if not known or is_negated(verb, verb, known) or _conditional_strict(verb):
        return
    subjects = subjects_of(verb)
    if subjects and not all(s.lower_ in LEARNERS for s in subjects):
        return
    later = _later(verb)
    if later is None:
        return
    for y in known:
        for x in later:
            yield Found("prerequisite", y.i, x, (word or verb).i, 0.8)


def _later(verb) -> list[int] | None:
    """The token indices (or TOPIC) that the thing learnt comes before."""
    scope = [verb]
    node = verb
    for _ in range(3):  # "make sure you are comfortable with Y", "you need to know Y"
        if node.dep_ in ("ccomp", "xcomp", "conj") and node.head is not node:
            node = node.head
            scope.append(node)
    for node in scope:
        for child in node.children:
            low = child.lower_
            if low == "before" and child.dep_ in ("prep", "mark", "advmod"):
                target = _before_object(child)
                if target is not None:
                    return target
            purpose = child.dep_ == "advcl" and child.lemma_.lower() in KNOWING | {"follow", "use"}
            if purpose and any(c.lower_ == "to" for c in child.children):
                objects = [o for c in child.children if c.dep_ == "dobj" for o in conjoined(c)]
                if objects:
                    return [_side(o) for o in objects]
            if child.dep_ == "advcl" and any(
                m.dep_ == "mark" and m.lower_ == "before" for m in child.children
            ):  # "... before you start this lesson"
                target = _clause_objects(child)
                if target is not None:
                    return target
            if low == "first" and child.dep_ == "advmod":
                return [TOPIC]
    return None


def _before_object(before) -> list[int] | None:
    pobj = object_of_prep(before)
    if pobj is not None and pobj.pos_ in ("NOUN", "PROPN"):
        return [o.i for o in conjoined(pobj)]
    gerund = next((c for c in before.children if c.dep_ in ("pcomp", "pobj")), None)
    if gerund is None:
        return None
    return _clause_objects(gerund)


def _clause_objects(clause) -> list[int] | None:
    """What "before reading X" or "before you start X" comes before: X (the topic when X
    only points at the document); the topic for "before you go on"."""
    objects = [o for c in clause.children if c.dep_ == "dobj" for o in conjoined(c)]
    if not objects:
        return [TOPIC] if clause.lemma_.lower() in ("go", "move", "continue", "start") else None
    return list(dict.fromkeys(_side(o) for o in objects))


def _conditional_strict(tok) -> bool:
    """Only if- and whether-clauses: "before ..." is what a study cue is made of."""
    node = tok
    for _ in range(12):
        if any(c.dep_ == "mark" and c.lower_ in ("if", "unless", "whether") for c in node.children):
            return True
        if node.head is node:
            return False
        node = node.head
    return False
