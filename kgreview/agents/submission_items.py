"""What a submission is and what becomes of it: the items others send
(``Submission`` with its ``SubmittedEvidence``), each item's answer (``Outcome``:
queued, merged or dropped, with the reason in words) and what one batch shares
(``Batch``). ``agents.submissions`` runs the items through the agents' pipeline."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from construction.pipeline import DocumentFacts, document_facts
from construction.types import SourceDoc
from kgreview.core.errors import DuplicateProposal
from kgreview.graph.models import SourceRevision
from kgreview.review.models import Proposal, ProposalOrigin

if TYPE_CHECKING:
    from django.contrib.auth.models import User


@dataclass(frozen=True)
class SubmittedEvidence:
    """Where a submitted item's quote is: ``source`` (a slug) and optionally its
    ``revision`` number; or ``text`` (with a ``title``) that holds it; or the ``url`` it
    was read at. ``quote`` is always given."""

    quote: str
    source: str = ""
    revision: int | None = None
    text: str = ""
    title: str = ""
    url: str = ""


@dataclass(frozen=True)
class Submission:
    """One proposal as a submitter states it, by names (the pipeline resolves them).

    ``add_edge``: ``source``, ``relation``, ``target``. ``add_concept``: ``name``,
    ``aliases``, ``description``. ``add_alias``: ``concept`` (a name) and ``alias``.
    ``invalidate_edge``: ``edge_id``.
    """

    kind: str
    confidence: float
    reason: str
    evidence: SubmittedEvidence | None = None
    source: str = ""
    relation: str = ""
    target: str = ""
    name: str = ""
    aliases: tuple[str, ...] = ()
    description: str = ""
    concept: str = ""
    alias: str = ""
    edge_id: int | None = None


@dataclass(frozen=True)
class Outcome:
    """What became of one item: ``queued`` as ``proposal_id`` (its status and flags),
    ``merged`` into the open ``proposal_id`` that already proposes it, or ``dropped``
    with a reason code and the reason in words. ``waits_for``: the concept proposals a
    queued edge waits for."""

    result: Literal["queued", "merged", "dropped"]
    proposal_id: int | None = None
    status: str = ""
    flags: tuple[str, ...] = ()
    reason: str = ""
    detail: str = ""
    waits_for: tuple[int, ...] = ()

    def as_json(self) -> dict:
        out: dict = {"result": self.result}
        if self.proposal_id is not None:
            out["id"] = self.proposal_id
        if self.result == "queued":
            out["status"] = self.status
            out["flags"] = list(self.flags)
            if self.waits_for:
                out["waits_for"] = list(self.waits_for)
        if self.reason:
            out["reason"] = self.reason
        if self.detail:
            out["detail"] = self.detail
        return out


def queued(proposal: Proposal, *, waits_for: Sequence[int] = ()) -> Outcome:
    return Outcome(
        "queued",
        proposal_id=proposal.pk,
        status=proposal.status,
        flags=tuple(proposal.flags or ()),
        waits_for=tuple(waits_for),
    )


def merged(proposal_id: int, detail: str) -> Outcome:
    return Outcome("merged", proposal_id=proposal_id, reason="duplicate", detail=detail)


def dropped(reason: str, detail: str) -> Outcome:
    return Outcome("dropped", reason=reason, detail=detail)


def duplicate(refusal: DuplicateProposal) -> Outcome:
    if refusal.proposal_id is None:
        return dropped("duplicate", refusal.message)
    return merged(
        refusal.proposal_id,
        f"The same change is already waiting for review as proposal #{refusal.proposal_id}.",
    )


# What the pipeline's reason codes mean, for a submitter (its detail follows).
PIPELINE_WORDS = {
    "unknown_relation": "The relation is not in the active vocabulary",
    "self_loop": "Both ends are one concept",
    "evidence_not_found": "The quote is not in its source (compared with runs of "
    "whitespace collapsed, typographic quotes and Markdown emphasis ignored)",
    "duplicate": "The same change is already proposed",
    "existing_edge": "The graph already has this edge",
    "previously_rejected": "A reviewer rejected this change before, with this very quote; "
    "send new evidence to propose it again",
    "unresolvable": "A name cannot be used as a concept's name",
    "invalid": "The item is not usable",
}


def pipeline_drop(reason: str, detail: str) -> Outcome:
    words = PIPELINE_WORDS.get(reason, reason)
    return dropped(reason, f"{words}: {detail}." if detail else f"{words}.")


def drop_outcome(reason: str, detail: str, twin_of: int | None = None) -> Outcome:
    """What a candidate the pipeline dropped comes to: ``merged`` into the open proposal
    it is a twin of (the same change or its inverse), else ``dropped`` with its reason in
    words. The one rule for the writing API's answers and an annotation import's report."""
    if reason == "duplicate" and twin_of is not None:
        return merged(
            twin_of,
            f"The same change (or its inverse) is already waiting for review as proposal "
            f"#{twin_of}.",
        )
    return pipeline_drop(reason, detail)


@dataclass
class Batch:
    """What the items of one batch share: the submitter, the vocabulary, the revisions
    read and their texts' facts (computed once per revision)."""

    acting_user: User | None
    proposer: ProposalOrigin
    label: str
    relations: list = field(default_factory=list)
    vocabulary: list = field(default_factory=list)
    ontology: object = None
    facts: dict[int, DocumentFacts] = field(default_factory=dict)
    submitted: dict[tuple[str, str, str], SourceRevision] = field(default_factory=dict)
    named: dict[tuple[str, int | None], SourceRevision | Outcome] = field(default_factory=dict)

    def facts_of(self, revision: SourceRevision, doc: SourceDoc) -> DocumentFacts:
        found = self.facts.get(revision.pk)
        if found is None:
            found = self.facts[revision.pk] = document_facts(doc)
        return found
