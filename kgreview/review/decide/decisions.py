"""Decisions on proposals: accept, reject, edit-then-accept, keep over contradictions.

Every decision is one service call in one transaction, taken by a person: each service
takes ``acting_user``, a ``User`` and never ``None`` (agents propose; only people
decide). The proposal row is locked first; its status and the version the reviewer saw
are checked before anything else, so when two reviewers decide the same proposal exactly
one wins and the other is told who decided and when. Applying a proposal re-verifies it
against the graph as it is now (through the graph services, which lock what they
change); a proposal that went stale is refused with the reason in words and nothing of
it is written. What the decision changed in the graph is then settled in the queue
(``reconcile``): twins superseded, waiting proposals re-pointed, in the same transaction
and batch, each settlement a decision caused by this one.

Locking rules. Every decision path (accept, reject, edit-accept, keep over
contradictions, a merge's accept, undo, bulk, the mend services) takes its row locks in
one order, so two decisions never wait on each other crosswise:

1. proposals, in id order, in one statement: the proposal decided, the add_concept
   proposals its edge's ends wait for, the proposals an edge it edits in names, and the
   proposals it contradicts (``services.lock_proposals``). Settling the queue afterwards
   takes only proposals nobody holds (``SKIP LOCKED``), so it waits for nothing;
2. concepts, in id order: both ends of an edge (or the concepts pending ends will be
   reused as), both concepts of a merge, together;
3. relation types, in id order (an acyclic one serialises its edges);
4. edges, in id order;
Last, taking no lock, the name journal's rows (``close_proposal`` and the graph services
ask for them; they are written once just before commit).

Steps 2 to 4 are the graph services' rules (``kgreview.graph.services``). A decision
that changes more than its own proposal's rows (keeping a proposal over what it
contradicts, undoing a batch) locks them all up front (``Kind.lock_rows``,
``graph.lock_graph``); the services then lock them again without waiting. Every public
decision service is retried whole on a deadlock or a serialization failure
(``kgreview.core.retry``), and refused with ``Busy`` in words if it still fails.

What accepting changes depends on the kind: this module locks, checks, closes and
dispatches to the proposal's kind (``kinds``), which applies it. Undo is ``undo``; many
proposals at once, ``bulk``.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import TYPE_CHECKING

from django.utils import timezone

from kgreview.core.errors import (
    ConceptNotActive,
    CycleDetected,
    CycleUnchecked,
    DomainError,
    DuplicateEdge,
    EvidenceMismatch,
    InactiveRelation,
    InactiveType,
    NameTaken,
    NotFound,
    PatternViolation,
    SelfLoop,
    StateConflict,
    ValidationFailed,
)
from kgreview.core.permissions import is_curator
from kgreview.core.retry import retried
from kgreview.graph import services as graph
from kgreview.graph.models import Edge
from kgreview.review import talk
from kgreview.review.decide.changes import GraphChanges
from kgreview.review.decide.ends import EndChoice as EndChoice  # re-exported: the edit form's ends
from kgreview.review.decide.outcome import (
    AlreadyDecided,
    NotAllowed,
    Outcome,
    ProposalStale,
    VersionChanged,
    stale,
)
from kgreview.review.decide.reconcile import reconcile
from kgreview.review.decide.settle import close_proposal
from kgreview.review.kinds import CURATOR_KINDS, kind_of
from kgreview.review.kinds.add_edge import (
    EdgeEdits as EdgeEdits,  # re-exported: an edge's corrections
)
from kgreview.review.kinds.base import Edits, Step
from kgreview.review.models import Decision, Proposal
from kgreview.review.services import endpoint_columns, lock_proposals
from kgreview.review.team import votes as team

if TYPE_CHECKING:
    from django.contrib.auth.models import User

REJECT_REASONS = {
    "wrong_direction": "Wrong direction",
    "wrong_relation": "Wrong relation",
    "not_supported_by_evidence": "Not supported by the evidence",
    "duplicate": "Duplicate",
    "too_vague": "Too vague",
    "other": "Other",
}
PRIMARY_ACTIONS = (
    Decision.Action.ACCEPT,
    Decision.Action.REJECT,
    Decision.Action.EDIT_ACCEPT,
)
UNDO_WINDOW = timedelta(hours=24)


def can_decide_kind(user, kind: str) -> bool:
    """Whether this user's role decides proposals of this kind (reviewers: not curator kinds)."""
    return kind not in CURATOR_KINDS or is_curator(user)


# --- Shared steps -----------------------------------------------------------------------


def _who(decision: Decision | None) -> str:
    if decision is None or decision.user is None:
        return "the system"
    return decision.user.get_username()


