"""A curator accepts an edge that breaks its relation's pattern by widening the pattern.

The refusal of a pattern breaker is the rule book's (``graph.rules.pattern_refusal``);
a reviewer changes a type or the relation, or rejects. A curator may instead say why the
relation should allow the ends' types: that note becomes the description of a separate
``add_relation_pattern`` proposal, made by the curator and accepted by them in the same
transaction and batch (its own decision, in the decision log, undone like any), and the
edge is accepted after it. If the edge is still refused (another rule), nothing of
either is written.

Locks, in the order of ``decisions``: the edge proposal (and the concept proposals it
waits for), then its concepts and relation (``Kind.lock_rows``), then the pattern's
relation and types (``graph.pattern_create``), then the edge.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from kgreview.core.errors import ValidationFailed
from kgreview.core.permissions import is_curator
from kgreview.core.retry import retried
from kgreview.review.decide.decisions import accept_one, lock_open, settle_outcome
from kgreview.review.decide.mend import MANUAL
from kgreview.review.decide.outcome import NotAllowed, Outcome
from kgreview.review.kinds import kind_of, payload_validate
from kgreview.review.kinds.add_relation_pattern import AddRelationPatternKind
from kgreview.review.services import proposal_create, proposal_dedup_key

if TYPE_CHECKING:
    from django.contrib.auth.models import User

WIDEN = "widened"  # the pattern proposal's flag, beside ``manual``
CURATORS_WIDEN = "Only curators widen a relation's pattern; change a type or the relation instead."
SAY_WHY = (
    "Say why the relation should allow these types: the note is the new pattern's description."
)


@retried
def proposal_accept_widening(
    *, proposal_id: int, acting_user: User, note: str, version: int | None = None
) -> Outcome:
    """Accept an edge proposal that breaks its relation's pattern, allowing the pattern
    it needs first (a curator's note says why); both decisions share one batch."""
    if not is_curator(acting_user):
        raise NotAllowed(CURATORS_WIDEN)
    why = " ".join(str(note).replace("\x00", "").split())
    if not why:
        raise ValidationFailed(SAY_WHY)
    if len(why) > 2000:
        raise ValidationFailed("Keep the note under 2,000 characters.")
    proposal = lock_open(proposal_id, version)
    kind = kind_of(proposal)
    kind.lock_rows(proposal).lock()
    wanted = kind.pattern_to_widen(proposal)
    payload = payload_validate(
        kind=AddRelationPatternKind.key, payload={**wanted, "description": why}
    )
    key = proposal_dedup_key(kind=AddRelationPatternKind.key, payload=payload)
    pattern_proposal = proposal_create(
        kind=AddRelationPatternKind.key,
        payload=payload,
        confidence=1.0,
        reason=why,
        flags=[MANUAL, WIDEN],
        # Never open beyond this transaction: an agent's open twin keeps its own key.
        dedup_key=f"{key[:200]}|{WIDEN}:{uuid.uuid4().hex[:12]}",
        created_by=acting_user,
        gate=0.0,
    )
    batch = uuid.uuid4()
    widened = accept_one(pattern_proposal, acting_user=acting_user, batch=batch, note=why)
    out = accept_one(
        proposal,
        acting_user=acting_user,
        batch=batch,
        note=f"Accepted by widening the pattern (proposal #{pattern_proposal.pk}): {why}",
    )
    out.decisions = [*widened.decisions, *out.decisions]
    out.message = (
        f'The relation "{payload["relation_key"]}" now also joins {payload["domain_key"]} '
        f"to {payload['range_key']} (proposal #{pattern_proposal.pk})."
    )
    return settle_outcome(out, acting_user=acting_user)
