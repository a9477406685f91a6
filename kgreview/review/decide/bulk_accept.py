"""The bulk accept driver: lock the batch, screen it, and hand each set of proposals to
its kind's ``accept_set``; then close what the sets accepted and settle the queue once.

It never names a kind. The selection is decided in the stages its kinds declare
(``Kind.bulk_stage``, ``in_stages``): the kinds that define the vocabulary (types,
relations, patterns, attributes) first, one by one, each after what it needs of the
selection, so the sets that follow may name them; then the sets: kinds whose classes
share one ``accept_set`` are decided as one set (edges with the concept proposals they
need: ``kinds.edge_set``); a kind with none is left to the one-by-one path after them, as
is whatever a set leaves (``SetDone.slow``).

Locking, in the lock order of ``decisions``: the proposals of the batch with the concept
proposals they need, in id order, in one statement, here; the graph's rows (concepts,
relation types) in the set's ``accept_set``, in the same order; the name index last.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import BigIntegerField, Case, F, Value, When
from django.utils import timezone

from kgreview.core.errors import DomainError
from kgreview.graph import services as graph
from kgreview.review.decide.bulk_check import screen
from kgreview.review.decide.decisions import proposal_accept
from kgreview.review.decide.reconcile import reconcile
from kgreview.review.kinds import kind_of
from kgreview.review.kinds.base import Kind, SetBatch
from kgreview.review.kinds.base import Slow as Slow  # re-exported: the fall back to one by one
from kgreview.review.models import Proposal
from kgreview.review.services import lock_proposals

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def bulk_accept(*, acting_user: User, proposal_ids, note, batch, result) -> list[int]:
    """Accept the open proposals among ``proposal_ids`` set by set; returns the ids left
    for the one-by-one path, in the order asked. Runs inside the caller's transaction;
    raises ``Slow`` when a race makes the set-based writes impossible."""
    proposals = lock_proposals(proposal_ids, needed=True)
    open_ = in_stages(screen(proposal_ids, proposals, result, acting_user=acting_user))
    vocabulary = [p for p in open_ if kind_of(p).bulk_stage < 0]
    for p in vocabulary:  # before the sets that may name it
        accept_one(result, p.pk, acting_user=acting_user, batch=batch, note=note)
    sets: dict[Callable, tuple[Kind, list[Proposal]]] = {}
    for p in open_[len(vocabulary) :]:
        kind = kind_of(p)
        sets.setdefault(type(kind).accept_set, (kind, []))[1].append(p)
    slow: list[int] = []
    for kind, members in sets.values():
        done = kind.accept_set(
            SetBatch(
                acting_user=acting_user,
                asked=list(proposal_ids),
                locked=proposals,
                proposals=members,
                note=note,
                batch=batch,
                result=result,
            )
        )
        slow += done.slow
        if not done.closed:
            continue
        close_all(
            done.closed, Proposal.Status.ACCEPTED, acting_user=acting_user, linked=done.linked
        )
        first = done.first
        settled = reconcile(
            done.changes,
            acting_user=acting_user,
            batch=batch,
            cause=first,
            why=f"(Settled by the bulk accept{f' of decision #{first.pk}' if first else ''}.)",
        )
        result.extra_settled += len(settled)
    order = {pk: i for i, pk in enumerate(proposal_ids)}
    return sorted(slow, key=order.__getitem__)


def in_stages(proposals: list[Proposal]) -> list[Proposal]:
    """The proposals in the order a bulk accept decides them: by their kind's
    ``bulk_stage``, and within a stage each after the ones it needs (``bulk_needs`` of
    another's ``bulk_gives``; a type after its parent); otherwise in the order given."""
    staged = sorted(proposals, key=lambda p: kind_of(p).bulk_stage)
    giver: dict[tuple[int, str], Proposal] = {}
    for p in staged:
        kind = kind_of(p)
        for token in kind.bulk_gives(p.payload):
            giver.setdefault((kind.bulk_stage, token), p)
    if not giver:
        return staged
    out: list[Proposal] = []
    placed: set[int] = set()
    visiting: set[int] = set()

    def place(p: Proposal) -> None:
        if p.pk in placed or p.pk in visiting:  # a loop is cut where it closes
            return
        visiting.add(p.pk)
        kind = kind_of(p)
        for token in sorted(kind.bulk_needs(p.payload)):
            needed = giver.get((kind.bulk_stage, token))
            if needed is not None:
                place(needed)
        visiting.discard(p.pk)
        placed.add(p.pk)
        out.append(p)

    for p in staged:
        place(p)
    return out


def accept_one(result, proposal_id: int, *, acting_user: User, batch, note: str) -> None:
    """Accept one proposal in its own savepoint and report it: a refusal leaves the
    others alone."""
    try:
        with transaction.atomic():
            out = proposal_accept(
                proposal_id=proposal_id, acting_user=acting_user, batch=batch, note=note
            )
    except DomainError as exc:
        result.refuse(proposal_id, str(exc))
    else:
        result.accept(
            proposal_id,
            also=[(p.pk, p.payload.get("name", "")) for p in out.also_decided],
            settled=len(out.settled),
        )


def close_all(
    proposals: list[Proposal], status: str, *, acting_user: User, linked: dict | None = None
) -> None:
    """Close the (locked) proposals with one UPDATE, and say so on the objects in hand;
    ``linked`` concept proposals get the concept they now stand for in the same statement
    (one new version of each row, not two)."""
    stamp = timezone.now()
    for p in proposals:
        p.status, p.decided_at, p.decided_by = status, stamp, acting_user
        p.version += 1
        p.updated_at = stamp
    also = {}
    if linked:
        also["concept"] = Case(
            *(When(pk=pk, then=Value(cid)) for pk, cid in linked.items()),
            default=F("concept"),
            output_field=BigIntegerField(),
        )
    Proposal.objects.filter(pk__in=[p.pk for p in proposals]).update(
        status=status,
        decided_at=stamp,
        decided_by=acting_user,
        version=F("version") + 1,
        updated_at=stamp,
        **also,
    )
    graph.name_index_changed(proposals=[p.pk for p in proposals if kind_of(p).names_a_concept])
