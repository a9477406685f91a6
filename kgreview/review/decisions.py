"""Decisions on proposals: accept, reject, edit-then-accept, undo, bulk.

Every decision is one service call in one transaction. Locking rules: the proposal row
is locked first (``select_for_update``); its status and the version the reviewer saw
are checked before anything else, so when two reviewers decide the same proposal
exactly one wins and the other is told who decided and when. Applying a proposal
re-verifies it against the graph as it is now (through the graph services, which lock
what they change); a proposal that went stale is refused with the reason in words and
nothing of it is written.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
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
from kgreview.graph import selectors as graph_selectors
from kgreview.graph import services as graph
from kgreview.graph.models import Concept, Edge, RelationType, SourceConcept

from .models import OPEN_STATUSES, Decision, Proposal
from .payloads import payload_validate
from .services import endpoint_columns

REJECT_REASONS = {
    "wrong_direction": "Wrong direction",
    "wrong_relation": "Wrong relation",
    "not_supported_by_evidence": "Not supported by the evidence",
    "duplicate": "Duplicate",
    "too_vague": "Too vague",
    "other": "Other",
}
CURATOR_KINDS = frozenset({"merge_concepts", "add_relation_type"})
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
    decision: Decision
    batch: uuid.UUID
    edges: list[Edge] = field(default_factory=list)
    concepts: list[Concept] = field(default_factory=list)
    also_decided: list[Proposal] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)  # all of this batch, first first
    message: str = ""

    def __post_init__(self) -> None:
        if not self.decisions:
            self.decisions = [self.decision]


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
        raise AlreadyDecided(
            f"Proposal #{proposal.pk} was already {proposal.status} by {_who(last)} at {when}.",
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


def _require_role(proposal: Proposal, reviewer: AbstractBaseUser) -> None:
    if proposal.kind in CURATOR_KINDS and not is_curator(reviewer):
        raise NotAllowed(f"Only curators decide {proposal.get_kind_display().lower()} proposals.")


def _close(
    proposal: Proposal,
    *,
    reviewer,
    status: str,
    action: str,
    batch: uuid.UUID,
    reason_code: str = "",
    note: str = "",
    before: dict | None = None,
    after: dict | None = None,
) -> Decision:
    now = timezone.now()
    decision = Decision.objects.create(
        proposal=proposal,
        user=reviewer,
        action=action,
        reason_code=reason_code,
        note=note.strip(),
        before=before or {"status": proposal.status},
        after={"status": status, **(after or {})},
        proposal_version=proposal.version,
        batch=batch,
    )
    proposal.status = status
    proposal.decided_at = now
    proposal.decided_by = reviewer
    proposal.version += 1
    # One UPDATE carries everything a decision may have changed (edits included).
    proposal.save(
        update_fields=[
            "status",
            "decided_at",
            "decided_by",
            "version",
            "payload",
            "confidence",
            "relation_key",
            "source_key",
            "target_key",
            "relation",
            "source_concept",
            "target_concept",
            "concept",
            "updated_at",
        ]
    )
    if proposal.kind == Proposal.Kind.ADD_CONCEPT:
        graph.name_index_changed()
    return decision


def _stale(exc: DomainError) -> ProposalStale:
    return ProposalStale(f"Cannot apply it as it stands: {exc}", cause=exc.code)


# --- Applying each kind -----------------------------------------------------------------


def _apply_add_concept(proposal: Proposal, reviewer, decision: Decision, out: Outcome) -> None:
    payload = proposal.payload
    name = payload["name"]
    owner = graph_selectors.name_owner(name=name)
    if owner is not None:
        concept = owner.concept
        earlier = Proposal.objects.filter(concept=concept, kind="add_concept").exists()
        if concept.status == Concept.Status.RETIRED and earlier:
            concept = graph.concept_reactivate(concept=concept)
        else:
            raise ProposalStale(
                f'"{name}" already names the concept "{concept.name}" (#{concept.pk}); '
                "reject this proposal as a duplicate, or edit the edges that need it.",
                concept_id=concept.pk,
            )
    else:
        free = [a for a in payload.get("aliases", []) if graph_selectors.name_owner(name=a) is None]
        concept = graph.concept_create(
            name=name, description=payload.get("description", ""), aliases=free
        )
    proposal.concept = concept
    _ground(proposal, [concept.pk])
    out.concepts.append(concept)


def _endpoint(endpoint: dict, reviewer, batch: uuid.UUID, out: Outcome) -> int:
    """The id of the concept an endpoint stands for now, accepting its concept proposal
    if it is still pending. A known concept costs no query here: the edge service locks
    and checks it (merged or retired ends are refused there, with the survivor named)."""
    if endpoint.get("concept_id"):
        return endpoint["concept_id"]
    if endpoint.get("proposal_id"):
        needed = Proposal.objects.select_for_update().filter(pk=endpoint["proposal_id"]).first()
        if needed is None:
            raise ProposalStale(f'The proposal for "{endpoint["name"]}" no longer exists.')
        if needed.status == Proposal.Status.ACCEPTED and needed.concept_id:
            concept = needed.concept
            if concept.status == Concept.Status.MERGED:
                concept = concept.merged_into
            return concept.pk
        if needed.is_open:
            inner = _accept(
                needed,
                reviewer=reviewer,
                batch=batch,
                note=f"Accepted with edge proposal #{out.proposal.pk}, which needs it.",
            )
            out.also_decided.append(needed)
            out.decisions += inner.decisions
            out.concepts += inner.concepts
            return inner.concepts[0].pk
        raise ProposalStale(
            f'The concept "{endpoint["name"]}" was {needed.status} (proposal #{needed.pk}); '
            "edit the proposal to use another concept, or reject it."
        )
    existing = graph_selectors.concept_by_name(name=endpoint["name"])
    if existing is not None and existing.is_active:
        return existing.pk
    concept = graph.concept_create(name=endpoint["name"])
    out.concepts.append(concept)
    return concept.pk


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


def _apply_add_edge(proposal: Proposal, reviewer, decision: Decision, out: Outcome) -> None:
    payload = proposal.payload
    source_id = _endpoint(payload["source"], reviewer, out.batch, out)
    target_id = _endpoint(payload["target"], reviewer, out.batch, out)
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


def _apply_update_edge(proposal: Proposal, reviewer, decision: Decision, out: Outcome) -> None:
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


def _apply_invalidate_edge(proposal: Proposal, reviewer, decision: Decision, out: Outcome) -> None:
    edge = _locked_edge(proposal.payload["edge_id"])
    graph.edge_invalidate(
        edge=edge,
        reason=proposal.reason or "Invalidated by a reviewer.",
        user=reviewer,
        decision=decision,
    )
    out.edges.append(edge)


def _apply_merge(proposal: Proposal, reviewer, decision: Decision, out: Outcome) -> None:
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


def _apply_relation_type(proposal: Proposal, reviewer, decision: Decision, out: Outcome) -> None:
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
}
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
) -> Outcome:
    """Apply a locked, open proposal. Runs inside the caller's transaction."""
    _require_role(proposal, reviewer)
    decision = _close(
        proposal,
        reviewer=reviewer,
        status=Proposal.Status.ACCEPTED,
        action=action,
        batch=batch,
        note=note,
        before=before,
        after=after,
    )
    out = Outcome(proposal=proposal, decision=decision, batch=batch)
    # No savepoint: a refusal propagates and the caller's transaction rolls back whole.
    try:
        APPLY[proposal.kind](proposal, reviewer, decision, out)
    except ProposalStale:
        raise
    except GRAPH_REFUSALS as exc:
        raise _stale(exc) from exc
    if proposal.concept_id:
        proposal.save(update_fields=["concept"])
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
            return _accept(
                proposal,
                reviewer=reviewer,
                batch=batch or uuid.uuid4(),
                note=note or "Kept the other concept than the one suggested.",
                action=Decision.Action.EDIT_ACCEPT,
                before=before,
                after={"payload": proposal.payload},
            )
    return _accept(proposal, reviewer=reviewer, batch=batch or uuid.uuid4(), note=note)


