"""READ with a linguistic pipeline: the default offline reader.

Terms are noun phrases and identifiers scored for termhood; relations come from the
dependency parse between two terms and a cue of the vocabulary. The parts, in reading
order: ``markup`` (a chunk's prose as clean sentences with marks), ``nlp`` (spaCy's
small English pipeline, loaded once), ``terms``, ``relations`` (and ``verbs`` for a
curator's own relations), ``confidence`` and ``reader`` (``LinguisticExtractor``).
"""

from .reader import LinguisticExtractor

__all__ = ["LinguisticExtractor"]
