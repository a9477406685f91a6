"""Decisions on proposals: accept, reject, edit-then-accept, undo, bulk.

Every decision is one service call in one transaction. Locking rules: the proposal row
is locked first (``select_for_update``); its status and the version the reviewer saw
are checked before anything else, so when two reviewers decide the same proposal
exactly one wins and the other is told who decided and when. Applying a proposal
re-verifies it against the graph as it is now (through the graph services, which lock
what they change); a proposal that went stale is refused with the reason in words and
nothing of it is written. What the decision changed in the graph is then settled in
the queue (``reconcile``): twins superseded, waiting proposals re-pointed, in the same
transaction and batch, each settlement a decision caused by this one.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from construction import keys
from kgreview.core.errors import (
    ConceptNotActive,
    CycleDetected,
    DomainError,
    DuplicateEdge,
    EvidenceMismatch,
    InactiveRelation,
    NameTaken,
    NotFound,
    SelfLoop,
    StateConflict,
    ValidationFailed,
)
from kgreview.core.permissions import is_curator
from kgreview.graph import search as graph_search
from kgreview.graph import selectors as graph_selectors
from kgreview.graph import services as graph
from kgreview.graph.models import Concept, ConceptAlias, Edge, RelationType, SourceConcept

from .models import OPEN_STATUSES, Decision, Proposal
from .payloads import payload_validate
from .reconcile import CLOSE_FIELDS, GraphChanges, close_proposal, reconcile
from .services import endpoint_columns

REJECT_REASONS = {
    "wrong_direction": "Wrong direction",
    "wrong_relation": "Wrong relation",
    "not_supported_by_evidence": "Not supported by the evidence",
    "duplicate": "Duplicate",
    "too_vague": "Too vague",
    "other": "Other",
}
CURATOR_KINDS = frozenset({"merge_concepts", "add_relation_type", "update_concept"})
PRIMARY_ACTIONS = (
    Decision.Action.ACCEPT,
    Decision.Action.REJECT,
    Decision.Action.EDIT_ACCEPT,
)
UNDO_WINDOW = timedelta(hours=24)


class ProposalStale(DomainError):
    """The graph changed so that the proposal cannot be applied as it stands."""

    code = "stale"


class AlreadyDecided(StateConflict):
    code = "already_decided"


class VersionChanged(StateConflict):
    code = "version_changed"


class NotAllowed(DomainError):
    code = "not_allowed"


@dataclass
class Outcome:
    """What one decision did, for the caller to show."""

    proposal: Proposal
    decision: Decision | None
    batch: uuid.UUID
    edges: list[Edge] = field(default_factory=list)
    concepts: list[Concept] = field(default_factory=list)
    also_decided: list[Proposal] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)  # all of this batch, first first
    settled: list[Decision] = field(default_factory=list)  # proposals settled as a consequence
    changes: GraphChanges = field(default_factory=GraphChanges)
    message: str = ""


def can_decide_kind(user, kind: str) -> bool:
    """Whether this user's role decides proposals of this kind (reviewers: not curator kinds)."""
    return kind not in CURATOR_KINDS or is_curator(user)


# --- Shared steps -----------------------------------------------------------------------


def _who(decision: Decision | None) -> str:
    if decision is None or decision.user is None:
        return "the system"
    return decision.user.get_username()


def _lock_open(proposal_id: int, version: int | None) -> Proposal:
    """Lock the proposal and check it is still open and unchanged since it was shown."""
    proposal = (
        Proposal.objects.select_for_update(of=("self",))
        .select_related("evidence_revision__source")
        .filter(pk=proposal_id)
        .first()
    )
    if proposal is None:
        raise NotFound(f"There is no proposal #{proposal_id}.")
    if not proposal.is_open:
        last = proposal.decisions.select_related("user").order_by("-created_at", "-id").first()
        when = timezone.localtime(proposal.decided_at).strftime("%Y-%m-%d %H:%M")
        why = f" ({last.note})" if last is not None and last.note and last.caused_by_id else ""
        raise AlreadyDecided(
            f"Proposal #{proposal.pk} was already {proposal.status} by {_who(last)} at "
            f"{when}{why}.",
            proposal_id=proposal.pk,
            status=proposal.status,
            decided_by=_who(last),
            decided_at=proposal.decided_at.isoformat() if proposal.decided_at else None,
        )
    if version is not None and version != proposal.version:
        raise VersionChanged(
            f"Proposal #{proposal.pk} changed while you were looking at it (now version "
            f"{proposal.version}{': ' + ', '.join(proposal.flags) if proposal.flags else ''}"
            "). Look again before deciding.",
            proposal_id=proposal.pk,
            version=proposal.version,
        )
    return proposal


def _require_role(proposal: Proposal, reviewer) -> None:
    if not can_decide_kind(reviewer, proposal.kind):
        raise NotAllowed(f"Only curators decide {proposal.get_kind_display().lower()} proposals.")


def _stale(exc: DomainError) -> ProposalStale:
    return ProposalStale(f"Cannot apply it as it stands: {exc}", cause=exc.code)


def _ground(proposal: Proposal, concept_ids) -> None:
    """Record that the proposal's source grounds these concepts (one upsert)."""
    if not (proposal.document_id and proposal.evidence_revision_id):
        return
    SourceConcept.objects.bulk_create(
        [
            SourceConcept(
                source_id=proposal.document_id,
                concept_id=cid,
                revision_id=proposal.evidence_revision_id,
            )
            for cid in dict.fromkeys(concept_ids)
        ],
        update_conflicts=True,
        unique_fields=["source", "concept"],
        update_fields=["revision"],
    )


def open_concept_proposal(name: str) -> Proposal | None:
    """The open add_concept proposal for this name (or its plural/singular twin)."""
    return (
        Proposal.objects.filter(
            kind=Proposal.Kind.ADD_CONCEPT,
            status__in=OPEN_STATUSES,
            dedup_key=keys.concept_dedup_key(name)[:255],
        )
        .order_by("pk")
        .first()
    )


def concept_for_name(name: str) -> Concept | None:
    """The concept a typed name means: the same name, an alias, or a plural/singular twin
    (the resolver's rule: names with one key are one concept). Inactive concepts too."""
    owner = graph_selectors.name_owner(name=name)
    if owner is not None:
        return owner.concept
    same_key = graph_selectors.concepts_by_key(name=name)
    return same_key[0].concept if same_key else None