@transaction.atomic
def proposal_reject(
    *,
    proposal_id: int,
    reviewer,
    reason_code: str,
    note: str = "",
    version: int | None = None,
    batch=None,
) -> Outcome:
    """Reject a proposal with a typed reason; ``other`` needs words."""
    if reason_code not in REJECT_REASONS:
        raise ValidationFailed(
            f'"{reason_code}" is not a reject reason; use one of {", ".join(REJECT_REASONS)}.'
        )
    if reason_code == "other" and not note.strip():
        raise ValidationFailed('Say why in a few words when the reason is "other".')
    proposal = _lock_open(proposal_id, version)
    _require_role(proposal, reviewer)
    batch = batch or uuid.uuid4()
    decision = _close(
        proposal,
        reviewer=reviewer,
        status=Proposal.Status.REJECTED,
        action=Decision.Action.REJECT,
        batch=batch,
        reason_code=reason_code,
        note=note,
    )
    return Outcome(proposal=proposal, decision=decision, batch=batch)


@dataclass(frozen=True)
class EdgeEdits:
    """A reviewer's corrections to an add_edge proposal before accepting it."""

    relation: str | None = None
    swap_direction: bool = False
    source_concept_id: int | None = None
    target_concept_id: int | None = None
    source_name: str | None = None
    target_name: str | None = None
    confidence: float | None = None
    weight: float | None = None


