"""The pieces every proposal kind's payload schema is built of, validated with pydantic.

A proposal's payload is JSON in the database; each kind (``review.kinds``) declares a
model of what it must carry, built of these, so a malformed agent answer is refused
with words instead of stored.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from construction.text import normal_name
from kgreview.core.forms import BIGGEST_INT


def _normal_name(value):
    return normal_name(value) if isinstance(value, str) else value


# The longest a concept's name and its description may be (the edit forms say the same).
NAME_MAX = 200
DESCRIPTION_MAX = 5000
# A concept's name as the graph stores it (``construction.text.normal_name``): an agent's
# or a reviewer's "\u200bEmbeddings" is "Embeddings" before it is keyed or compared.
Name = Annotated[str, Field(min_length=1, max_length=NAME_MAX), BeforeValidator(_normal_name)]
Score = Annotated[float, Field(ge=0.0, le=100.0, allow_inf_nan=False)]
RowId = Annotated[int, Field(ge=1, le=BIGGEST_INT)]
Offset = Annotated[int, Field(ge=0, le=BIGGEST_INT)]
# An edge's weight: finite, never negative, and bounded (a weight is a relative strength,
# 1 by default; a thousand times that is already more than any lesson means).
WEIGHT_MAX = 1000.0
Weight = Annotated[float, Field(ge=0.0, le=WEIGHT_MAX, allow_inf_nan=False)]
Confidence = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
RelationKey = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")]


class Strict(BaseModel):
    """A payload part: unknown fields refused, text stripped."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class QuoteIsEvidence(Strict):
    """A payload whose quote is the proposal's evidence, as an edge's is (its ``evidence_*``
    columns, ``proposal_create(evidence=…)``): a caller that puts it in the payload is
    told where it goes."""

    @model_validator(mode="before")
    @classmethod
    def _evidence_is_the_proposals(cls, data):
        if isinstance(data, dict) and "evidence" in data:
            raise ValueError(
                "the quote is the proposal's evidence (proposal_create(evidence=...)), as an "
                "edge's is, not a payload field"
            )
        return data


def describe(exc: ValidationError) -> str:
    """A pydantic error as one line of words: "where: what; where: what"."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "payload"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)