# --- Applying each kind -----------------------------------------------------------------
#
# Each apply function changes the graph for one accepted proposal, records what it did
# in ``record`` (kept in the decision's ``after``, which undo reads) and what changed in
# ``out.changes`` (which reconcile reads).


def _apply_add_concept(proposal, reviewer, decision, out: Outcome, record: dict) -> None:
    """Create the concept, or reuse the one that already answers to the name."""
    payload = proposal.payload
    name = payload["name"]
    owner = graph_selectors.name_owner(name=name)
    concept = owner.concept if owner is not None else None
    if concept is None:
        twin = concept_for_name(name)
        if twin is not None and twin.is_active:
            concept = twin
    if concept is not None and concept.status == Concept.Status.RETIRED:
        if proposal.concept_id != concept.pk:  # not this proposal's own concept coming back
            raise ProposalStale(
                f'"{name}" names the concept "{concept.name}", which a curator retired; '
                "a curator can reactivate it from its page, or reject this proposal.",
                concept_id=concept.pk,
            )
        concept = graph.concept_reactivate(concept=concept)
        record.update(concept_id=concept.pk, created=True)
    elif concept is not None:
        added = []
        for alias in [name, *payload.get("aliases", [])]:
            if graph_selectors.name_owner(name=alias) is None:
                added.append(graph.concept_add_alias(concept=concept, name=alias).pk)
        record.update(concept_id=concept.pk, created=False, aliases_added=added)
        out.message = f'"{name}" was already the concept "{concept.name}"; linked to it.'
    else:
        free = [a for a in payload.get("aliases", []) if graph_selectors.name_owner(name=a) is None]
        concept = graph.concept_create(
            name=name, description=payload.get("description", ""), aliases=free
        )
        record.update(concept_id=concept.pk, created=True)
    proposal.concept = concept
    _ground(proposal, [concept.pk])
    out.concepts.append(concept)
    out.changes.named.add(concept.pk)
    out.changes.resolved[proposal.pk] = concept.pk


def _accept_needed(needed: Proposal, reviewer, out: Outcome) -> int:
    """Accept the open add_concept proposal an edge needs, in the edge's batch."""
    inner = _accept(
        needed,
        reviewer=reviewer,
        batch=out.batch,
        note=f"Accepted with edge proposal #{out.proposal.pk}, which needs it.",
        cause=out.decision,
        changes=out.changes,
    )
    out.also_decided.append(needed)
    out.decisions += inner.decisions
    out.concepts += inner.concepts
    return inner.concepts[0].pk


def _endpoint(endpoint: dict, reviewer, out: Outcome) -> int:
    """The id of the concept an edge proposal's end stands for now.

    One rule for every path (accept, edit-accept, bulk, keep over contradictions): a
    known concept is used as it is (the edge service locks it and refuses a merged or
    retired one in words); a pending concept proposal is accepted with the edge; an
    accepted or superseded one stands for its concept; a rejected one stands for the
    concept that now answers to its name, if any; a bare name (an explicit new concept
    from an edit) reuses the concept or open proposal for that name, else is created.
    """
    if endpoint.get("concept_id"):
        return endpoint["concept_id"]
    if endpoint.get("proposal_id"):
        needed = Proposal.objects.select_for_update().filter(pk=endpoint["proposal_id"]).first()
        if needed is None:
            raise ProposalStale(f'The proposal for "{endpoint["name"]}" no longer exists.')
        if needed.is_open:
            return _accept_needed(needed, reviewer, out)
        concept = needed.concept if needed.concept_id else None
        if concept is None:
            owner = graph_selectors.name_owner(name=needed.payload["name"])
            concept = owner.concept if owner is not None else None
        if concept is not None:
            if not concept.is_active:
                raise ProposalStale(graph.inactive_words(concept), concept_id=concept.pk)
            return concept.pk
        raise ProposalStale(
            f'The concept "{endpoint["name"]}" was {needed.status} (proposal #{needed.pk}); '
            "edit the proposal to use another concept, or reject it."
        )
    existing = concept_for_name(endpoint["name"])
    if existing is not None:
        if not existing.is_active:
            raise ProposalStale(graph.inactive_words(existing), concept_id=existing.pk)
        return existing.pk
    waiting = open_concept_proposal(endpoint["name"])
    if waiting is not None:
        waiting = Proposal.objects.select_for_update().get(pk=waiting.pk)
        if waiting.is_open:
            return _accept_needed(waiting, reviewer, out)
    concept = graph.concept_create(name=endpoint["name"])
    out.concepts.append(concept)
    out.changes.named.add(concept.pk)
    return concept.pk


def _apply_add_edge(proposal, reviewer, decision, out: Outcome, record: dict) -> None:
    payload = proposal.payload
    source_id = _endpoint(payload["source"], reviewer, out)
    target_id = _endpoint(payload["target"], reviewer, out)
    relation_id = proposal.relation_id
    if relation_id is None:
        relation_id = (
            RelationType.objects.filter(key=payload["relation"])
            .values_list("pk", flat=True)
            .first()
        )
    if relation_id is None:
        raise ProposalStale(f'The relation "{payload["relation"]}" does not exist.')
    if source_id == target_id:
        raise ProposalStale("Both ends are now the same concept; an edge cannot loop.")
    edge = graph.edge_add(
        source_id=source_id,
        target_id=target_id,
        relation_id=relation_id,
        confidence=proposal.confidence,
        reason=proposal.reason or "Accepted by a reviewer.",
        evidence=graph.Evidence.of(proposal),
        weight=payload.get("weight", 1.0),
        proposal=proposal,
        decision=decision,
        decided_by=reviewer,
    )
    _ground(proposal, [source_id, target_id])
    out.edges.append(edge)
    out.changes.edges_added.add(edge.pk)
    out.changes.edge_rows[edge.pk] = edge
    out.changes.closed_keys.add(proposal.dedup_key)


def _locked_edge(edge_id: int) -> Edge:
    edge = Edge.objects.filter(pk=edge_id).first()
    if edge is None:
        raise ProposalStale(f"Edge #{edge_id} does not exist.")
    if not edge.is_active:
        raise ProposalStale(
            f"Edge #{edge.pk} is no longer active ({edge.status} "
            f"{timezone.localtime(edge.invalid_at):%Y-%m-%d %H:%M})."
        )
    return edge


