"""The pieces every proposal kind's payload schema is built of, validated with pydantic.

A proposal's payload is JSON in the database; each kind (``review.kinds``) declares a
model of what it must carry, built of these, so a malformed agent answer is refused
with words instead of stored.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError

Name = Annotated[str, Field(min_length=1, max_length=200)]
Score = Annotated[float, Field(ge=0.0, le=100.0)]
RelationKey = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")]


class Strict(BaseModel):
    """A payload part: unknown fields refused, text stripped."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


def describe(exc: ValidationError) -> str:
    """A pydantic error as one line of words: "where: what; where: what"."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "payload"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)
