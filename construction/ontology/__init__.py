"""Ontology bootstrap and discovery of additions: concept types (with a hierarchy),
relation patterns, new relation types and attributes drafted from a corpus's chunks,
each with its own quotes and support. Pure: no Django, nothing applied here.

``reading`` reads one chunk with the linguistic pipeline (definition patterns, heading
context, terms with their head noun, cue verbs between terms) and ``offline`` gathers
the readings of a corpus into a draft (clusters of terms by head noun, patterns between
typed terms); ``model`` asks
an OpenAI-compatible model (a per-document summary, a per-chunk proposal validated and
retried, one normalisation pass); ``draft`` folds, counts and leaves out what the
ontology already has; ``typing`` gives a term the type that fits it, for the readers.
"""

from .draft import additions, fold_drafts
from .offline import bootstrap_offline
from .reading import read_chunk
from .types import (
    AttributeDraft,
    DocChunk,
    KnownOntology,
    KnownType,
    OntologyDraft,
    PatternDraft,
    Quote,
    RelationTypeDraft,
    TypeDraft,
)
from .typing import type_for_term

__all__ = [
    "AttributeDraft",
    "DocChunk",
    "KnownOntology",
    "KnownType",
    "OntologyDraft",
    "PatternDraft",
    "Quote",
    "RelationTypeDraft",
    "TypeDraft",
    "additions",
    "bootstrap_offline",
    "fold_drafts",
    "read_chunk",
    "type_for_term",
]