def _apply_update_edge(proposal, reviewer, decision, out: Outcome, record: dict) -> None:
    payload = proposal.payload
    edge = _locked_edge(payload["edge_id"])
    changes: dict = {}
    if payload.get("relation"):
        changes["relation"] = RelationType.objects.get(key=payload["relation"])
    source_id = payload.get("source_id") or edge.source_id
    target_id = payload.get("target_id") or edge.target_id
    if payload.get("swap_direction"):
        source_id, target_id = target_id, source_id
    if (source_id, target_id) != (edge.source_id, edge.target_id):
        changes["source"] = Concept.objects.get(pk=source_id)
        changes["target"] = Concept.objects.get(pk=target_id)
    if payload.get("weight") is not None:
        changes["weight"] = payload["weight"]
    if payload.get("new_confidence") is not None:
        changes["confidence"] = payload["new_confidence"]
    new = graph.edge_supersede(
        edge=edge,
        user=reviewer,
        why=proposal.reason or "Updated by a reviewer.",
        decision=decision,
        proposal=proposal,
        **changes,
    )
    out.edges.append(new)
    out.changes.edges_gone.add(edge.pk)
    out.changes.edges_added.add(new.pk)


def _apply_invalidate_edge(proposal, reviewer, decision, out: Outcome, record: dict) -> None:
    edge = _locked_edge(proposal.payload["edge_id"])
    graph.edge_invalidate(
        edge=edge,
        reason=proposal.reason or "Invalidated by a reviewer.",
        user=reviewer,
        decision=decision,
    )
    out.edges.append(edge)
    out.changes.edges_gone.add(edge.pk)


def _apply_merge(proposal, reviewer, decision, out: Outcome, record: dict) -> None:
    payload = proposal.payload
    merged = graph.concept_merge(
        loser=Concept.objects.get(pk=payload["loser_id"]),
        survivor=Concept.objects.get(pk=payload["survivor_id"]),
        user=reviewer,
        reason=payload.get("why", ""),
        proposal=proposal,
        decision=decision,
    )
    out.concepts.append(merged.survivor)
    out.edges += [new for _, new in merged.superseded]
    out.changes.merged[merged.loser.pk] = merged.survivor.pk
    out.changes.edges_gone |= {old.pk for old, _ in merged.superseded}
    out.changes.edges_gone |= {old.pk for old in merged.invalidated}
    out.changes.edges_added |= {new.pk for _, new in merged.superseded}


def _apply_relation_type(proposal, reviewer, decision, out: Outcome, record: dict) -> None:
    payload = proposal.payload
    key = payload["key"]
    # Once the type exists, the candidates dropped for lacking it are verified again.
    transaction.on_commit(lambda: _requeue_dropped(key))
    graph.relation_type_create(
        key=payload["key"],
        label=payload["label"],
        verb=payload["verb"],
        description=payload.get("description", ""),
        directed=payload.get("directed", True),
        symmetric=payload.get("symmetric", False),
        acyclic=payload.get("acyclic", False),
    )


def _apply_update_concept(proposal, reviewer, decision, out: Outcome, record: dict) -> None:
    payload = proposal.payload
    concept = Concept.objects.filter(pk=payload["concept_id"]).first()
    if concept is None:
        raise ProposalStale(f"There is no concept #{payload['concept_id']}.")
    status = payload.get("status")
    if status == "retired":
        concept = graph.concept_retire(concept=concept)
        out.changes.retired.add(concept.pk)
    elif status == "active":
        concept = graph.concept_reactivate(concept=concept)
        out.changes.named.add(concept.pk)
    else:
        if payload.get("name"):
            old = concept.name
            concept, was_alias = graph.concept_rename(concept=concept, name=payload["name"])
            record.update(renamed_from=old, renamed_to=concept.name, was_alias=was_alias)
        record["aliases_added"] = [
            graph.concept_add_alias(concept=concept, name=name).pk
            for name in payload.get("add_aliases", [])
        ]
        record["aliases_removed"] = [
            graph.concept_remove_alias(concept=concept, name=name).pk
            for name in payload.get("remove_aliases", [])
        ]
        out.changes.named.add(concept.pk)
    out.concepts.append(concept)


def _requeue_dropped(key: str) -> None:
    from kgreview.agents.tasks import requeue_dropped

    try:
        requeue_dropped.delay(relation_key=key)
    except Exception:  # the broker is down: the next discovery run requeues them instead
        logging.getLogger(__name__).exception("could not queue the requeue of %s", key)


APPLY = {
    "add_concept": _apply_add_concept,
    "add_edge": _apply_add_edge,
    "update_edge": _apply_update_edge,
    "invalidate_edge": _apply_invalidate_edge,
    "merge_concepts": _apply_merge,
    "add_relation_type": _apply_relation_type,
    "update_concept": _apply_update_concept,
}
# Kinds whose graph rows link to the decision: it is written before they are applied.
# The others are applied first, so the decision can record what they did.
DECISION_FIRST = frozenset({"add_edge", "update_edge", "invalidate_edge", "merge_concepts"})
GRAPH_REFUSALS = (
    ConceptNotActive,
    CycleDetected,
    DuplicateEdge,
    EvidenceMismatch,
    InactiveRelation,
    NameTaken,
    SelfLoop,
    ValidationFailed,
    StateConflict,
)


def _accept(
    proposal: Proposal,
    *,
    reviewer,
    batch: uuid.UUID,
    note: str = "",
    action: str = Decision.Action.ACCEPT,
    before: dict | None = None,
    after: dict | None = None,
    cause: Decision | None = None,
    changes: GraphChanges | None = None,
) -> Outcome:
    """Apply a locked, open proposal. Runs inside the caller's transaction; a refusal
    propagates (no savepoint) and the caller's transaction rolls back whole."""
    _require_role(proposal, reviewer)
    out = Outcome(
        proposal=proposal,
        decision=None,
        batch=batch,
        changes=changes if changes is not None else GraphChanges(),
    )
    record: dict = {}

    def close() -> Decision:
        return close_proposal(
            proposal,
            user=reviewer,
            status=Proposal.Status.ACCEPTED,
            action=action,
            batch=batch,
            note=note,
            before=before,
            after={**(after or {}), **record},
            cause=cause,
        )

    try:
        if proposal.kind in DECISION_FIRST:
            out.decision = close()
            out.decisions.append(out.decision)
            APPLY[proposal.kind](proposal, reviewer, out.decision, out, record)
        else:
            APPLY[proposal.kind](proposal, reviewer, None, out, record)
            out.decision = close()
            out.decisions.insert(0, out.decision)
    except ProposalStale:
        raise
    except GRAPH_REFUSALS as exc:
        raise _stale(exc) from exc
    if proposal.kind == Proposal.Kind.ADD_CONCEPT:
        graph.name_index_changed()
    return out


