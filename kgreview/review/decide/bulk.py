"""Bulk decisions: accept or reject many proposals as one undoable batch.

Rejecting is done for the whole selection at once (one locking read, the decisions in
one insert, one settling of the queue); accepting too, for the kinds that accept a set
(``bulk_accept`` hands each set to its kind's ``accept_set``). The other kinds, what a
set leaves, and any batch a concurrent writer raced go through ``decisions`` one by
one, each in its own savepoint.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.db import IntegrityError, transaction

from kgreview.core import retry
from kgreview.core.errors import DomainError, NameTaken, ValidationFailed
from kgreview.core.retry import retried
from kgreview.review.decide.bulk_accept import Slow, accept_one, bulk_accept, close_all, in_stages
from kgreview.review.decide.bulk_check import screen
from kgreview.review.decide.changes import GraphChanges
from kgreview.review.decide.decisions import REJECT_REASONS, proposal_reject
from kgreview.review.decide.reconcile import reconcile
from kgreview.review.kinds import kind_of
from kgreview.review.models import Decision, Proposal
from kgreview.review.services import lock_proposals
from kgreview.review.team import doubling

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def bulk_reject(
    *, acting_user: User, proposal_ids, reason_code: str, note: str, batch, result
) -> None:
    """Reject every open proposal of the selection the reviewer may decide, as one set."""
    proposals = lock_proposals(proposal_ids)
    open_ = screen(proposal_ids, proposals, result, acting_user=acting_user)
    if not open_:
        return
    rows = Decision.objects.bulk_create(
        [
            Decision(
                proposal=p,
                user=acting_user,
                action=Decision.Action.REJECT,
                reason_code=reason_code,
                note=note.strip(),
                before={"status": p.status},
                after={"status": "rejected"},
                proposal_version=p.version,
                batch=batch,
            )
            for p in open_
        ]
    )
    close_all(open_, Proposal.Status.REJECTED, acting_user=acting_user)
    changes = GraphChanges(rejected={p.pk for p in open_ if kind_of(p).names_a_concept})
    settled = reconcile(
        changes,
        acting_user=acting_user,
        batch=batch,
        cause=rows[0],
        why=f"(Settled by the bulk reject of decision #{rows[0].pk}.)",
    )
    for p in open_:
        result.accept(p.pk)
    result.extra_settled += len(settled)


# --- The service -------------------------------------------------------------------------

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


def _one_by_one(result: BulkResult, ids, *, acting_user: User, action, reason_code, note) -> None:
    """Decide each proposal in its own savepoint: a refusal leaves the others alone."""
    for proposal_id in ids:
        if action == "accept":
            accept_one(result, proposal_id, acting_user=acting_user, batch=result.batch, note=note)
            continue
        try:
            with transaction.atomic():
                out = proposal_reject(
                    proposal_id=proposal_id,
                    acting_user=acting_user,
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


@retried
def proposals_bulk_decide(
    *,
    acting_user: User,
    proposal_ids: list[int],
    action: str,
    reason_code: str = "",
    note: str = "",
    dry_run: bool = False,
) -> BulkResult:
    """Accept or reject many proposals as one undoable batch.

    Any proposal is rejected, and the kinds that accept a set accepted, as sets (edges
    with their concepts: a thousand in a few statements); other kinds, and any batch a
    concurrent writer raced, are decided one by one. A refusal (stale, already decided,
    not the reviewer's kind) does not stop the others; it is reported with its reason.
    With ``dry_run`` everything is applied and rolled back, which shows exactly what
    would happen, concept proposals accepted with the edges included. The whole call is
    one transaction, retried on a deadlock (``kgreview.core.retry``); it locks in the
    lock order of ``decisions``.
    """
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
    # A doubled proposal's decision is a vote (``review.team``): decided one by one, by
    # the same services as a single card, so the rule holds on this path too.
    doubled = doubling.doubled_ids(ids)
    together = [i for i in ids if i not in doubled]
    try:
        with transaction.atomic(), retry.writes_deferred():  # one name journal write
            if action == "accept":
                slow = bulk_accept(
                    acting_user=acting_user,
                    proposal_ids=together,
                    note=note,
                    batch=result.batch,
                    result=result,
                )
            else:
                bulk_reject(
                    acting_user=acting_user,
                    proposal_ids=together,
                    reason_code=reason_code,
                    note=note,
                    batch=result.batch,
                    result=result,
                )
                slow = []
    except (Slow, IntegrityError, NameTaken, ValidationFailed):
        result = BulkResult(batch=result.batch)
        slow = ids
        if action == "accept":  # the vocabulary first, as ``bulk_accept`` decides it
            found = Proposal.objects.in_bulk(ids)
            slow = [p.pk for p in in_stages([found[i] for i in ids if i in found])]
            slow += [i for i in ids if i not in found]
    slow = [*slow, *(i for i in ids if i in doubled and i not in slow)]
    _one_by_one(
        result, slow, acting_user=acting_user, action=action, reason_code=reason_code, note=note
    )
    result.in_order(ids)
    if dry_run:
        transaction.set_rollback(True)
    return result
