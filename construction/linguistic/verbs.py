"""The cue a curator's relation is read by: its own verb, parsed.

A relation type says how "source <verb> target" reads ("replaces", "is caused by",
"is a prerequisite for", "is similar to"). Parsed in the sentence "Alpha <verb> beta",
its predicate is a verb (active or passive, with or without a preposition before the
object), or a noun or adjective after "be"; that shape is the cue. A passive with "by"
("is caused by") reads the other way round: "B is caused by A" states the relation from
B to A, so the active form "A causes B" is its inverse.
"""

from __future__ import annotations

from ..types import RelationSpec
from .cues import Cue
from .nlp import pipeline

DERIVED_CONFIDENCE = 0.7


def cue_from_verb(spec: RelationSpec) -> list[Cue]:
    """The cues of a relation known only by its verb; none when the verb has no shape
    the parser can read."""
    verb = " ".join(spec.verb.split())
    if not verb:
        return []
    doc = pipeline().analyse([f"Alpha {verb} beta."])[0]
    subject = doc[0]
    root = subject.head
    if root.i == subject.i:
        return []
    prep = next((c for c in root.children if c.dep_ in ("prep", "agent")), None)
    passive = any(c.dep_ in ("auxpass", "nsubjpass") for c in root.children)
    if root.lemma_ == "be":
        word = next((c for c in root.children if c.dep_ in ("attr", "acomp")), None)
        if word is None:
            return []
        inner = next((c for c in word.children if c.dep_ == "prep"), None)
        kind = "noun" if word.pos_ in ("NOUN", "PROPN") else "adj"
        return [
            Cue(
                spec.key,
                word.lemma_.lower(),
                kind,
                inner.lower_ if inner is not None else None,
                confidence=DERIVED_CONFIDENCE,
            )
        ]
    lemma = root.lemma_.lower()
    if passive and prep is not None and prep.lower_ == "by":
        # "is caused by": in "B is caused by A" and in "A causes B", the relation runs
        # from B to A, against the verb's own direction.
        return [Cue(spec.key, lemma, "verb", None, True, None, DERIVED_CONFIDENCE)]
    return [
        Cue(
            spec.key,
            lemma,
            "adj" if passive else "verb",
            prep.lower_ if prep is not None else None,
            False,
            None,
            DERIVED_CONFIDENCE,
        )
    ]