def _settle(out: Outcome, reviewer) -> Outcome:
    """Settle the queue after a top-level decision (see ``reconcile``)."""
    settled = reconcile(
        out.changes,
        user=reviewer,
        batch=out.batch,
        cause=out.decision,
        why=f"(Settled by decision #{out.decision.pk} on proposal #{out.proposal.pk}.)",
    )
    out.settled += settled
    out.decisions += settled
    return out


# --- Public services --------------------------------------------------------------------


@transaction.atomic
def proposal_accept(
    *,
    proposal_id: int,
    reviewer,
    version: int | None = None,
    note: str = "",
    batch=None,
    merge_survivor: int | None = None,
) -> Outcome:
    """Accept one proposal and apply it to the graph (and the concepts it needs).

    For a merge, ``merge_survivor`` names which of the two concepts is kept: the curator
    may keep the other one than the agent suggested (the decision records both).
    """
    proposal = _lock_open(proposal_id, version)
    batch = batch or uuid.uuid4()
    if proposal.kind == Proposal.Kind.MERGE_CONCEPTS and merge_survivor is not None:
        payload = proposal.payload
        if merge_survivor not in (payload["survivor_id"], payload["loser_id"]):
            raise ValidationFailed("The concept to keep must be one of the two being merged.")
        if merge_survivor == payload["loser_id"]:
            before = {"status": proposal.status, "payload": payload}
            proposal.payload = {
                **payload,
                "survivor_id": payload["loser_id"],
                "loser_id": payload["survivor_id"],
            }
            for column, value in endpoint_columns(proposal.kind, proposal.payload).items():
                setattr(proposal, column, value)
            out = _accept(
                proposal,
                reviewer=reviewer,
                batch=batch,
                note=note or "Kept the other concept than the one suggested.",
                action=Decision.Action.EDIT_ACCEPT,
                before=before,
                after={"payload": proposal.payload},
            )
            return _settle(out, reviewer)
    return _settle(_accept(proposal, reviewer=reviewer, batch=batch, note=note), reviewer)


@transaction.atomic
def proposal_reject(
    *,
    proposal_id: int,
    reviewer,
    reason_code: str,
    note: str = "",
    version: int | None = None,
    batch=None,
    cause: Decision | None = None,
) -> Outcome:
    """Reject a proposal with a typed reason; ``other`` needs words.

    Rejecting a concept proposal settles the edge proposals waiting for it: they are
    re-pointed at the concept that now answers to its name, or closed as superseded.
    """
    if reason_code not in REJECT_REASONS:
        raise ValidationFailed(
            f'"{reason_code}" is not a reject reason; use one of {", ".join(REJECT_REASONS)}.'
        )
    if reason_code == "other" and not note.strip():
        raise ValidationFailed('Say why in a few words when the reason is "other".')
    proposal = _lock_open(proposal_id, version)
    _require_role(proposal, reviewer)
    batch = batch or uuid.uuid4()
    decision = close_proposal(
        proposal,
        user=reviewer,
        status=Proposal.Status.REJECTED,
        action=Decision.Action.REJECT,
        batch=batch,
        reason_code=reason_code,
        note=note,
        cause=cause,
    )
    out = Outcome(proposal=proposal, decision=decision, batch=batch, decisions=[decision])
    if proposal.kind == Proposal.Kind.ADD_CONCEPT:
        graph.name_index_changed()
        out.changes.rejected.add(proposal.pk)
    if cause is None:
        _settle(out, reviewer)
    return out


# --- Edit, then accept ------------------------------------------------------------------


@dataclass(frozen=True)
class EndChoice:
    """How a reviewer set one end of an edge: a concept picked, a pending concept
    proposal picked, a new concept explicitly asked for, or a name typed."""

    concept_id: int | None = None
    proposal_id: int | None = None
    name: str | None = None
    create: bool = False


@dataclass(frozen=True)
class EdgeEdits:
    """A reviewer's corrections to an add_edge proposal before accepting it."""

    relation: str | None = None
    swap_direction: bool = False
    source: EndChoice | None = None
    target: EndChoice | None = None
    confidence: float | None = None
    weight: float | None = None


def _suggestion_words(name: str) -> str:
    hits = graph_search.concept_search(q=name, limit=3)
    if not hits:
        return ""
    listed = ", ".join(f'"{h.concept.name}"' for h in hits)
    return f" Closest: {listed}."


def resolve_choice(choice: EndChoice | None, current: dict | None = None) -> dict:
    """The payload endpoint for a reviewer's choice.

    A typed name is never silently made a new concept: it must name a concept (or its
    plural/singular twin), an alias, or a pending concept proposal; otherwise the reviewer
    is told the closest names and asked to pick one or choose to create it.
    """
    if choice is None:
        if current is None:
            raise ValidationFailed("Choose a concept for each end.")
        return current
    if current is not None and (
        (choice.concept_id and choice.concept_id == current.get("concept_id"))
        or (choice.proposal_id and choice.proposal_id == current.get("proposal_id"))
    ):
        return current  # left as it was
    if choice.concept_id:
        concept = Concept.objects.filter(pk=choice.concept_id).first()
        if concept is None:
            raise ValidationFailed(f"There is no concept #{choice.concept_id}.")
        if not concept.is_active:
            raise ValidationFailed(graph.inactive_words(concept))
        return {"name": concept.name, "concept_id": concept.pk, "match": "manual"}
    if choice.proposal_id:
        needed = Proposal.objects.filter(
            pk=choice.proposal_id, kind=Proposal.Kind.ADD_CONCEPT
        ).first()
        if needed is None:
            raise ValidationFailed(f"There is no concept proposal #{choice.proposal_id}.")
        if needed.concept_id and needed.status in ("accepted", "superseded"):
            return resolve_choice(EndChoice(concept_id=needed.concept_id))
        if not needed.is_open:
            raise ValidationFailed(
                f'The concept proposal "{needed.payload["name"]}" was {needed.status}.'
            )
        return {"name": needed.payload["name"], "proposal_id": needed.pk, "match": "manual"}
    name = graph_selectors.clean_name(choice.name or "")
    if not name:
        raise ValidationFailed("Each end needs a concept: type a name and pick one.")
    if len(name) > graph.NAME_MAX:
        raise ValidationFailed(f"A concept name is at most {graph.NAME_MAX} characters.")
    if current is not None and name.casefold() == current["name"].casefold():
        return current
    existing = concept_for_name(name)
    if existing is not None:
        if not existing.is_active:
            raise ValidationFailed(graph.inactive_words(existing))
        return {"name": existing.name, "concept_id": existing.pk, "match": "manual"}
    waiting = open_concept_proposal(name)
    if waiting is not None:
        return {"name": waiting.payload["name"], "proposal_id": waiting.pk, "match": "manual"}
    if not choice.create:
        raise ValidationFailed(
            f'No concept is called "{name}". Pick one of the suggestions, or choose '
            f'"Create “{name}” as a new concept".' + _suggestion_words(name)
        )
    return {"name": name, "match": "new"}


