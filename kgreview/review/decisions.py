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

from django.db import transaction
from django.utils import timezone

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
from kgreview.graph import bulk as graph_bulk
from kgreview.graph import selectors as graph_selectors
from kgreview.graph import services as graph
from kgreview.graph.models import Concept, Edge, RelationType

from .ends import (
    EndChoice,
    concept_for_name,
    open_concept_proposal,
    resolve_choice,
    retired_name_words,
)
from .models import Decision, Proposal
from .payloads import payload_validate
from .reconcile import GraphChanges, close_proposal, reconcile
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
    if proposal.document_id and proposal.evidence_revision_id:
        graph_bulk.sources_ground(
            {(proposal.document_id, cid): proposal.evidence_revision_id for cid in concept_ids}
        )


# --- Applying each kind -----------------------------------------------------------------
#
# Each apply function changes the graph for one accepted proposal, records what it did
# in ``record`` (kept in the decision's ``after``, which undo reads) and what changed in
# ``out.changes`` (which reconcile reads).


def _apply_add_concept(proposal, reviewer, decision, out: Outcome, record: dict) -> None:
    """Create the concept, or reuse the one that already answers to the name."""
    decision = decision or graph.DECIDING  # the decision is written after, in this transaction
    payload = proposal.payload
    name = payload["name"]
    concept = concept_for_name(name)
    if concept is not None and concept.status == Concept.Status.RETIRED:
        if proposal.concept_id != concept.pk:  # not this proposal's own concept coming back
            raise ProposalStale(retired_name_words(name, concept), concept_id=concept.pk)
        concept = graph.concept_reactivate(concept=concept, acting_user=reviewer, decision=decision)
        record.update(concept_id=concept.pk, created=True)
    elif concept is not None:
        added = []
        for alias in [name, *payload.get("aliases", [])]:
            if graph_selectors.name_owner(name=alias) is None:
                added.append(
                    graph.concept_add_alias(
                        concept=concept,
                        name=alias,
                        acting_user=reviewer,
                        decision=decision,
                    ).pk
                )
        record.update(concept_id=concept.pk, created=False, aliases_added=added)
        out.message = f'"{name}" was already the concept "{concept.name}"; linked to it.'
    else:
        free = [a for a in payload.get("aliases", []) if graph_selectors.name_owner(name=a) is None]
        concept = graph.concept_create(
            name=name,
            description=payload.get("description", ""),
            aliases=free,
            acting_user=reviewer,
            decision=decision,
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
    concept = graph.concept_create(
        name=endpoint["name"], acting_user=reviewer, decision=out.decision or graph.DECIDING
    )
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
        acting_user=reviewer,
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
        acting_user=reviewer,
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
        acting_user=reviewer,
        decision=decision,
    )
    out.edges.append(edge)
    out.changes.edges_gone.add(edge.pk)


def _apply_merge(proposal, reviewer, decision, out: Outcome, record: dict) -> None:
    payload = proposal.payload
    merged = graph.concept_merge(
        loser=Concept.objects.get(pk=payload["loser_id"]),
        survivor=Concept.objects.get(pk=payload["survivor_id"]),
        acting_user=reviewer,
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
    decision = decision or graph.DECIDING  # the decision is written after, in this transaction
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
        acting_user=reviewer,
        decision=decision,
    )


def _apply_update_concept(proposal, reviewer, decision, out: Outcome, record: dict) -> None:
    decision = decision or graph.DECIDING  # the decision is written after, in this transaction
    payload = proposal.payload
    concept = Concept.objects.filter(pk=payload["concept_id"]).first()
    if concept is None:
        raise ProposalStale(f"There is no concept #{payload['concept_id']}.")
    status = payload.get("status")
    if status == "retired":
        concept = graph.concept_retire(concept=concept, acting_user=reviewer, decision=decision)
        out.changes.retired.add(concept.pk)
    elif status == "active":
        concept = graph.concept_reactivate(concept=concept, acting_user=reviewer, decision=decision)
        out.changes.named.add(concept.pk)
    else:
        if payload.get("name"):
            old = concept.name
            concept, was_alias = graph.concept_rename(
                concept=concept,
                name=payload["name"],
                acting_user=reviewer,
                decision=decision,
            )
            record.update(renamed_from=old, renamed_to=concept.name, was_alias=was_alias)
        record["aliases_added"] = [
            graph.concept_add_alias(
                concept=concept,
                name=name,
                acting_user=reviewer,
                decision=decision,
            ).pk
            for name in payload.get("add_aliases", [])
        ]
        record["aliases_removed"] = [
            graph.concept_remove_alias(
                concept=concept,
                name=name,
                acting_user=reviewer,
                decision=decision,
            ).pk
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
class EdgeEdits:
    """A reviewer's corrections to an add_edge proposal before accepting it."""

    relation: str | None = None
    swap_direction: bool = False
    source: EndChoice | None = None
    target: EndChoice | None = None
    confidence: float | None = None
    weight: float | None = None


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
        # Part of the accept decision written just below, which lists these edges.
        graph.edge_invalidate(edge=edge, reason=why, acting_user=reviewer, decision=graph.DECIDING)
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
