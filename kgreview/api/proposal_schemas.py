"""The shapes of the writing API: the proposals one submits and what each became.

Every field is bounded and typed strictly (a number sent as a string, a NUL byte or a
lone surrogate, a number past what the database holds are refused with the field
named), so what passes here is only ever refused item by item by the pipeline, in words.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Literal

from ninja import Field, Schema
from pydantic import BeforeValidator, ConfigDict, model_validator

from construction.text import normal_name
from kgreview.core.forms import BIGGEST_INT

from .schemas import SubmitterOut

#: The most proposals one request may carry.
BATCH_MAX = 1000
NAME_MAX = 200
QUOTE_MAX = 5000
REASON_MAX = 2000
DESCRIPTION_MAX = 5000
#: A submitted text's length at most (a long lesson; a book goes in as a source).
TEXT_MAX = 200_000
URL_MAX = 1000


LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _no_nul(value):
    """Text refused in words before anything else reads it: a NUL byte, or a lone
    surrogate (half of a UTF-16 pair, sent as an escape such as \\ud800: no character,
    and no database can store it)."""
    if not isinstance(value, str):
        return value  # the type check that follows refuses it in its own words
    if "\x00" in value:
        raise ValueError("holds a NUL byte (\\u0000), which text cannot hold")
    found = LONE_SURROGATE.search(value)
    if found is not None:
        raise ValueError(
            f"holds a lone surrogate (\\u{ord(found.group()):04x}), half of a UTF-16 pair "
            "and no character; send the text as UTF-8"
        )
    return value


def _normal_name(value):
    # Refused before the name is tidied (which would drop a NUL or a surrogate silently).
    return normal_name(_no_nul(value)) if isinstance(value, str) else value


NoNul = BeforeValidator(_no_nul)
Name = Annotated[
    str,
    BeforeValidator(_normal_name),
    Field(min_length=1, max_length=NAME_MAX),
]
Quote = Annotated[str, Field(min_length=1, max_length=QUOTE_MAX), NoNul]
Reason = Annotated[str, Field(min_length=1, max_length=REASON_MAX), NoNul]
Confidence = Annotated[
    float,
    Field(
        ge=0.0,
        le=1.0,
        allow_inf_nan=False,
        description="How sure the submitter is, from 0 to 1; below the confidence gate "
        "(KG_CONFIDENCE_GATE, 0.6) the proposal is held, flagged below_gate.",
    ),
]
RowId = Annotated[int, Field(ge=1, le=BIGGEST_INT)]


class Strict(Schema):
    model_config = ConfigDict(extra="forbid", strict=True)


class EvidenceIn(Strict):
    """Where the quote is: a source the graph holds (``source``, and ``revision`` for
    one other than its current), a ``text`` sent along (kept as a source of its own),
    or the ``url`` it was read at. Exactly one of the three."""

    quote: Quote = Field(description="The words that state it, verbatim.")
    source: Annotated[str, Field(pattern=r"^[-a-zA-Z0-9_]{1,200}$")] | None = Field(
        default=None, description="A source's slug."
    )
    revision: RowId | None = Field(
        default=None, description="The source's revision number (default: its current)."
    )
    text: Annotated[str, Field(min_length=1, max_length=TEXT_MAX), NoNul] | None = Field(
        default=None,
        description="The text the quote is from, when the graph does not hold it: stored "
        "as a submitted source (slug submitted-…), the quote looked for in it.",
    )
    title: Annotated[str, Field(max_length=300), NoNul] | None = Field(
        default=None, description="A title for the submitted text or the URL's quote."
    )
    url: Annotated[str, Field(pattern=r"^https?://\S+$", max_length=URL_MAX), NoNul] | None = Field(
        default=None,
        description="Where the quote was read (http or https): the quote is kept as a "
        "submitted source with the URL as its origin.",
    )

    @model_validator(mode="after")
    def _one_place(self):
        given = [name for name in ("source", "text", "url") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(
                "evidence names exactly one of source (a slug the graph holds), text (the "
                "text the quote is from) or url (where it was read); "
                + (f"got {', '.join(given)}" if given else "got none")
            )
        if self.revision is not None and self.source is None:
            raise ValueError("revision is a revision number of the source named by source")
        return self


class _Item(Strict):
    confidence: Confidence
    reason: Reason = Field(description="Why, in the submitter's words (shown on the card).")
    evidence: EvidenceIn | None = Field(
        default=None,
        description="The quote that supports it; without it the proposal is flagged no_evidence.",
    )


class EdgeItem(_Item):
    """``source`` *relation* ``target``, by names: each resolved to a concept, an open
    concept proposal, or a new concept proposal the edge waits for."""

    kind: Literal["add_edge"]
    source: Name
    relation: Annotated[str, Field(min_length=1, max_length=100), NoNul] = Field(
        description="A relation type's key (prerequisite, builds_on, …) or its label."
    )
    target: Name


class ConceptItem(_Item):
    """A new concept, with its other names and a description."""

    kind: Literal["add_concept"]
    name: Name
    aliases: list[Name] = Field(default_factory=list, max_length=50)
    description: Annotated[str, Field(max_length=DESCRIPTION_MAX), NoNul] = ""


class AliasItem(_Item):
    """One more name for a concept the graph (or the queue) knows by ``concept``."""

    kind: Literal["add_alias"]
    concept: Name
    alias: Name


class RetireItem(_Item):
    """Retire an active edge (``invalidate_edge``), by its id."""

    kind: Literal["invalidate_edge"]
    edge: RowId


ProposalItem = Annotated[
    EdgeItem | ConceptItem | AliasItem | RetireItem, Field(discriminator="kind")
]


class ProposalsIn(Strict):
    proposals: list[ProposalItem] = Field(min_length=1, max_length=BATCH_MAX)


class ItemResult(Schema):
    """What became of one item: ``queued`` (``id``, its ``status`` and ``flags``),
    ``merged`` into the open proposal ``id``, or ``dropped`` (``reason`` code,
    ``detail`` in words)."""

    index: int
    kind: str
    result: Literal["queued", "merged", "dropped"]
    id: int | None = None
    status: str | None = None
    flags: list[str] | None = None
    waits_for: list[int] | None = Field(
        default=None, description="The concept proposals a queued edge waits for."
    )
    reason: str | None = None
    detail: str | None = None


class Counts(Schema):
    queued: int
    merged: int
    dropped: int


class ProposalsOut(Schema):
    batch: int = Field(description="The batch's number (kept with its answer).")
    replayed: bool = Field(
        description="True when this is the answer to an earlier request with the same "
        "Idempotency-Key: nothing was queued again."
    )
    counts: Counts
    results: list[ItemResult]


class DecisionOut(Schema):
    action: str
    by: str | None
    at: datetime
    reason_code: str
    note: str


class ProposalOut(Schema):
    id: int
    kind: str
    status: str = Field(description="pending, held, accepted, rejected or superseded.")
    stage: str
    flags: list[str]
    confidence: float
    reason: str
    payload: dict
    created_at: datetime
    decided_at: datetime | None
    decided_by: str | None
    submitter: SubmitterOut | None
    decisions: list[DecisionOut]