@transaction.atomic
def proposal_edit_accept(
    *, proposal_id: int, reviewer, edits: EdgeEdits, version: int | None = None, note: str = ""
) -> Outcome:
    """Correct an add_edge proposal (relation, direction, endpoints, numbers) and accept it.

    The decision keeps the proposal as it was (``before``) and as accepted (``after``);
    undoing it puts the proposal back as the agent drafted it.
    """
    proposal = _lock_open(proposal_id, version)
    if proposal.kind != Proposal.Kind.ADD_EDGE:
        raise ValidationFailed("Only edge proposals can be edited before accepting.")
    before = {
        "status": proposal.status,
        "payload": proposal.payload,
        "confidence": proposal.confidence,
    }
    payload = dict(proposal.payload)
    source = resolve_choice(edits.source, payload["source"])
    target = resolve_choice(edits.target, payload["target"])
    if edits.swap_direction:
        source, target = target, source
    payload["source"], payload["target"] = source, target
    if edits.relation:
        if not RelationType.objects.filter(key=edits.relation, active=True).exists():
            raise ValidationFailed(f'"{edits.relation}" is not an active relation.')
        payload["relation"] = edits.relation
    if edits.weight is not None:
        payload["weight"] = edits.weight
    payload = payload_validate(kind="add_edge", payload=payload)
    if edits.confidence is not None:
        if not 0.0 <= edits.confidence <= 1.0:
            raise ValidationFailed("Confidence must lie between 0 and 1.")
        proposal.confidence = edits.confidence
    changed = payload != proposal.payload or edits.confidence not in (None, before["confidence"])
    if not changed:
        out = _accept(proposal, reviewer=reviewer, batch=uuid.uuid4(), note=note)
        return _settle(out, reviewer)
    if payload != proposal.payload:
        relation_ids = None
        if payload["relation"] == proposal.relation_key and proposal.relation_id:
            relation_ids = {payload["relation"]: proposal.relation_id}
        for column, value in endpoint_columns("add_edge", payload, relation_ids).items():
            setattr(proposal, column, value)
    proposal.payload = payload
    out = _accept(
        proposal,
        reviewer=reviewer,
        batch=uuid.uuid4(),
        note=note,
        action=Decision.Action.EDIT_ACCEPT,
        before=before,
        after={"payload": payload, "confidence": proposal.confidence},
    )
    return _settle(out, reviewer)


# --- Undo -------------------------------------------------------------------------------


def _reopen(proposal: Proposal, *, restore: dict | None = None, strict: bool = True) -> bool:
    """Put a closed proposal back in the queue (as it was before an edit, if ``restore``).

    Returns False when the same change is already waiting and ``strict`` is off.
    """
    if restore and restore.get("payload"):
        proposal.payload = restore["payload"]
        if restore.get("confidence") is not None:
            proposal.confidence = restore["confidence"]
        for column, value in endpoint_columns(proposal.kind, proposal.payload).items():
            setattr(proposal, column, value)
    held = proposal.confidence < settings.KG_CONFIDENCE_GATE
    proposal.status = Proposal.Status.HELD if held else Proposal.Status.PENDING
    proposal.decided_at = None
    proposal.decided_by = None
    proposal.version += 1
    try:
        with transaction.atomic():
            proposal.save(update_fields=CLOSE_FIELDS)
    except IntegrityError:
        if not strict:
            return False
        twin = Proposal.objects.filter(
            dedup_key=proposal.dedup_key, status__in=OPEN_STATUSES
        ).first()
        raise StateConflict(
            f"Proposal #{proposal.pk} cannot go back to the queue: the same change is "
            f"already waiting as proposal #{twin.pk if twin else '?'}."
        ) from None
    if proposal.kind == Proposal.Kind.ADD_CONCEPT:
        graph.name_index_changed()
    return True


def _undo_graph(proposal: Proposal, decision: Decision, *, reviewer, undo, changes) -> None:
    """Compensate what an accepted proposal did to the graph."""
    why = f"Undone by {reviewer.get_username()} (decision #{undo.pk})."
    kind = proposal.kind
    after = decision.after or {}
    if kind == Proposal.Kind.ADD_EDGE:
        for edge in Edge.objects.filter(decision=decision):
            if not edge.is_active:
                raise StateConflict(
                    f"Edge #{edge.pk} made by this decision was {edge.status} since; "
                    "it can no longer be undone from here."
                )
            graph.edge_invalidate(edge=edge, reason=why, user=reviewer, decision=undo)
            changes.edges_gone.add(edge.pk)
        for edge_id in after.get("invalidated_edges", []):
            back = graph.edge_restore(
                edge=Edge.objects.get(pk=edge_id), user=reviewer, why=why, decision=undo
            )
            changes.edges_added.add(back.pk)
    elif kind == Proposal.Kind.ADD_CONCEPT and proposal.concept_id:
        if after.get("created", True):
            concept = graph.concept_retire(concept=proposal.concept)
            changes.unmade[concept.pk] = proposal.pk
        for alias_id in after.get("aliases_added", []):
            alias = ConceptAlias.objects.filter(pk=alias_id).first()
            if alias is not None:
                graph.concept_remove_alias(concept=proposal.concept, name=alias.name)
    elif kind == Proposal.Kind.INVALIDATE_EDGE:
        back = graph.edge_restore(
            edge=Edge.objects.get(pk=proposal.payload["edge_id"]),
            user=reviewer,
            why=why,
            decision=undo,
        )
        changes.edges_added.add(back.pk)
    elif kind == Proposal.Kind.UPDATE_EDGE:
        new = Edge.objects.filter(decision=decision).first()
        if new is None or not new.is_active:
            raise StateConflict("The updated edge changed since; it cannot be undone here.")
        old = new.supersedes
        back = graph.edge_supersede(
            edge=new,
            user=reviewer,
            why=why,
            decision=undo,
            source=old.source,
            target=old.target,
            relation=old.relation,
            confidence=old.confidence,
            weight=old.weight,
            reason=old.reason,
            evidence=graph.Evidence.of(old),
            valid_at=old.valid_at,
        )
        changes.edges_gone.add(new.pk)
        changes.edges_added.add(back.pk)
    elif kind == Proposal.Kind.ADD_RELATION_TYPE:
        relation = RelationType.objects.get(key=proposal.payload["key"])
        if relation.edges.exists():
            raise StateConflict(
                f'The relation "{relation.key}" already has edges; retire it instead.'
            )
        graph.relation_type_retire(relation=relation)
    elif kind == Proposal.Kind.MERGE_CONCEPTS:
        loser = Concept.objects.get(pk=proposal.payload["loser_id"])
        result = graph.concept_unmerge(loser=loser, user=reviewer, reason=why, decision=undo)
        changes.named.add(loser.pk)
        changes.edges_added |= {e.pk for e in result.restored}
    elif kind == Proposal.Kind.UPDATE_CONCEPT:
        _undo_update_concept(proposal, after, changes)