def lock_open(proposal_id: int, version: int | None, *, also=(), needed: bool = True) -> Proposal:
    """Lock the proposal and check it is still open and unchanged since it was shown.

    The concept proposals its ends wait for (unless not ``needed``: a rejection), and
    the proposals ``also`` names, are locked with it in one statement, in id order (the
    lock order's first step).
    """
    locked = lock_proposals(
        [proposal_id, *also],
        needed=needed,
        # The relation's double-review row too: whether it is doubled costs no query.
        related=("evidence_revision__source", "relation__double_review"),
    )
    proposal = locked.get(proposal_id)
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
    if (
        version is not None
        and version != proposal.version
        and not _same_meaning_since(proposal, version)
    ):
        raise VersionChanged(
            f"Proposal #{proposal.pk} changed while you were looking at it (now version "
            f"{proposal.version}{': ' + ', '.join(proposal.flags) if proposal.flags else ''}"
            "). Look again before deciding.",
            proposal_id=proposal.pk,
            version=proposal.version,
        )
    return proposal


#: What of an end of a proposal says what it means: its name. Which row it resolves to
#: (a concept, a concept proposal, how it matched) is how the queue keeps it.
_RESOLUTION = ("concept_id", "proposal_id", "match", "score", "matched_name")


def _meaning(payload) -> object:
    if isinstance(payload, dict):
        return {k: _meaning(v) for k, v in payload.items() if k not in _RESOLUTION}
    if isinstance(payload, list):
        return [_meaning(v) for v in payload]
    return payload


def _same_meaning_since(proposal: Proposal, version: int) -> bool:
    """Whether every change to the proposal since ``version`` only re-resolved it without
    changing what it says: an end that waited for a concept proposal a colleague just
    accepted now names that concept, by the same name. Deciding it as seen then decides
    the same thing, so the reviewer is not sent back to look again (seen with two
    reviewers at work at once: one accepting concepts re-pointed the other's card)."""
    changes = list(
        Decision.objects.filter(proposal=proposal, proposal_version__gte=version).values_list(
            "action", "before", "after"
        )
    )
    return bool(changes) and all(
        action == Decision.Action.RERESOLVE
        and _meaning((before or {}).get("payload")) == _meaning((after or {}).get("payload"))
        for action, before, after in changes
    )


def _require_role(proposal: Proposal, *, acting_user: User) -> None:
    if not can_decide_kind(acting_user, proposal.kind):
        raise NotAllowed(kind_of(proposal).curators_only())


def _stale(exc: DomainError) -> ProposalStale:
    return ProposalStale(stale(str(exc)), cause=exc.code)


GRAPH_REFUSALS = (
    ConceptNotActive,
    CycleDetected,
    CycleUnchecked,
    DuplicateEdge,
    EvidenceMismatch,
    InactiveRelation,
    InactiveType,
    NameTaken,
    PatternViolation,
    SelfLoop,
    ValidationFailed,
    StateConflict,
)


def accept_one(
    proposal: Proposal,
    *,
    acting_user: User,
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
    _require_role(proposal, acting_user=acting_user)
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
            acting_user=acting_user,
            status=Proposal.Status.ACCEPTED,
            action=action,
            batch=batch,
            note=note,
            before=before,
            after={**(after or {}), **record},
            cause=cause,
        )

    kind = kind_of(proposal)

    def accept_needed(needed: Proposal) -> int:
        return _accept_needed(needed, out, acting_user=acting_user)

    step = Step(
        proposal=proposal,
        acting_user=acting_user,
        decision=None,
        out=out,
        record=record,
        accept_needed=accept_needed,
    )
    try:
        if kind.decision_first:
            out.decision = step.decision = close()
            out.decisions.append(out.decision)
            kind.apply(step)
        else:
            kind.apply(step)
            out.decision = close()
            out.decisions.insert(0, out.decision)
    except ProposalStale:
        raise
    except GRAPH_REFUSALS as exc:
        raise _stale(exc) from exc
    return out


def _accept_needed(needed: Proposal, out: Outcome, *, acting_user: User) -> int:
    """Accept the open add_concept proposal an edge needs, in the edge's batch."""
    inner = accept_one(
        needed,
        acting_user=acting_user,
        batch=out.batch,
        note=f"Accepted with edge proposal #{out.proposal.pk}, which needs it.",
        cause=out.decision,
        changes=out.changes,
    )
    out.also_decided.append(needed)
    out.decisions += inner.decisions
    out.concepts += inner.concepts
    return inner.concepts[0].pk