def _edited_endpoint(current: dict, concept_id: int | None, name: str | None) -> dict:
    if concept_id:
        concept = Concept.objects.filter(pk=concept_id).first()
        if concept is None:
            raise ValidationFailed(f"There is no concept #{concept_id}.")
        return {"name": concept.name, "concept_id": concept.pk, "match": "manual"}
    if name and name.strip():
        existing = graph_selectors.concept_by_name(name=name)
        if existing is not None and existing.is_active:
            return {"name": existing.name, "concept_id": existing.pk, "match": "manual"}
        return {"name": graph_selectors.clean_name(name), "match": "new"}
    return current


@transaction.atomic
def proposal_edit_accept(
    *, proposal_id: int, reviewer, edits: EdgeEdits, version: int | None = None, note: str = ""
) -> Outcome:
    """Correct an add_edge proposal (relation, direction, endpoints, numbers) and accept it.

    The decision keeps the proposal as it was (``before``) and as accepted (``after``).
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
    source = _edited_endpoint(payload["source"], edits.source_concept_id, edits.source_name)
    target = _edited_endpoint(payload["target"], edits.target_concept_id, edits.target_name)
    if edits.swap_direction:
        source, target = target, source
    payload["source"], payload["target"] = source, target
    if edits.relation:
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
        return _accept(proposal, reviewer=reviewer, batch=uuid.uuid4(), note=note)
    if payload != proposal.payload:
        relation_ids = None
        if payload["relation"] == proposal.relation_key and proposal.relation_id:
            relation_ids = {payload["relation"]: proposal.relation_id}
        for column, value in endpoint_columns("add_edge", payload, relation_ids).items():
            setattr(proposal, column, value)
    proposal.payload = payload
    return _accept(
        proposal,
        reviewer=reviewer,
        batch=uuid.uuid4(),
        note=note,
        action=Decision.Action.EDIT_ACCEPT,
        before=before,
        after={"payload": payload, "confidence": proposal.confidence},
    )


# --- Undo -------------------------------------------------------------------------------


def _reopen(proposal: Proposal) -> None:
    held = proposal.confidence < settings.KG_CONFIDENCE_GATE
    proposal.status = Proposal.Status.HELD if held else Proposal.Status.PENDING
    proposal.decided_at = None
    proposal.decided_by = None
    proposal.version += 1
    try:
        with transaction.atomic():
            proposal.save(
                update_fields=["status", "decided_at", "decided_by", "version", "updated_at"]
            )
    except IntegrityError:
        twin = Proposal.objects.filter(
            dedup_key=proposal.dedup_key, status__in=OPEN_STATUSES
        ).first()
        raise StateConflict(
            f"Proposal #{proposal.pk} cannot go back to the queue: the same change is "
            f"already waiting as proposal #{twin.pk if twin else '?'}."
        ) from None
    if proposal.kind == Proposal.Kind.ADD_CONCEPT:
        graph.name_index_changed()


def _undo_one(decision: Decision, *, reviewer, batch: uuid.UUID) -> Decision:
    proposal = Proposal.objects.select_for_update().get(pk=decision.proposal_id)
    if proposal.status not in (Proposal.Status.ACCEPTED, Proposal.Status.REJECTED):
        raise StateConflict(f"Proposal #{proposal.pk} is {proposal.status}; nothing to undo.")
    latest = proposal.decisions.order_by("-created_at", "-id").first()
    if latest is None or latest.pk != decision.pk:
        raise StateConflict(
            f"Proposal #{proposal.pk} was decided again since; undo the later decision."
        )
    undo = Decision.objects.create(
        proposal=proposal,
        user=reviewer,
        action=Decision.Action.UNDO,
        note=f"Undoes {decision.get_action_display().lower()} #{decision.pk}.",
        before={"status": proposal.status},
        after={"status": "pending"},
        proposal_version=proposal.version,
        undoes=decision,
        batch=batch,
    )
    why = f"Undone by {reviewer.get_username()} (decision #{undo.pk})."
    if proposal.status == Proposal.Status.ACCEPTED:
        kind = proposal.kind
        if kind == Proposal.Kind.ADD_EDGE:
            for edge in Edge.objects.filter(decision=decision):
                if not edge.is_active:
                    raise StateConflict(
                        f"Edge #{edge.pk} made by this decision was {edge.status} since; "
                        "it can no longer be undone from here."
                    )
                graph.edge_invalidate(edge=edge, reason=why, user=reviewer, decision=undo)
            for edge_id in decision.after.get("invalidated_edges", []):
                graph.edge_restore(
                    edge=Edge.objects.get(pk=edge_id), user=reviewer, why=why, decision=undo
                )
        elif kind == Proposal.Kind.ADD_CONCEPT and proposal.concept_id:
            graph.concept_retire(concept=proposal.concept)
        elif kind == Proposal.Kind.INVALIDATE_EDGE:
            graph.edge_restore(
                edge=Edge.objects.get(pk=proposal.payload["edge_id"]),
                user=reviewer,
                why=why,
                decision=undo,
            )
        elif kind == Proposal.Kind.UPDATE_EDGE:
            new = Edge.objects.filter(decision=decision).first()
            if new is None or not new.is_active:
                raise StateConflict("The updated edge changed since; it cannot be undone here.")
            old = new.supersedes
            graph.edge_supersede(
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
        elif kind == Proposal.Kind.ADD_RELATION_TYPE:
            relation = RelationType.objects.get(key=proposal.payload["key"])
            if relation.edges.exists():
                raise StateConflict(
                    f'The relation "{relation.key}" already has edges; retire it instead.'
                )
            graph.relation_type_retire(relation=relation)
        elif kind == Proposal.Kind.MERGE_CONCEPTS:
            graph.concept_unmerge(
                loser=Concept.objects.get(pk=proposal.payload["loser_id"]),
                user=reviewer,
                reason=why,
                decision=undo,
            )
    _reopen(proposal)
    return undo


@transaction.atomic
def decisions_undo(*, reviewer, batch: uuid.UUID) -> list[Decision]:
    """Undo every decision of one batch (a single decision, or a bulk action) by compensating.

    Only the reviewer's own recent decisions; an accepted edge is invalidated, never
    deleted; an accepted concept with no edges left is retired; a rejection goes back to
    the queue. All or nothing: if one cannot be undone, none is.
    """
    decisions = list(
        Decision.objects.filter(batch=batch)
        .exclude(action=Decision.Action.UNDO)
        .select_related("proposal")
        .order_by("-created_at", "-id")
    )
    if not decisions:
        raise NotFound("There is nothing to undo in that batch.")
    if any(d.user_id != reviewer.pk for d in decisions):
        raise NotAllowed("You can only undo your own decisions.")
    if Decision.objects.filter(undoes__in=decisions).exists():
        raise StateConflict("These decisions were already undone.")
    if timezone.now() - decisions[-1].created_at > UNDO_WINDOW:
        raise StateConflict("Decisions older than a day are changed with a new proposal.")
    undo_batch = uuid.uuid4()
    # Edges first, then the concepts they used: a concept with edges cannot be retired.
    decisions.sort(key=lambda d: d.proposal.kind == Proposal.Kind.ADD_CONCEPT)
    return [_undo_one(d, reviewer=reviewer, batch=undo_batch) for d in decisions]


def undoable_batches(*, reviewer, limit: int = 10) -> list[dict]:
    """The reviewer's most recent decision batches that can still be undone."""
    since = timezone.now() - UNDO_WINDOW
    rows = (
        Decision.objects.filter(user=reviewer, created_at__gte=since, undone_by__isnull=True)
        .exclude(action=Decision.Action.UNDO)
        .select_related("proposal")
        .order_by("-created_at", "-id")[: limit * 20]
    )
    batches: dict[uuid.UUID, dict] = {}
    for d in rows:
        entry = batches.setdefault(d.batch, {"batch": d.batch, "at": d.created_at, "decisions": []})
        entry["decisions"].append(d)
        if len(batches) > limit:
            break
    return list(batches.values())[:limit]


