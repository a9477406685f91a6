"""Undo: a batch of decisions compensated, never deleted; the queue settled again.

What an acceptance changed in the graph is compensated by its kind (``kinds``: an
accepted edge is invalidated, a concept a decision created and that has no edges left is
retired, an invalidation is undone by restoring the fact as a new row); a rejection goes
back to the queue, proposals the batch settled reopen. Only one's own decisions of the
last day; all or nothing. A bulk batch is undone as one set when it can be
(``undo_set``); anything else one decision at a time.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q, Subquery
from django.utils import timezone

from kgreview.core.errors import NotFound, StateConflict
from kgreview.core.permissions import is_curator
from kgreview.core.retry import retried
from kgreview.graph import services as graph
from kgreview.graph.models import Concept, Edge
from kgreview.review.decide.changes import GraphChanges
from kgreview.review.decide.decisions import PRIMARY_ACTIONS, UNDO_WINDOW
from kgreview.review.decide.outcome import NotAllowed
from kgreview.review.decide.reconcile import reconcile
from kgreview.review.decide.settle import CLOSE_FIELDS
from kgreview.review.decide.undo_set import OneByOne, undo_as_a_set
from kgreview.review.kinds import kind_of
from kgreview.review.kinds.base import LockRows, UndoStep, rows_named
from kgreview.review.kinds.merge_concepts import MergeConceptsKind, unmerged
from kgreview.review.models import OPEN_STATUSES, Decision, Proposal, Vote
from kgreview.review.services import endpoint_columns, lock_proposals
from kgreview.review.team import votes as team_votes

if TYPE_CHECKING:
    from django.contrib.auth.models import User


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
    if kind_of(proposal).names_a_concept:
        graph.name_index_changed(proposals=[proposal.pk])
    return True


def _record_undo(
    decision: Decision,
    proposal: Proposal,
    *,
    acting_user: User,
    batch,
    cause,
    withdrawn: bool = False,
) -> Decision:
    return Decision.objects.create(
        proposal=proposal,
        user=acting_user,
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
    decision: Decision,
    *,
    acting_user: User,
    batch: uuid.UUID,
    changes: GraphChanges,
    cause=None,
) -> Decision | None:
    proposal = Proposal.objects.select_for_update(no_key=True).get(pk=decision.proposal_id)
    latest = proposal.decisions.order_by("-created_at", "-id").first()
    if decision.action == Decision.Action.SUPERSEDE:
        # A proposal settled as a consequence comes back, unless it changed since or the
        # same change is already waiting again.
        if proposal.status != Proposal.Status.SUPERSEDED or latest.pk != decision.pk:
            return None
        version = proposal.version
        if kind_of(proposal).names_a_concept:
            proposal.concept = None
        if not _reopen(proposal, strict=False):
            return None
        return Decision.objects.create(
            proposal=proposal,
            user=acting_user,
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
        decision, proposal, acting_user=acting_user, batch=batch, cause=cause, withdrawn=manual
    )
    kind = kind_of(proposal)
    if proposal.status == Proposal.Status.ACCEPTED:
        kind.undo(
            UndoStep(
                proposal=proposal,
                decision=decision,
                acting_user=acting_user,
                undo=undo,
                changes=changes,
            )
        )
    if manual:
        # A change made by hand is withdrawn, not put in the queue for someone to decide.
        proposal.status = Proposal.Status.SUPERSEDED
        proposal.decided_at = timezone.now()
        proposal.decided_by = acting_user
        proposal.version += 1
        proposal.save(update_fields=["status", "decided_at", "decided_by", "version", "updated_at"])
        return undo
    restore = decision.before if decision.action == Decision.Action.EDIT_ACCEPT else None
    _reopen(proposal, restore=restore)
    return undo


def _undo_order(decision: Decision) -> tuple:
    """Primary decisions first (their edges go), then the settlements, then the concepts
    accepted with them (a concept with active edges cannot be taken back), then the
    vocabulary a bulk accept decided before them (``Kind.bulk_stage``: the attributes and
    patterns, the relations, the types; a subtype before its parent); newest first."""
    kind = kind_of(decision.proposal)
    accepted = decision.action in (Decision.Action.ACCEPT, Decision.Action.EDIT_ACCEPT)
    if accepted and kind.bulk_stage < 0:
        return (3, -kind.bulk_stage, -decision.pk)
    concept = kind.names_a_concept and accepted
    settled = decision.action in (Decision.Action.SUPERSEDE, Decision.Action.RERESOLVE)
    return (2 if concept else 1 if settled else 0, 0, -decision.pk)


@dataclass
class UndoResult:
    undone: list[Decision]
    # The decisions the reviewer took, as opposed to consequences (or the votes withdrawn).
    primary: list[Decision] | list[Vote]
    settled: list[Decision]  # what the undo itself settled in the queue

    @property
    def first_proposal_id(self) -> int | None:
        """The proposal of the earliest primary decision: the card to show again."""
        if not self.primary:
            return None
        return min((d.pk, d.proposal_id) for d in self.primary)[1]


def _lock_undo(decisions: list[Decision]) -> dict[int, Proposal]:
    """Lock up front, in the lock order (see ``decisions``), every row undoing the batch
    changes, and return its proposals: the proposals in id order; then the concepts they
    name and both ends of every edge the undo retires or brings back (the edges its
    acceptances made, the rows those replaced, the edges it retired or names); then the
    acyclic relations of those edges; then the edges."""
    proposals = lock_proposals(sorted({d.proposal_id for d in decisions}))
    rows = LockRows()
    for p in proposals.values():
        rows.add(rows_named(kind_of(p), p))
    for d in decisions:
        rows.edge_ids |= {i for i in (d.after or {}).get("invalidated_edges", []) if i}
    edges = Edge.objects.filter(
        Q(provenance__decision__in=[d.pk for d in decisions]) | Q(pk__in=rows.edge_ids)
    ).values_list(
        "pk",
        "source_id",
        "target_id",
        "relation_id",
        "relation__acyclic",
        "supersedes_id",
        "supersedes__source_id",
        "supersedes__target_id",
    )
    rows.relation_ids = set()  # only an acyclic relation is locked, as its edges do
    for pk, source, target, relation, acyclic, older, older_source, older_target in edges:
        rows.edge_ids |= {pk} | ({older} if older else set())
        rows.concept_ids |= {source, target} | {i for i in (older_source, older_target) if i}
        if acyclic:
            rows.relation_ids.add(relation)
    rows.lock()
    return proposals


@retried
def decisions_undo(*, acting_user: User, batch: uuid.UUID) -> UndoResult:
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
        # A vote on a doubled proposal (``review.team``) is undone by withdrawing it.
        withdrawn = team_votes.withdraw(acting_user=acting_user, batch=batch)
        return UndoResult(undone=[], primary=withdrawn, settled=[])
    if any(d.user_id != acting_user.pk for d in decisions):
        raise NotAllowed("You can only undo your own decisions.")
    if Decision.objects.filter(undoes__in=decisions).exists():
        raise StateConflict("These decisions were already undone.")
    if timezone.now() - primary[0].created_at > UNDO_WINDOW:
        raise StateConflict("Decisions older than a day are changed with a new proposal.")
    proposals = _lock_undo(decisions)
    # A bulk decision's doubled proposals were votes (``review.team``): taken back too.
    team_votes.withdraw(acting_user=acting_user, batch=batch, quietly=True)
    undo_batch = uuid.uuid4()
    if len(primary) > 1:  # a bulk batch: undone as one set when it can be
        try:
            with transaction.atomic():
                undone, changes = undo_as_a_set(
                    decisions, proposals, acting_user=acting_user, undo_batch=undo_batch
                )
        except (OneByOne, IntegrityError):
            pass
        else:
            settled = reconcile(
                changes,
                acting_user=acting_user,
                batch=undo_batch,
                cause=undone[0] if undone else None,
                why=f"(Settled by the undo of decision #{primary[0].pk}.)",
            )
            return UndoResult(undone=undone, primary=primary, settled=settled)
    changes = GraphChanges()
    undone = []
    first: Decision | None = None
    for decision in sorted(decisions, key=_undo_order):
        # Undoing a decision the reviewer took is a decision of its own (counted as one
        # undo); undoing what came with it is caused by that.
        cause = None if decision.caused_by_id is None else first
        undo = _undo_one(
            decision, acting_user=acting_user, batch=undo_batch, changes=changes, cause=cause
        )
        if undo is not None:
            undone.append(undo)
            first = first or undo
    settled = reconcile(
        changes,
        acting_user=acting_user,
        batch=undo_batch,
        cause=first,
        why=f"(Settled by the undo of decision #{primary[0].pk}.)",
    )
    return UndoResult(undone=undone, primary=primary, settled=settled)


@dataclass
class BatchSummary:
    """One undoable batch, named by the decision the reviewer took."""

    batch: uuid.UUID
    at: datetime
    # The decisions the reviewer took; or the one vote, for a vote not settled yet.
    primary: list[Decision] | list[Vote]
    concepts: int  # concept proposals accepted with the primary decisions

    @property
    def first(self) -> Decision | Vote:
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


def vote_summary(vote) -> BatchSummary:
    """A vote (double review's decision) as the undo bar names it, like a decision."""
    return BatchSummary(batch=vote.batch, at=vote.created_at, primary=[vote], concepts=0)


def outcome_summary(outcome) -> BatchSummary | None:
    """What undoing a decision's outcome reverts: its batch, or the vote it was."""
    if outcome.vote is not None:
        return vote_summary(outcome.vote)
    return batch_summary(outcome.decisions)


def undoable_batches(*, user: User, limit: int = 10) -> list[BatchSummary]:
    """The user's most recent decision batches that can still be undone, newest first,
    with their newest vote not yet settled (double review's decisions, ``review.team``).

    It only reads (what this user could undo), so it takes ``user``, not ``acting_user``.
    """
    batches = _decision_batches(user=user, limit=limit)
    vote = team_votes.newest_open_vote(user)
    if vote is None:
        return batches
    merged = sorted([*batches, vote_summary(vote)], key=lambda b: b.at, reverse=True)
    return merged[:limit]


def _decision_batches(*, user: User, limit: int) -> list[BatchSummary]:
    since = timezone.now() - UNDO_WINDOW
    recent = Decision.objects.filter(
        user=user,
        created_at__gte=since,
        undone_by__isnull=True,
        caused_by__isnull=True,
        action__in=PRIMARY_ACTIONS,
    ).order_by("-created_at", "-id")
    if limit == 1:
        # The newest batch only (every card shows it): one query, its rows read at once.
        rows = list(
            Decision.objects.filter(batch=Subquery(recent.values("batch")[:1]))
            .exclude(action=Decision.Action.UNDO)
            .order_by("id")
        )
        wanted = [rows[0].batch] if rows else []
    else:
        batches = recent.values_list("batch", flat=True)[: limit * 50]
        wanted = list(dict.fromkeys(batches))[:limit]
        rows = list(
            Decision.objects.filter(batch__in=wanted)
            .exclude(action=Decision.Action.UNDO)
            .order_by("id")
        )
    if not wanted:
        return []
    by_batch: dict[uuid.UUID, list[Decision]] = {}
    for d in rows:
        by_batch.setdefault(d.batch, []).append(d)
    out = [batch_summary(by_batch.get(b, [])) for b in wanted]
    return [s for s in out if s is not None]


@retried
def merge_undo(*, loser_id: int, acting_user: User) -> Concept:
    """Split a merged concept from the concept's page.

    When the merge came from a proposal, its acceptance is undone (the proposal goes back
    to the queue, the undo is recorded); a merge made elsewhere is undone directly. Any
    curator may do it, not only the one who merged. Locks in the lock order: the merge's
    proposal, then both concepts.
    """
    seen = Concept.objects.filter(pk=loser_id).first()
    if seen is None:
        raise NotFound(f"There is no concept #{loser_id}.")
    if seen.status != Concept.Status.MERGED:
        raise StateConflict(f'"{seen.name}" is not merged.')
    if not is_curator(acting_user):
        raise NotAllowed("Only curators undo merges.")
    found = (
        Proposal.objects.filter(
            kind=MergeConceptsKind.key, status=Proposal.Status.ACCEPTED, payload__loser_id=loser_id
        )
        .order_by("-decided_at")
        .values_list("pk", flat=True)
        .first()
    )
    proposal = lock_proposals([found]).get(found) if found else None
    if proposal is not None and proposal.status != Proposal.Status.ACCEPTED:
        proposal = None  # undone meanwhile: a merge still there was made again elsewhere
    loser = graph.lock_concepts(loser_id, seen.merged_into_id)[loser_id]
    if loser.status != Concept.Status.MERGED:
        raise StateConflict(f'"{loser.name}" is not merged.')
    decision = proposal.decisions.order_by("-created_at", "-id").first() if proposal else None
    if decision is None or decision.action not in (
        Decision.Action.ACCEPT,
        Decision.Action.EDIT_ACCEPT,
    ):
        unmerged(graph.concept_unmerge(loser=loser, acting_user=acting_user), decision=None)
    else:
        changes = GraphChanges()
        batch = uuid.uuid4()
        undo = _undo_one(decision, acting_user=acting_user, batch=batch, changes=changes)
        reconcile(changes, acting_user=acting_user, batch=batch, cause=undo)
    loser.refresh_from_db()
    return loser
