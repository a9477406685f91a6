"""The payload schema of each proposal kind, validated with pydantic.

A proposal's payload is JSON in the database; these models say what each kind must
carry, so a malformed agent answer is refused with words instead of stored.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from kgreview.core.errors import ValidationFailed

Name = Annotated[str, Field(min_length=1, max_length=200)]
Score = Annotated[float, Field(ge=0.0, le=100.0)]
RelationKey = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class Endpoint(_Strict):
    """One end of a proposed edge and how the agent resolved its name."""

    name: Name
    concept_id: int | None = None
    proposal_id: int | None = Field(
        default=None, description="The open add_concept proposal this endpoint waits for."
    )
    match: Literal["exact", "alias", "fuzzy", "new", "manual"] = "new"
    score: Score | None = None
    matched_name: str | None = None

    @model_validator(mode="after")
    def _resolved_consistently(self) -> Endpoint:
        if self.match == "new" and self.concept_id is not None:
            raise ValueError("a new concept cannot already have a concept_id")
        if self.match in {"exact", "alias", "fuzzy"} and (
            self.concept_id is None and self.proposal_id is None
        ):
            raise ValueError(
                f"a {self.match} match must name the concept_id (or the open add_concept "
                "proposal_id) it matched"
            )
        if self.match == "fuzzy" and self.score is None:
            raise ValueError("a fuzzy match must carry its score")
        return self


class AddConcept(_Strict):
    name: Name
    aliases: list[Name] = Field(default_factory=list, max_length=50)
    description: str = Field(default="", max_length=5000)


class Support(_Strict):
    """Another place in the evidence's revision that states the same edge."""

    start: int = Field(ge=0)
    end: int = Field(gt=0)
    quote: str = Field(min_length=1, max_length=5000)


class AddEdge(_Strict):
    source: Endpoint
    target: Endpoint
    relation: RelationKey
    weight: float = Field(default=1.0, ge=0.0)
    valid_at: datetime | None = None
    conflicts: list[dict] = Field(
        default_factory=list, description="Edges or proposals this one contradicts."
    )
    support: list[Support] = Field(
        default_factory=list,
        max_length=10,
        description="Further places in the same revision that state this edge.",
    )

    @model_validator(mode="after")
    def _not_a_self_loop(self) -> AddEdge:
        same_id = self.source.concept_id is not None and (
            self.source.concept_id == self.target.concept_id
        )
        if same_id or self.source.name.casefold() == self.target.name.casefold():
            raise ValueError("source and target are the same concept")
        return self


class UpdateEdge(_Strict):
    edge_id: int
    relation: RelationKey | None = None
    swap_direction: bool = False
    source_id: int | None = None
    target_id: int | None = None
    weight: float | None = Field(default=None, ge=0.0)
    new_confidence: float | None = Field(default=None, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _changes_something(self) -> UpdateEdge:
        if not (
            self.relation
            or self.swap_direction
            or self.source_id
            or self.target_id
            or self.weight is not None
            or self.new_confidence is not None
        ):
            raise ValueError("an update must change at least one thing")
        return self


class InvalidateEdge(_Strict):
    edge_id: int
    reason_code: Literal["evidence_gone", "cycle", "contradiction", "duplicate", "manual", "other"]
    cycle_edge_ids: list[int] = Field(default_factory=list)


class MergeConcepts(_Strict):
    survivor_id: int
    loser_id: int
    score: Score | None = None
    why: str = Field(min_length=1, max_length=2000)

    @model_validator(mode="after")
    def _two_concepts(self) -> MergeConcepts:
        if self.survivor_id == self.loser_id:
            raise ValueError("a concept cannot be merged into itself")
        return self


class RelationExample(_Strict):
    quote: str = Field(min_length=1, max_length=2000)
    source_slug: str
    revision_id: int | None = None
    start: int | None = Field(default=None, ge=0)
    end: int | None = Field(default=None, ge=0)
    source_name: str = ""
    target_name: str = ""


class AddRelationType(_Strict):
    key: RelationKey
    label: Name
    verb: Name
    description: str = Field(default="", max_length=5000)
    directed: bool = True
    symmetric: bool = False
    acyclic: bool = False
    examples: list[RelationExample] = Field(default_factory=list, max_length=50)
    labels: list[Annotated[str, Field(max_length=100)]] = Field(
        default_factory=list,
        max_length=50,
        description="The raw relation labels of the dropped candidates this type covers.",
    )

    @model_validator(mode="after")
    def _shape(self) -> AddRelationType:
        if self.directed == self.symmetric:
            raise ValueError("a relation is either directed or symmetric")
        if self.acyclic and not self.directed:
            raise ValueError("only a directed relation can be acyclic")
        return self


class UpdateConcept(_Strict):
    """A person's correction of a concept: its name, its aliases, or whether it is in use."""

    concept_id: int
    name: Name | None = None
    add_aliases: list[Name] = Field(default_factory=list, max_length=50)
    remove_aliases: list[Name] = Field(default_factory=list, max_length=50)
    status: Literal["retired", "active"] | None = None

    @model_validator(mode="after")
    def _changes_something(self) -> UpdateConcept:
        if not (self.name or self.add_aliases or self.remove_aliases or self.status):
            raise ValueError("a concept update must change at least one thing")
        if self.status and (self.name or self.add_aliases or self.remove_aliases):
            raise ValueError("retire or reactivate a concept on its own, not with renames")
        return self


SCHEMAS: dict[str, type[_Strict]] = {
    "add_concept": AddConcept,
    "add_edge": AddEdge,
    "update_edge": UpdateEdge,
    "invalidate_edge": InvalidateEdge,
    "merge_concepts": MergeConcepts,
    "add_relation_type": AddRelationType,
    "update_concept": UpdateConcept,
}


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "payload"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def payload_validate(*, kind: str, payload: object) -> dict:
    """The payload in canonical JSON form, or ``ValidationFailed`` saying what is wrong."""
    schema = SCHEMAS.get(kind)
    if schema is None:
        raise ValidationFailed(f'"{kind}" is not a proposal kind.')
    if not isinstance(payload, dict):
        raise ValidationFailed(f"A {kind} payload must be a JSON object.")
    try:
        model = schema.model_validate(payload)
    except ValidationError as exc:
        raise ValidationFailed(f"Invalid {kind} payload: {_describe(exc)}") from None
    return model.model_dump(mode="json", exclude_none=False)