def _undo_update_concept(proposal: Proposal, after: dict, changes: GraphChanges) -> None:
    concept = Concept.objects.get(pk=proposal.payload["concept_id"])
    status = proposal.payload.get("status")
    if status == "retired":
        graph.concept_reactivate(concept=concept)
        changes.named.add(concept.pk)
        return
    if status == "active":
        graph.concept_retire(concept=concept)
        changes.retired.add(concept.pk)
        return
    for alias_id in after.get("aliases_removed", []):
        graph.concept_restore_alias(alias_id=alias_id)
    for alias_id in after.get("aliases_added", []):
        alias = ConceptAlias.objects.filter(pk=alias_id).first()
        if alias is not None:
            graph.concept_remove_alias(concept=concept, name=alias.name)
    if after.get("renamed_from"):
        concept, _ = graph.concept_rename(concept=concept, name=after["renamed_from"])
        if not after.get("was_alias"):
            graph.concept_remove_alias(concept=concept, name=after["renamed_to"])
    changes.named.add(concept.pk)


def _record_undo(
    decision: Decision, proposal: Proposal, *, reviewer, batch, cause, withdrawn: bool = False
) -> Decision:
    return Decision.objects.create(
        proposal=proposal,
        user=reviewer,
        action=Decision.Action.UNDO,
        note=f"Undoes {decision.get_action_display().lower()} #{decision.pk}."
        + (" The change made by hand is withdrawn." if withdrawn else ""),
        before={"status": proposal.status},
        after={"status": "superseded" if withdrawn else "pending"},
        proposal_version=proposal.version,
        undoes=decision,
        batch=batch,
        caused_by=cause,
    )


def _undo_one(
    decision: Decision, *, reviewer, batch: uuid.UUID, changes: GraphChanges, cause=None
) -> Decision | None:
    proposal = Proposal.objects.select_for_update().get(pk=decision.proposal_id)
    latest = proposal.decisions.order_by("-created_at", "-id").first()
    if decision.action == Decision.Action.SUPERSEDE:
        # A proposal settled as a consequence comes back, unless it changed since or the
        # same change is already waiting again.
        if proposal.status != Proposal.Status.SUPERSEDED or latest.pk != decision.pk:
            return None
        version = proposal.version
        if proposal.kind == Proposal.Kind.ADD_CONCEPT:
            proposal.concept = None
        if not _reopen(proposal, strict=False):
            return None
        return Decision.objects.create(
            proposal=proposal,
            user=reviewer,
            action=Decision.Action.UNDO,
            note=f"Undoes {decision.get_action_display().lower()} #{decision.pk}.",
            before={"status": Proposal.Status.SUPERSEDED},
            after={"status": proposal.status},
            proposal_version=version,
            undoes=decision,
            batch=batch,
            caused_by=cause,
        )
    if proposal.status not in (Proposal.Status.ACCEPTED, Proposal.Status.REJECTED):
        raise StateConflict(f"Proposal #{proposal.pk} is {proposal.status}; nothing to undo.")
    if latest is None or latest.pk != decision.pk:
        raise StateConflict(
            f"Proposal #{proposal.pk} was decided again since; undo the later decision."
        )
    manual = "manual" in proposal.flags and proposal.created_by_id == decision.user_id
    undo = _record_undo(
        decision, proposal, reviewer=reviewer, batch=batch, cause=cause, withdrawn=manual
    )
    if proposal.status == Proposal.Status.ACCEPTED:
        _undo_graph(proposal, decision, reviewer=reviewer, undo=undo, changes=changes)
    if proposal.status == Proposal.Status.REJECTED and proposal.kind == "add_concept":
        graph.name_index_changed()
    if manual:
        # A change made by hand is withdrawn, not put in the queue for someone to decide.
        proposal.status = Proposal.Status.SUPERSEDED
        proposal.decided_at = timezone.now()
        proposal.decided_by = reviewer
        proposal.version += 1
        proposal.save(update_fields=["status", "decided_at", "decided_by", "version", "updated_at"])
        return undo
    restore = decision.before if decision.action == Decision.Action.EDIT_ACCEPT else None
    _reopen(proposal, restore=restore)
    return undo


def _undo_order(decision: Decision) -> tuple:
    """Primary decisions first (their edges go), then the settlements, then the concepts
    accepted with them (a concept with active edges cannot be taken back); newest first."""
    concept = decision.proposal.kind == Proposal.Kind.ADD_CONCEPT and (
        decision.action in (Decision.Action.ACCEPT, Decision.Action.EDIT_ACCEPT)
    )
    settled = decision.action in (Decision.Action.SUPERSEDE, Decision.Action.RERESOLVE)
    return (2 if concept else 1 if settled else 0, -decision.pk)


@dataclass
class UndoResult:
    undone: list[Decision]
    primary: list[Decision]  # the decisions the reviewer took, as opposed to consequences
    settled: list[Decision]  # what the undo itself settled in the queue

    @property
    def first_proposal_id(self) -> int | None:
        """The proposal of the earliest primary decision: the card to show again."""
        return min(self.primary, key=lambda d: d.pk).proposal_id if self.primary else None


