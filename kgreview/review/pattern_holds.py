"""Letting go the proposals held for breaking a relation's pattern, once they fit.

Verify holds a candidate whose ends' types break its relation's patterns (the flag
``pattern_violation``, ``construction.verify``); it is never dropped. When the ontology
grows (a pattern allowed, a type added) the agents call ``release_pattern_holds``: each
held edge proposal so flagged is asked the card's blockers again (the rule book's
pattern refusal, ``review.decide.blockers``), and one that fits now loses the flag and
goes back to the queue (held still if it is below the confidence gate). The agents' own
work: no audit row, as for flagging a contradiction; the version is bumped so a card
looked at before says it changed.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction
from django.utils import timezone

from kgreview.review.decide.blockers import open_proposal_blockers
from kgreview.review.kinds.add_edge import AddEdgeKind
from kgreview.review.kinds.base import BlockerReads
from kgreview.review.models import Proposal
from kgreview.review.services import PATTERN_FLAG, flags_text


@transaction.atomic
def release_pattern_holds(*, relation_keys: Iterable[str] | None = None) -> list[int]:
    """Release the held proposals flagged ``pattern_violation`` (of ``relation_keys``'
    relations, or of any) whose ends now fit their relation's patterns; returns their
    ids. Locks them in id order; a proposal decided meanwhile is left alone."""
    held = Proposal.objects.select_for_update(no_key=True).filter(
        status=Proposal.Status.HELD, flags_text__contains=f"|{PATTERN_FLAG}|"
    )
    if relation_keys is not None:
        held = held.filter(relation_key__in=list(relation_keys))
    proposals = list(held.order_by("pk"))
    if not proposals:
        return []
    now = timezone.now()
    reads = BlockerReads()
    open_proposal_blockers(proposals, reads=reads)
    released = []
    for p in proposals:
        if p.pk in reads.pattern_refused:
            continue
        flags = sorted(set(p.flags) - {PATTERN_FLAG})
        p.flags, p.flags_text = flags, flags_text(flags)
        if "below_gate" not in flags:
            p.status = Proposal.Status.PENDING
        p.version += 1
        p.updated_at = now
        released.append(p)
    Proposal.objects.bulk_update(
        released, ["flags", "flags_text", "status", "version", "updated_at"]
    )
    return [p.pk for p in released]


@transaction.atomic
def hold_pattern_breakers(*, relation_keys: Iterable[str] | None = None) -> list[int]:
    """The other way round: an edge proposal queued before its relation had a pattern
    (drafted before the types existed, say) that breaks the patterns now is held with
    the flag, as verify would have held it, instead of waiting in the queue for an
    acceptance every reviewer is refused; ``release_pattern_holds`` lets it go when it
    fits. Returns their ids; the agents' own work, like the release."""
    pending = Proposal.objects.select_for_update(no_key=True).filter(
        status=Proposal.Status.PENDING, kind=AddEdgeKind.key
    )
    if relation_keys is not None:
        pending = pending.filter(relation_key__in=list(relation_keys))
    proposals = list(pending.order_by("pk"))
    if not proposals:
        return []
    now = timezone.now()
    reads = BlockerReads()
    open_proposal_blockers(proposals, reads=reads)
    held = []
    for p in proposals:
        if p.pk not in reads.pattern_refused:
            continue
        flags = sorted(set(p.flags) | {PATTERN_FLAG})
        p.flags, p.flags_text = flags, flags_text(flags)
        p.status = Proposal.Status.HELD
        p.version += 1
        p.updated_at = now
        held.append(p)
    Proposal.objects.bulk_update(held, ["flags", "flags_text", "status", "version", "updated_at"])
    return [p.pk for p in held]