def settle_outcome(out: Outcome, *, acting_user: User) -> Outcome:
    """Settle the queue after a top-level decision (see ``reconcile``)."""
    if out.decision is None:
        raise RuntimeError(f"Proposal #{out.proposal.pk} has no decision to settle the queue by.")
    settled = reconcile(
        out.changes,
        acting_user=acting_user,
        batch=out.batch,
        cause=out.decision,
        why=f"(Settled by decision #{out.decision.pk} on proposal #{out.proposal.pk}.)",
    )
    out.settled += settled
    out.decisions += settled
    # A card in discussion that someone decides: its discussion resolves itself, saying so
    # (``in_discussion`` came with the proposal's lock: no query for a card not in one).
    if getattr(out.proposal, "in_discussion", False):
        talk.discussions_closed_by([out.decision])
    return out


# --- Public services --------------------------------------------------------------------


@retried
def proposal_accept(
    *,
    proposal_id: int,
    acting_user: User,
    version: int | None = None,
    note: str = "",
    batch=None,
    merge_survivor: int | None = None,
) -> Outcome:
    """Accept one proposal and apply it to the graph (and the concepts it needs).

    For a merge, ``merge_survivor`` names which of the two concepts is kept: the curator
    may keep the other one than the agent suggested (the decision records both).
    """
    proposal = lock_open(proposal_id, version)
    batch = batch or uuid.uuid4()
    _require_role(proposal, acting_user=acting_user)
    ballot = team.ballot(
        proposal, acting_user=acting_user, action=Decision.Action.ACCEPT, note=note, batch=batch
    )
    if ballot.route is team.Route.WAIT:
        return _voted(proposal, ballot, batch)
    note = _ballot_note(ballot, note)
    if merge_survivor is not None:
        kept = kind_of(proposal).keep(proposal.payload, merge_survivor)
        if kept is not None:
            before = {"status": proposal.status, "payload": proposal.payload}
            proposal.payload = kept
            for column, value in endpoint_columns(proposal.kind, proposal.payload).items():
                setattr(proposal, column, value)
            out = accept_one(
                proposal,
                acting_user=acting_user,
                batch=batch,
                note=note or "Kept the other concept than the one suggested.",
                action=Decision.Action.EDIT_ACCEPT,
                before=before,
                after={"payload": proposal.payload},
            )
            return settle_outcome(out, acting_user=acting_user)
    out = accept_one(proposal, acting_user=acting_user, batch=batch, note=note)
    team.settle(ballot, out.decision)
    return settle_outcome(out, acting_user=acting_user)


def _voted(proposal: Proposal, ballot: team.Ballot, batch: uuid.UUID) -> Outcome:
    """A decision on a doubled proposal that changed nothing yet: the reviewer's vote."""
    return Outcome(proposal=proposal, decision=None, batch=batch, vote=ballot.vote)


def _ballot_note(ballot: team.Ballot, note: str) -> str:
    """The decision's note: what the double review said, then the decider's own words
    (which an agreement's words already hold)."""
    if ballot.route is team.Route.APPLY:
        return ballot.note
    if ballot.route is team.Route.ADJUDICATE and ballot.note:
        return f"{ballot.note} {note}".strip()
    return note


