"""The shapes the read API answers with (published in its OpenAPI schema)."""

from __future__ import annotations

from datetime import datetime

from ninja import Field, Schema

# Where a quote stands in its document, said alike wherever evidence is shown.
PAGE_WORDS = (
    "The page the quote starts on, from 1, in a paged document (a PDF); "
    "null for formats without pages."
)
SECTION_WORDS = "The headings the quote sits under, outermost first; [] for none."


class Error(Schema):
    detail: str


class ValidationIssue(Schema):
    type: str
    loc: list[str | int]
    msg: str


class ValidationErrorOut(Schema):
    """A parameter outside what the operation accepts, named with where it was sent."""

    detail: list[ValidationIssue]


class ConceptRef(Schema):
    id: int
    name: str


class RelationOut(Schema):
    key: str
    label: str
    verb: str
    description: str
    directed: bool
    symmetric: bool
    acyclic: bool
    active: bool
    study_order: str | None


class EvidenceOut(Schema):
    source: str
    revision: int
    start: int
    end: int
    quote: str
    page: int | None = Field(description=PAGE_WORDS)
    section: list[str] = Field(description=SECTION_WORDS)


class EdgeOut(Schema):
    id: int
    source: ConceptRef
    relation: str
    target: ConceptRef
    symmetric: bool
    confidence: float
    weight: float
    reason: str
    status: str
    valid_at: datetime
    recorded_at: datetime
    invalid_at: datetime | None
    evidence: EvidenceOut | None
    proposal_id: int | None
    decision_id: int | None
    decided_by: str | None


class SearchHitOut(Schema):
    concept: ConceptRef
    status: str
    type: str | None = Field(
        default=None, description="The key of the concept's type at as_of; null: untyped."
    )
    matched_name: str
    match: str
    score: float


class SearchOut(Schema):
    query: str
    as_of: datetime | None
    results: list[SearchHitOut]


class AttributeValueOut(Schema):
    key: str = Field(description="The attribute's key.")
    label: str
    declared_by: str = Field(description="The key of the concept type that declares it.")
    datatype: str
    value: str = Field(description="The value in its datatype's canonical form.")
    recorded_at: datetime
    invalid_at: datetime | None
    evidence: EvidenceOut | None
    decision_id: int | None = Field(
        description="The decision that set the value; null for one set by hand or given "
        "back by an undo."
    )


class ConceptDetailOut(Schema):
    id: int
    name: str
    description: str
    status: str
    type: str | None = Field(
        description="The key of the concept's type at as_of (now without it); null: untyped."
    )
    merged_into: ConceptRef | None = Field(
        description="For a merged concept, the concept its names and edges live on now: "
        "the end of its chain of merges (A merged into B, then B into C: C)."
    )
    aliases: list[str]
    as_of: datetime | None
    existed: bool
    outgoing: list[EdgeOut]
    incoming: list[EdgeOut]
    attributes: list[AttributeValueOut] = Field(
        description="The concept's attribute values at as_of (now without it), by key."
    )


class NodeOut(Schema):
    id: int
    name: str
    distance: int
    type: str | None = Field(
        default=None, description="The key of the concept's type at as_of; null: untyped."
    )


class NeighboursOut(Schema):
    center: ConceptRef
    existed: bool
    depth: int
    direction: str
    relations: list[str]
    as_of: datetime | None
    nodes: list[NodeOut]
    edges: list[EdgeOut]
    truncated: bool


class HopOut(Schema):
    from_concept: ConceptRef
    to_concept: ConceptRef
    along_edge_direction: bool
    edge: EdgeOut


class PathOut(Schema):
    found: bool
    length: int | None
    max_depth: int
    direction: str
    relations: list[str]
    as_of: datetime | None
    concepts: list[ConceptRef]
    hops: list[HopOut]
    message: str


class NeedOut(Schema):
    concept: ConceptRef
    relation: str
    edge_id: int


class StepOut(Schema):
    position: int
    concept: ConceptRef
    level: int
    needs: list[NeedOut]


class CycleOut(Schema):
    concepts: list[ConceptRef]
    edges: list[EdgeOut]
    message: str


class LearningPathOut(Schema):
    target: ConceptRef
    via: list[str]
    as_of: datetime | None
    ok: bool
    steps: list[StepOut]
    total_steps: int = Field(description="How many steps the whole study order has.")
    next_offset: int | None = Field(
        description="The offset of the next page of steps; null on the last page."
    )
    cycle: CycleOut | None
    blocked: list[ConceptRef]
    truncated: bool


class EvidenceContextOut(Schema):
    source: str
    source_title: str
    revision: int
    current_revision: int | None
    start: int
    end: int
    quote: str
    before: str
    after: str
    in_current_revision: bool
    page: int | None = Field(description=PAGE_WORDS)
    section: list[str] = Field(description=SECTION_WORDS)


class AgentOut(Schema):
    """The agent run that proposed it."""

    run_id: int | None = Field(description="The agent run's number.")
    agent: str
    provider: str
    model: str


class SubmitterOut(Schema):
    """Who proposed it. For a proposal submitted from outside kgreview: the account,
    the door (``api``: POST /api/v1/proposals; ``mcp``: the MCP server's propose
    tool), the API token's name and the batch that queued it (null where not known);
    otherwise the agent's key, or ``person``, with the batch and token null."""

    user: str | None = Field(description="The account that submitted it.")
    via: str = Field(
        description='"api" or "mcp" for a proposal submitted from outside, the agent\'s '
        'key for an agent\'s, "person" for one a person made by hand.'
    )
    name: str = Field(description='The submitter in words: "tutor-bot (ada)".')
    token: str | None = Field(default=None, description="The API token's name, if one was used.")
    batch: int | None = Field(
        default=None, description="The batch (POST /api/v1/proposals or propose) that queued it."
    )


