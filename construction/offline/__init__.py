"""READ without a model: cue phrases over the text, deterministic and offline.

How a lesson becomes candidate edges:

1. Concepts the text defines are collected first: "Long Name (ABBR)" pairs (the
   abbreviation becomes an alias), **bold** terms, and the title and headings (compound
   ones split, generic section names skipped). The lesson's topic is the bold term the
   title names, else the title; "this lesson" and "... first" point at it.
2. Each sentence is tokenised and scanned for names by n-gram lookup (local terms, then
   the lexicon; longest match wins). The lexicon is only ever asked about n-grams.
3. Cue phrases ("is a prerequisite for", "unlike", "consists of", a relation's own verb)
   are found per sentence; each fills its two sides with the nearest concept, looking past
   asides, relative clauses, "the idea of", generic heads ("RAG pipelines") and
   coordination ("A, B and C"). When no known concept is there, a run of content words is
   guessed as a new name, at a lower confidence.
4. Negated cues are dropped, hedged ones weakened; the best ``max_edges`` distinct edges
   are kept, each quoting its sentence verbatim.

There is no part-of-speech tagger: word lists and small structural rules stand in for
one, so every rule is a guess that errs towards proposing nothing. Everything is a pure
function of the input (one ``Reader`` per call holds the per-document state).

The package in reading order: ``lexicon`` (word lists) and ``cues`` (phrasings); ``tokens``
(a sentence as tokens, word-shape rules); and the reader in three layers, each a class over
the one before: ``names`` (steps 1 and 2), ``arguments`` (filling a cue's sides) and
``reader`` (steps 3 and 4, and ``OfflineExtractor``).
"""

from .reader import OfflineExtractor

__all__ = ["OfflineExtractor"]
