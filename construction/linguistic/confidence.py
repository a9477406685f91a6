"""How sure the offline reader is of an edge: a logistic model of what reviewers judged.

The signs are what the reader knows when it drafts an edge: how directly the cue states
the relation (its strength), how term-like the weaker and the stronger side are, whether
a side was not named in the sentence but stood for by the entry's label, or only pointed
at (a pronoun, "this", the document's topic), and
whether the sentence is long (the parse of a long sentence is less sure). The weights are
fitted by ``evaluation/tools/calibrate.py`` on hand-labelled proposals of the tuning
material (the curriculum lessons in ``corpus/`` against their gold, and the labelled
samples of the tuning manuals in ``evaluation/manuals``; never the held-out ones), so
that a proposal's confidence reads as the share of such proposals reviewers found right.
"""

from __future__ import annotations

import math

SIGNS = ("cue", "weaker_side", "stronger_side", "label", "pointer", "long_sentence")
LONG_SENTENCE = 35  # tokens

# Fitted weights: the intercept, then one per sign, in the order of ``SIGNS``.
WEIGHTS = (-1.86, 1.06, 0.91, 0.91, 0.17, -1.02, -0.79)


def signs(
    *, cue: float, sides: tuple[float, float], label: bool, pointer: bool, tokens: int
) -> tuple[float, ...]:
    """The signs of one drafted edge, in the order of ``SIGNS``: ``label`` when a side is
    the entry's label the sentence leaves unnamed ("Creates ..." under a signature),
    ``pointer`` when a side is only pointed at ("it", "this", the document's topic)."""
    low, high = min(sides), max(sides)
    return (cue, low, high, float(label), float(pointer), float(tokens > LONG_SENTENCE))


def edge_confidence(values: tuple[float, ...], weights: tuple[float, ...] = WEIGHTS) -> float:
    """The probability that an edge with these signs is right."""
    z = weights[0] + sum(w * v for w, v in zip(weights[1:], values, strict=True))
    return round(1.0 / (1.0 + math.exp(-z)), 3)