# --- Bulk -------------------------------------------------------------------------------

BULK_LIMIT = 1000


@dataclass
class BulkResult:
    batch: uuid.UUID
    done: list[int] = field(default_factory=list)
    refused: list[tuple[int, str]] = field(default_factory=list)


class _DryRun(Exception):
    pass


def proposals_bulk_decide(
    *,
    reviewer,
    proposal_ids: list[int],
    action: str,
    reason_code: str = "",
    note: str = "",
    dry_run: bool = False,
) -> BulkResult:
    """Accept or reject many proposals, each in its own transaction, as one undoable batch.

    A refusal (stale, already decided) does not stop the others; it is reported with
    its reason. With ``dry_run`` every decision is applied and rolled back, which shows
    exactly what would happen.
    """
    if action not in ("accept", "reject"):
        raise ValidationFailed('Bulk decisions are "accept" or "reject".')
    if len(proposal_ids) > BULK_LIMIT:
        raise ValidationFailed(
            f"At most {BULK_LIMIT} proposals at once; narrow the filter and repeat."
        )
    result = BulkResult(batch=uuid.uuid4())
    for proposal_id in proposal_ids:
        try:
            with transaction.atomic():
                if action == "accept":
                    proposal_accept(
                        proposal_id=proposal_id, reviewer=reviewer, batch=result.batch, note=note
                    )
                else:
                    proposal_reject(
                        proposal_id=proposal_id,
                        reviewer=reviewer,
                        reason_code=reason_code,
                        note=note,
                        batch=result.batch,
                    )
                if dry_run:
                    raise _DryRun
        except _DryRun:
            result.done.append(proposal_id)
        except DomainError as exc:
            result.refused.append((proposal_id, str(exc)))
        else:
            result.done.append(proposal_id)
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
    retired: list[int] = []
    seen: set[tuple[str, int]] = set()
    for conflict in conflicts:
        key = (conflict.get("kind"), conflict.get("id"))
        if key in seen:
            continue
        seen.add(key)
        if conflict.get("kind") == "edge":
            edge = Edge.objects.filter(pk=conflict["id"]).first()
            if edge is not None and edge.is_active:
                graph.edge_invalidate(edge=edge, reason=why, user=reviewer)
                retired.append(edge.pk)
        elif conflict.get("kind") == "proposal":
            other = Proposal.objects.filter(pk=conflict["id"]).first()
            if other is not None and other.is_open:
                proposal_reject(
                    proposal_id=other.pk,
                    reviewer=reviewer,
                    reason_code="other",
                    note=why,
                    batch=batch,
                )
    # The accept decision lists the edges it retired, so undoing it restores them.
    return _accept(
        proposal,
        reviewer=reviewer,
        batch=batch,
        note=note or why,
        after={"invalidated_edges": retired},
    )


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
        _undo_one(decision, reviewer=user, batch=uuid.uuid4())
    loser.refresh_from_db()
    return loser
