"""How sure the offline reader is of an edge, calibrated on labelled material.

The cue says how directly the sentence states the relation; the two sides' termhood
says whether they name things a reviewer would keep. The combination is a logistic
function whose weights were fitted on hand-labelled proposals (the curriculum's gold
edges and the manuals' labelled samples in ``evaluation/``), so that a proposal at
confidence c is right about c of the time; ``evaluation/tools/calibrate.py`` refits them.
"""

from __future__ import annotations

import math

# Fitted weights (intercept, cue, weaker side's termhood, stronger side's termhood).
WEIGHTS = (-3.2, 3.4, 2.2, 0.6)


def edge_confidence(cue: float, a: float, b: float) -> float:
    """The probability that an edge with this cue strength and these two sides is right."""
    low, high = min(a, b), max(a, b)
    w0, w_cue, w_low, w_high = WEIGHTS
    z = w0 + w_cue * cue + w_low * low + w_high * high
    return round(1.0 / (1.0 + math.exp(-z)), 3)