@transaction.atomic
def decisions_undo(*, reviewer, batch: uuid.UUID) -> UndoResult:
    """Undo every decision of one batch (a single decision, or a bulk action) by compensating.

    Only the reviewer's own recent decisions; an accepted edge is invalidated, never
    deleted; an accepted concept with no edges left is retired; a rejection goes back to
    the queue; proposals the decisions settled come back too. All or nothing: if one
    cannot be undone, none is.
    """
    decisions = list(
        Decision.objects.filter(batch=batch)
        .exclude(action__in=(Decision.Action.UNDO, Decision.Action.RERESOLVE))
        .select_related("proposal")
        .order_by("id")
    )
    primary = [d for d in decisions if d.caused_by_id is None]
    if not primary:
        raise NotFound("There is nothing to undo in that batch.")
    if any(d.user_id != reviewer.pk for d in decisions):
        raise NotAllowed("You can only undo your own decisions.")
    if Decision.objects.filter(undoes__in=decisions).exists():
        raise StateConflict("These decisions were already undone.")
    if timezone.now() - primary[0].created_at > UNDO_WINDOW:
        raise StateConflict("Decisions older than a day are changed with a new proposal.")
    undo_batch = uuid.uuid4()
    if len(primary) > 1:  # a bulk batch: undone as one set when it can be
        from . import bulk

        try:
            with transaction.atomic():
                undone, changes = bulk.bulk_undo(
                    decisions,
                    reviewer=reviewer,
                    undo_batch=undo_batch,
                    gate=settings.KG_CONFIDENCE_GATE,
                )
        except (bulk.Slow, IntegrityError):
            pass
        else:
            settled = reconcile(
                changes,
                user=reviewer,
                batch=undo_batch,
                cause=undone[0] if undone else None,
                why=f"(Settled by the undo of decision #{primary[0].pk}.)",
            )
            return UndoResult(undone=undone, primary=primary, settled=settled)
    changes = GraphChanges()
    undone: list[Decision] = []
    first: Decision | None = None
    for decision in sorted(decisions, key=_undo_order):
        # Undoing a decision the reviewer took is a decision of its own (counted as one
        # undo); undoing what came with it is caused by that.
        cause = None if decision.caused_by_id is None else first
        undo = _undo_one(
            decision, reviewer=reviewer, batch=undo_batch, changes=changes, cause=cause
        )
        if undo is not None:
            undone.append(undo)
            first = first or undo
    settled = reconcile(
        changes,
        user=reviewer,
        batch=undo_batch,
        cause=first,
        why=f"(Settled by the undo of decision #{primary[0].pk}.)",
    )
    return UndoResult(undone=undone, primary=primary, settled=settled)


@dataclass
class BatchSummary:
    """One undoable batch, named by the decision the reviewer took."""

    batch: uuid.UUID
    at: object
    primary: list[Decision]
    concepts: int  # concept proposals accepted with the primary decisions

    @property
    def first(self) -> Decision:
        return self.primary[0]

    @property
    def words(self) -> str:
        """What undoing it reverts, e.g. "accept #12 and the 2 concepts accepted with it"."""
        verb = UNDO_VERBS.get(self.first.action, self.first.action)
        if len(self.primary) > 1:
            text = f"bulk {verb} of {len(self.primary)} proposals"
        else:
            text = f"{verb} #{self.first.proposal_id}"
        if self.concepts:
            text += (
                f" and the {self.concepts} concept{'s' if self.concepts > 1 else ''} "
                f"accepted with {'them' if len(self.primary) > 1 else 'it'}"
            )
        return text


UNDO_VERBS = {"accept": "accept", "reject": "reject", "edit_accept": "edit-and-accept"}


def batch_summary(decisions: list[Decision]) -> BatchSummary | None:
    primary = sorted((d for d in decisions if d.caused_by_id is None), key=lambda d: d.pk)
    if not primary:
        return None
    return BatchSummary(
        batch=primary[0].batch,
        at=primary[0].created_at,
        primary=primary,
        concepts=sum(
            1
            for d in decisions
            if d.caused_by_id is not None and d.action == Decision.Action.ACCEPT
        ),
    )


def undoable_batches(*, reviewer, limit: int = 10) -> list[BatchSummary]:
    """The reviewer's most recent decision batches that can still be undone, newest first."""
    since = timezone.now() - UNDO_WINDOW
    recent = list(
        Decision.objects.filter(
            user=reviewer,
            created_at__gte=since,
            undone_by__isnull=True,
            caused_by__isnull=True,
            action__in=PRIMARY_ACTIONS,
        )
        .order_by("-created_at", "-id")
        .values_list("batch", flat=True)[: limit * 50]
    )
    wanted = list(dict.fromkeys(recent))[:limit]
    if not wanted:
        return []
    rows = list(
        Decision.objects.filter(batch__in=wanted)
        .exclude(action=Decision.Action.UNDO)
        .order_by("id")
    )
    by_batch: dict[uuid.UUID, list[Decision]] = {}
    for d in rows:
        by_batch.setdefault(d.batch, []).append(d)
    out = [batch_summary(by_batch.get(b, [])) for b in wanted]
    return [s for s in out if s is not None]


# --- Bulk -------------------------------------------------------------------------------

BULK_LIMIT = 1000


@dataclass
class BulkItem:
    """What a bulk decision did (or would do) to one proposal."""

    proposal_id: int
    ok: bool
    words: str = ""  # the refusal, when not ok
    also: list[tuple[int, str]] = field(default_factory=list)  # concept proposals with it
    settled: int = 0  # other proposals it settles


@dataclass
class BulkResult:
    batch: uuid.UUID
    items: list[BulkItem] = field(default_factory=list)
    extra_settled: int = 0  # proposals settled by the batch as a whole

    def accept(self, proposal_id: int, *, also=(), settled: int = 0) -> None:
        self.items.append(BulkItem(proposal_id, True, also=list(also), settled=settled))

    def refuse(self, proposal_id: int, words: str) -> None:
        self.items.append(BulkItem(proposal_id, False, words=words))

    def in_order(self, ids) -> None:
        order = {pk: i for i, pk in enumerate(ids)}
        self.items.sort(key=lambda item: order.get(item.proposal_id, len(order)))

    @property
    def done(self) -> list[int]:
        return [i.proposal_id for i in self.items if i.ok]

    @property
    def refused(self) -> list[tuple[int, str]]:
        return [(i.proposal_id, i.words) for i in self.items if not i.ok]

    @property
    def also_count(self) -> int:
        return sum(len(i.also) for i in self.items)

    @property
    def settled_count(self) -> int:
        return sum(i.settled for i in self.items) + self.extra_settled