class ProposalOut(Schema):
    id: int
    kind: str
    confidence: float
    reason: str
    created_at: datetime
    agent: AgentOut | None = Field(description="The agent run that proposed it, if an agent did.")
    submitter: SubmitterOut | None = Field(
        description="Who submitted it through the API or MCP, if it came from outside."
    )


class TrailOut(Schema):
    id: int
    action: str
    action_label: str
    by: str | None
    at: datetime
    note: str
    reason_code: str
    proposal: int
    proposal_kind: str
    undoes: int | None


class ExplainOut(Schema):
    edge: EdgeOut
    claim: str
    as_of: datetime | None
    state_at: str
    invalidation_reason: str
    invalidated_by: str | None
    evidence: EvidenceContextOut | None
    proposal: ProposalOut | None
    trail: list[TrailOut]
    supersedes: int | None
    superseded_by: int | None


class SupersededOut(Schema):
    old: EdgeOut
    new: EdgeOut | None


class MergedOut(Schema):
    concept: ConceptRef
    into: ConceptRef | None
    at: datetime


class DiffCounts(Schema):
    added: int
    invalidated: int
    superseded: int
    concepts_added: int
    concepts_merged: int


class DiffOut(Schema):
    since: datetime
    until: datetime
    counts: DiffCounts
    truncated: bool
    added: list[EdgeOut]
    invalidated: list[EdgeOut]
    superseded: list[SupersededOut]
    concepts_added: list[ConceptRef]
    concepts_merged: list[MergedOut]


# --- Ask --------------------------------------------------------------------------------


class AskHopOut(Schema):
    source: str = Field(description="The edge's source concept.")
    relation: str
    target: str = Field(description="The edge's target concept.")
    edge: int = Field(description="The edge's id (GET /api/v1/edges/{id}).")
    quote: str = Field(description="The evidence sentence quoted from the source.")
    source_slug: str
    revision: int | None = Field(description="The quoted revision's number in its source.")
    from_: str = Field(alias="from", description="Where this hop starts, in the path's order.")
    to: str = Field(description="Where this hop ends, in the path's order.")


class AskAnswerOut(Schema):
    concepts: list[str] = Field(description="The answer set, or the path's concepts.")
    concept_ids: list[int]
    paths: list[list[AskHopOut]]


class AskFoundOut(Schema):
    said: str
    concept: int
    name: str
    match: str
    score: float


class AskWalkOut(Schema):
    relation: str
    direction: str


class AskPlanOut(Schema):
    family: str | None = Field(
        description="prerequisites, dependents, parts, wholes, contrasts, uses, outgoing, "
        "incoming, connection, yes_no or members (the concepts of a type); null when the "
        "question was not understood."
    )
    concepts: list[AskFoundOut]
    unknown: list[str]
    walks: list[AskWalkOut]
    hops: int
    relation: str | None
    transitive: bool
    planner: str
    note: str
    type: str | None = Field(
        default=None,
        description="The concept type the question named (its key): answers are kept to it "
        "and the types below it; null: any type.",
    )
    types: list[str] = Field(
        default_factory=list, description="The type's key and those of the types below it."
    )


class AskOut(Schema):
    question: str
    status: str = Field(description="answered, no_path or not_understood.")
    yes: bool | None = Field(description="The answer to a yes/no question; null otherwise.")
    message: str
    as_of: str | None
    answer: AskAnswerOut
    plan: AskPlanOut
    critique: list[str]
    iterations: int


# --- Agreement between reviewers ---------------------------------------------------------


class AgreementIntervalOut(Schema):
    """A percentile bootstrap interval of alpha over units; low and high null when it
    cannot be computed (note says why)."""

    low: float | None
    high: float | None
    level: float
    resamples: int
    used: int = Field(description="Resamples on which alpha was defined.")
    seed: int
    method: str
    note: str


class AgreementGroupOut(Schema):
    items: int = Field(description="Proposals decided twice (rounds of double review).")
    kappa: float | None = Field(description="Fleiss' kappa; null when undefined (see note).")
    alpha: float | None = Field(description="Krippendorff's alpha, nominal.")
    observed: float | None = Field(description="Share of pairs of votes that agree.")
    interval: AgreementIntervalOut
    note: str


class AgreementRelationOut(AgreementGroupOut):
    below_threshold: bool = Field(
        description="Alpha under KG_DOUBLE_REVIEW_BELOW over at least min_items proposals."
    )


class AgreementOverallOut(AgreementGroupOut):
    votes: int
    since: str | None
    threshold: float
    min_items: int
    notes: list[str]


class ReviewerAgreementOut(Schema):
    username: str
    items: int
    observed: float | None
    kappa: float | None = Field(description="Cohen's kappa against the other reviewers.")
    kappa_note: str
    with_adjudication: float | None = Field(
        description="Share of their adjudicated votes that matched the curator's decision."
    )
    adjudicated: int
    decisions: int
    per_hour: float | None
    median_seconds: float | None
    active_hours: float | None
    accepted: int
    reversed: int
    reversed_share: float | None


class PairAgreementOut(Schema):
    reviewers: list[str]
    items: int
    observed: float | None
    kappa: float | None = Field(description="Cohen's kappa of the two reviewers.")
    note: str


class AgreementOut(Schema):
    overall: AgreementOverallOut
    relations: dict[str, AgreementRelationOut]
    kinds: dict[str, AgreementGroupOut]
    reviewers: list[ReviewerAgreementOut]
    pairs: list[PairAgreementOut]