@retried
def proposal_reject(
    *,
    proposal_id: int,
    acting_user: User,
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
    proposal = lock_open(proposal_id, version, needed=False)
    _require_role(proposal, acting_user=acting_user)
    batch = batch or uuid.uuid4()
    ballot = team.Ballot(team.Route.DECIDE)
    if cause is None:  # a reviewer's own rejection; one a decision causes is not a vote
        ballot = team.ballot(
            proposal,
            acting_user=acting_user,
            action=Decision.Action.REJECT,
            reason_code=reason_code,
            note=note,
            batch=batch,
        )
        if ballot.route is team.Route.WAIT:
            return _voted(proposal, ballot, batch)
        note = _ballot_note(ballot, note)
    decision = close_proposal(
        proposal,
        acting_user=acting_user,
        status=Proposal.Status.REJECTED,
        action=Decision.Action.REJECT,
        batch=batch,
        reason_code=reason_code,
        note=note,
        cause=cause,
    )
    team.settle(ballot, decision)
    out = Outcome(proposal=proposal, decision=decision, batch=batch, decisions=[decision])
    if kind_of(proposal).names_a_concept:
        out.changes.rejected.add(proposal.pk)
    if cause is None:
        settle_outcome(out, acting_user=acting_user)
    return out


# --- Edit, then accept ------------------------------------------------------------------


@retried
def proposal_edit_accept(
    *,
    proposal_id: int,
    acting_user: User,
    edits: Edits | None,
    version: int | None = None,
    note: str = "",
) -> Outcome:
    """Correct a proposal (an edge's relation, direction, endpoints, numbers) and accept it.

    The decision keeps the proposal as it was (``before``) and as accepted (``after``);
    undoing it puts the proposal back as the agent drafted it.
    """
    chosen = edits.proposals_named() if edits is not None else []
    proposal = lock_open(proposal_id, version, also=chosen)
    kind = kind_of(proposal)
    before = {
        "status": proposal.status,
        "payload": proposal.payload,
        "confidence": proposal.confidence,
    }
    payload = kind.edited(proposal, edits)  # refused in words for a kind not editable
    confidence = edits.confidence if edits is not None else None
    if confidence is not None:
        if not 0.0 <= confidence <= 1.0:
            raise ValidationFailed("Confidence must lie between 0 and 1.")
        proposal.confidence = confidence
    changed = payload != proposal.payload or confidence not in (None, before["confidence"])
    _require_role(proposal, acting_user=acting_user)
    batch = uuid.uuid4()
    ballot = team.ballot(
        proposal,
        acting_user=acting_user,
        action=Decision.Action.EDIT_ACCEPT if changed else Decision.Action.ACCEPT,
        note=note,
        payload=payload,
        confidence=proposal.confidence,
        batch=batch,
    )
    if ballot.route is team.Route.WAIT:
        proposal.refresh_from_db()  # nothing of the edit is kept on the proposal: the vote has it
        return _voted(proposal, ballot, batch)
    note = _ballot_note(ballot, note)
    if not changed:
        out = accept_one(proposal, acting_user=acting_user, batch=batch, note=note)
        team.settle(ballot, out.decision)
        return settle_outcome(out, acting_user=acting_user)
    if payload != proposal.payload:
        relation_ids = None
        if payload.get("relation") == proposal.relation_key and proposal.relation_id:
            relation_ids = {payload["relation"]: proposal.relation_id}
        for column, value in endpoint_columns(proposal.kind, payload, relation_ids).items():
            setattr(proposal, column, value)
        # The lock's answer was about the fact as drafted: settling asks again.
        proposal.open_twin_id = -1  # type: ignore[attr-defined]
    proposal.payload = payload
    out = accept_one(
        proposal,
        acting_user=acting_user,
        batch=batch,
        note=note,
        action=Decision.Action.EDIT_ACCEPT,
        before=before,
        after={"payload": payload, "confidence": proposal.confidence},
    )
    team.settle(ballot, out.decision)
    return settle_outcome(out, acting_user=acting_user)


def _contradicted(payload: dict | None) -> tuple[list[int], list[int]]:
    """The edges and the proposals a payload says it contradicts, each in id order."""
    conflicts = (payload or {}).get("conflicts") or []
    edge_ids = sorted({c["id"] for c in conflicts if c.get("kind") == "edge"})
    proposal_ids = sorted({c["id"] for c in conflicts if c.get("kind") == "proposal"})
    return edge_ids, proposal_ids


@retried
def proposal_accept_over_conflicts(
    *, proposal_id: int, acting_user: User, version: int | None = None, note: str = ""
) -> Outcome:
    """Keep the new proposal: retire the active edges it contradicts, reject the open
    proposals it contradicts, then accept it, all in one transaction and one batch.

    Everything it changes is locked up front in the lock order: this proposal with the
    proposals it contradicts (and the concept proposals it needs), then the concepts
    and relation of its edge, then the edges it retires.
    """
    seen = Proposal.objects.filter(pk=proposal_id).values_list("payload", flat=True).first()
    _, others = _contradicted(seen)
    proposal = lock_open(proposal_id, version, also=others)
    batch = uuid.uuid4()
    if not proposal.payload.get("conflicts"):
        raise ValidationFailed(f"Proposal #{proposal.pk} contradicts nothing.")
    why = f"Contradicted by proposal #{proposal.pk}, which {acting_user.get_username()} kept."
    edge_ids, proposal_ids = _contradicted(proposal.payload)
    rows = kind_of(proposal).lock_rows(proposal)
    rows.edge_ids |= set(edge_ids)
    rows.lock()
    retired = []
    for edge in Edge.objects.filter(pk__in=edge_ids, status=Edge.Status.ACTIVE).order_by("pk"):
        # Part of the accept decision written just below, which lists these edges.
        graph.edge_invalidate(
            edge=edge, reason=why, acting_user=acting_user, decision=graph.DECIDING
        )
        retired.append(edge.pk)
    # The accept decision lists the edges it retired, so undoing it restores them.
    out = accept_one(
        proposal,
        acting_user=acting_user,
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
                acting_user=acting_user,
                reason_code="other",
                note=why,
                batch=batch,
                cause=out.decision,
            )
            out.decisions += inner.decisions
            out.changes.rejected |= inner.changes.rejected
    return settle_outcome(out, acting_user=acting_user)
