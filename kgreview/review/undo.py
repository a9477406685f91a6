"""Undo: a batch of decisions compensated, never deleted; the queue settled again.

An accepted edge is invalidated, a concept a decision created (and that has no edges
left) is retired, an invalidation is undone by restoring the fact as a new row, a
rejection goes back to the queue, proposals the batch settled reopen. Only one's own
decisions of the last day; all or nothing. A bulk batch is undone as one set when it is
made of accepted edges and concepts and rejections; anything else one decision at a time.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Max
from django.utils import timezone

from kgreview.core.errors import NotFound, StateConflict
from kgreview.core.permissions import is_curator
from kgreview.graph import bulk as graph_bulk
from kgreview.graph import services as graph
from kgreview.graph.models import Concept, ConceptAlias, Edge, RelationType

from .decisions import PRIMARY_ACTIONS, UNDO_WINDOW, NotAllowed
from .models import OPEN_STATUSES, Decision, Proposal
from .reconcile import CLOSE_FIELDS, GraphChanges, reconcile
from .services import endpoint_columns, lock_proposals


class _OneByOne(Exception):
    """The batch cannot be undone as one set; undo it one decision at a time."""


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
            graph.edge_invalidate(edge=edge, reason=why, acting_user=reviewer, decision=undo)
            changes.edges_gone.add(edge.pk)
        for edge_id in after.get("invalidated_edges", []):
            back = graph.edge_restore(
                edge=Edge.objects.get(pk=edge_id), acting_user=reviewer, why=why, decision=undo
            )
            changes.edges_added.add(back.pk)
    elif kind == Proposal.Kind.ADD_CONCEPT and proposal.concept_id:
        if after.get("created", True):
            concept = graph.concept_retire(
                concept=proposal.concept, acting_user=reviewer, decision=undo
            )
            changes.unmade[concept.pk] = proposal.pk
        for alias_id in after.get("aliases_added", []):
            alias = ConceptAlias.objects.filter(pk=alias_id).first()
            if alias is not None:
                graph.concept_remove_alias(
                    concept=proposal.concept, name=alias.name, acting_user=reviewer, decision=undo
                )
    elif kind == Proposal.Kind.INVALIDATE_EDGE:
        back = graph.edge_restore(
            edge=Edge.objects.get(pk=proposal.payload["edge_id"]),
            acting_user=reviewer,
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
            acting_user=reviewer,
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
        graph.relation_type_retire(relation=relation, acting_user=reviewer, decision=undo)
    elif kind == Proposal.Kind.MERGE_CONCEPTS:
        loser = Concept.objects.get(pk=proposal.payload["loser_id"])
        result = graph.concept_unmerge(loser=loser, acting_user=reviewer, reason=why, decision=undo)
        changes.named.add(loser.pk)
        changes.edges_added |= {e.pk for e in result.restored}
    elif kind == Proposal.Kind.UPDATE_CONCEPT:
        _undo_update_concept(proposal, after, changes, reviewer=reviewer, undo=undo)


def _undo_update_concept(
    proposal: Proposal, after: dict, changes: GraphChanges, *, reviewer, undo
) -> None:
    concept = Concept.objects.get(pk=proposal.payload["concept_id"])
    status = proposal.payload.get("status")
    if status == "retired":
        graph.concept_reactivate(concept=concept, acting_user=reviewer, decision=undo)
        changes.named.add(concept.pk)
        return
    if status == "active":
        graph.concept_retire(concept=concept, acting_user=reviewer, decision=undo)
        changes.retired.add(concept.pk)
        return
    for alias_id in after.get("aliases_removed", []):
        graph.concept_restore_alias(alias_id=alias_id, acting_user=reviewer, decision=undo)
    for alias_id in after.get("aliases_added", []):
        alias = ConceptAlias.objects.filter(pk=alias_id).first()
        if alias is not None:
            graph.concept_remove_alias(
                concept=concept, name=alias.name, acting_user=reviewer, decision=undo
            )
    if after.get("renamed_from"):
        concept, _ = graph.concept_rename(
            concept=concept, name=after["renamed_from"], acting_user=reviewer, decision=undo
        )
        if not after.get("was_alias"):
            graph.concept_remove_alias(
                concept=concept, name=after["renamed_to"], acting_user=reviewer, decision=undo
            )
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
        try:
            with transaction.atomic():
                undone, changes = _undo_as_a_set(
                    decisions, reviewer=reviewer, undo_batch=undo_batch
                )
        except (_OneByOne, IntegrityError):
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
        graph.concept_unmerge(loser=loser, acting_user=user)
    else:
        changes = GraphChanges()
        undo = _undo_one(decision, reviewer=user, batch=uuid.uuid4(), changes=changes)
        reconcile(changes, user=user, batch=undo.batch, cause=undo)
    loser.refresh_from_db()
    return loser


# --- A bulk batch as one set -------------------------------------------------------------

UNDOABLE_AT_ONCE = {
    (Decision.Action.ACCEPT, "add_edge"),
    (Decision.Action.ACCEPT, "add_concept"),
    (Decision.Action.REJECT, None),
    (Decision.Action.SUPERSEDE, None),
}


def _undo_as_a_set(decisions: list[Decision], *, reviewer, undo_batch):
    """Undo a bulk batch as one set: its accepted edges invalidated in one statement, the
    concepts made for them retired, every proposal reopened, the undo decisions written
    in bulk. Returns (undo decisions, graph changes). Raises ``_OneByOne`` for what the
    one-by-one path must do (edits, other kinds, aliases added to reused concepts, a
    proposal that cannot go back because the same change is waiting again)."""
    gate = settings.KG_CONFIDENCE_GATE
    for d in decisions:
        kind = (d.action, d.proposal.kind)
        if kind not in UNDOABLE_AT_ONCE and (d.action, None) not in UNDOABLE_AT_ONCE:
            raise _OneByOne("a kind undone one by one")
        if d.action == Decision.Action.ACCEPT and (d.after or {}).get("aliases_added"):
            raise _OneByOne("aliases to take back")
    ids = sorted({d.proposal_id for d in decisions})
    proposals = lock_proposals(ids)
    latest = dict(
        Decision.objects.filter(proposal_id__in=ids)
        .values("proposal_id")
        .annotate(last=Max("id"))
        .values_list("proposal_id", "last")
    )
    now = timezone.now()
    doing: list[Decision] = []
    for d in decisions:
        p = proposals[d.proposal_id]
        if d.action == Decision.Action.SUPERSEDE:
            if p.status == Proposal.Status.SUPERSEDED and latest[p.pk] == d.pk:
                doing.append(d)
            continue
        if latest[p.pk] != d.pk or p.status not in ("accepted", "rejected"):
            raise StateConflict(
                f"Proposal #{p.pk} was decided again since; undo the later decision."
            )
        doing.append(d)
    accepts = [d.pk for d in doing if d.action == Decision.Action.ACCEPT]
    edges = list(Edge.objects.filter(decision_id__in=accepts))
    for edge in edges:
        if not edge.is_active:
            raise StateConflict(
                f"Edge #{edge.pk} made by this decision was {edge.status} since; "
                "it can no longer be undone from here."
            )

    # The undo decisions: one per decision the reviewer took, the rest caused by the first.
    primary = [d for d in doing if d.caused_by_id is None]
    rest = [d for d in doing if d.caused_by_id is not None]

    def undo_row(d: Decision, cause=None) -> Decision:
        p = proposals[d.proposal_id]
        return Decision(
            proposal=p,
            user=reviewer,
            action=Decision.Action.UNDO,
            note=f"Undoes {d.get_action_display().lower()} #{d.pk}.",
            before={"status": p.status},
            after={"status": "pending"},
            proposal_version=p.version,
            undoes=d,
            batch=undo_batch,
            caused_by=cause,
        )

    rows = Decision.objects.bulk_create([undo_row(d) for d in primary])
    first = rows[0] if rows else None
    rows += Decision.objects.bulk_create([undo_row(d, first) for d in rest])
    changes = GraphChanges()

    if edges:
        undo_of = {d.undoes_id: d.pk for d in rows}
        graph_bulk.edges_invalidate_many(
            {e.pk: undo_of[e.decision_id] for e in edges},
            user=reviewer,
            reason=f"Undone by {reviewer.get_username()} (the bulk undo of decision #{first.pk}).",
            at=now,
        )
        changes.edges_gone |= {e.pk for e in edges}

    # Concepts the batch made go back, with no edges left (else the undo is refused).
    made: dict[int, int] = {}
    for d in doing:
        p = proposals[d.proposal_id]
        accepted_concept = d.action == Decision.Action.ACCEPT and p.kind == "add_concept"
        if accepted_concept and p.concept_id and (d.after or {}).get("created", True):
            made[p.concept_id] = p.pk
    graph_bulk.concepts_retire_many(made, at=now)
    changes.unmade.update(made)

    # Every proposal back in the queue (held below the gate); twins lose their link.
    back = [proposals[d.proposal_id] for d in doing]
    twins = [
        p.pk
        for d, p in zip(doing, back, strict=True)
        if d.action == Decision.Action.SUPERSEDE and p.kind == "add_concept"
    ]
    common = {
        "decided_at": None,
        "decided_by": None,
        "version": F("version") + 1,
        "updated_at": now,
    }
    pks = [p.pk for p in back]
    try:
        with transaction.atomic():
            Proposal.objects.filter(pk__in=pks, confidence__lt=gate).update(
                status=Proposal.Status.HELD, **common
            )
            Proposal.objects.filter(pk__in=pks, confidence__gte=gate).update(
                status=Proposal.Status.PENDING, **common
            )
            if twins:
                Proposal.objects.filter(pk__in=twins).update(concept=None)
    except IntegrityError as exc:
        raise _OneByOne("the same change is waiting again") from exc
    if any(p.kind == "add_concept" for p in back):
        graph.name_index_changed()
    return rows, changes