def _one_by_one(result: BulkResult, ids, *, reviewer, action, reason_code, note) -> None:
    """Decide each proposal in its own savepoint: a refusal leaves the others alone."""
    for proposal_id in ids:
        try:
            with transaction.atomic():
                if action == "accept":
                    out = proposal_accept(
                        proposal_id=proposal_id, reviewer=reviewer, batch=result.batch, note=note
                    )
                else:
                    out = proposal_reject(
                        proposal_id=proposal_id,
                        reviewer=reviewer,
                        reason_code=reason_code,
                        note=note,
                        batch=result.batch,
                    )
        except DomainError as exc:
            result.refuse(proposal_id, str(exc))
        else:
            result.accept(
                proposal_id,
                also=[(p.pk, p.payload.get("name", "")) for p in out.also_decided],
                settled=len(out.settled),
            )


def proposals_bulk_decide(
    *,
    reviewer,
    proposal_ids: list[int],
    action: str,
    reason_code: str = "",
    note: str = "",
    dry_run: bool = False,
) -> BulkResult:
    """Accept or reject many proposals as one undoable batch.

    Edge and concept proposals are accepted, and any proposal rejected, as one set
    (``review.bulk``: a thousand in a few statements); other kinds, and any batch a
    concurrent writer raced, are decided one by one. A refusal (stale, already decided,
    not the reviewer's kind) does not stop the others; it is reported with its reason.
    With ``dry_run`` everything is applied and rolled back, which shows exactly what
    would happen, concept proposals accepted with the edges included.
    """
    from . import bulk

    if action not in ("accept", "reject"):
        raise ValidationFailed('Bulk decisions are "accept" or "reject".')
    if action == "reject" and reason_code not in REJECT_REASONS:
        raise ValidationFailed(
            f'"{reason_code}" is not a reject reason; use one of {", ".join(REJECT_REASONS)}.'
        )
    if action == "reject" and reason_code == "other" and not note.strip():
        raise ValidationFailed('Say why in a few words when the reason is "other".')
    ids = list(dict.fromkeys(proposal_ids))
    if len(ids) > BULK_LIMIT:
        raise ValidationFailed(
            f"At most {BULK_LIMIT} proposals at once; narrow the filter and repeat."
        )
    result = BulkResult(batch=uuid.uuid4())
    with transaction.atomic():
        try:
            with transaction.atomic():
                if action == "accept":
                    slow = bulk.bulk_accept(
                        reviewer=reviewer,
                        proposal_ids=ids,
                        note=note,
                        batch=result.batch,
                        result=result,
                        can_decide_kind=can_decide_kind,
                    )
                else:
                    bulk.bulk_reject(
                        reviewer=reviewer,
                        proposal_ids=ids,
                        reason_code=reason_code,
                        note=note,
                        batch=result.batch,
                        result=result,
                        can_decide_kind=can_decide_kind,
                    )
                    slow = []
        except (bulk.Slow, IntegrityError):
            result = BulkResult(batch=result.batch)
            slow = ids
        _one_by_one(
            result, slow, reviewer=reviewer, action=action, reason_code=reason_code, note=note
        )
        result.in_order(ids)
        if dry_run:
            transaction.set_rollback(True)
    return result


@transaction.atomic
def proposal_accept_over_conflicts(
    *, proposal_id: int, reviewer, version: int | None = None, note: str = ""
) -> Outcome:
    """Keep the new proposal: retire the active edges it contradicts, reject the open
    proposals it contradicts, then accept it, all in one transaction and one batch."""
    proposal = _lock_open(proposal_id, version)
    batch = uuid.uuid4()
    conflicts = proposal.payload.get("conflicts") or []
    if not conflicts:
        raise ValidationFailed(f"Proposal #{proposal.pk} contradicts nothing.")
    why = f"Contradicted by proposal #{proposal.pk}, which {reviewer.get_username()} kept."
    edge_ids = sorted({c["id"] for c in conflicts if c.get("kind") == "edge"})
    proposal_ids = sorted({c["id"] for c in conflicts if c.get("kind") == "proposal"})
    retired = []
    for edge in Edge.objects.filter(pk__in=edge_ids, status=Edge.Status.ACTIVE).order_by("pk"):
        graph.edge_invalidate(edge=edge, reason=why, user=reviewer)
        retired.append(edge.pk)
    # The accept decision lists the edges it retired, so undoing it restores them.
    out = _accept(
        proposal,
        reviewer=reviewer,
        batch=batch,
        note=note or why,
        after={"invalidated_edges": retired},
    )
    out.changes.edges_gone |= set(retired)
    for other_id in proposal_ids:
        other = Proposal.objects.filter(pk=other_id).only("status").first()
        if other is not None and other.is_open:
            inner = proposal_reject(
                proposal_id=other_id,
                reviewer=reviewer,
                reason_code="other",
                note=why,
                batch=batch,
                cause=out.decision,
            )
            out.decisions += inner.decisions
            out.changes.rejected |= inner.changes.rejected
    return _settle(out, reviewer)


@transaction.atomic
def merge_undo(*, loser_id: int, user) -> Concept:
    """Split a merged concept from the concept's page.

    When the merge came from a proposal, its acceptance is undone (the proposal goes back
    to the queue, the undo is recorded); a merge made elsewhere is undone directly. Any
    curator may do it, not only the one who merged.
    """
    loser = Concept.objects.select_for_update().filter(pk=loser_id).first()
    if loser is None:
        raise NotFound(f"There is no concept #{loser_id}.")
    if loser.status != Concept.Status.MERGED:
        raise StateConflict(f'"{loser.name}" is not merged.')
    if not is_curator(user):
        raise NotAllowed("Only curators undo merges.")
    proposal = (
        Proposal.objects.select_for_update()
        .filter(kind="merge_concepts", status=Proposal.Status.ACCEPTED, payload__loser_id=loser.pk)
        .order_by("-decided_at")
        .first()
    )
    decision = proposal.decisions.order_by("-created_at", "-id").first() if proposal else None
    if decision is None or decision.action not in (
        Decision.Action.ACCEPT,
        Decision.Action.EDIT_ACCEPT,
    ):
        graph.concept_unmerge(loser=loser, user=user)
    else:
        changes = GraphChanges()
        undo = _undo_one(decision, reviewer=user, batch=uuid.uuid4(), changes=changes)
        reconcile(changes, user=user, batch=undo.batch, cause=undo)
    loser.refresh_from_db()
    return loser
