"""Which proposals double review sends to two reviewers, blind.

A proposal is doubled when it is already in double review (``Proposal.stage``), when its
relation's agreement is under ``KG_DOUBLE_REVIEW_BELOW`` (every proposal of a relation
people cannot agree on), or when it falls in its relation's share: the curator's share for
that relation type (``DoubleReview``), else ``KG_DOUBLE_REVIEW_SHARE``. The share is drawn
by a stable hash of the proposal's id, so the same proposal is always in or out whoever
decides it and however often the page is loaded, and nobody can tell from the card.

Left out: the kinds only curators decide (an ontology change is a curator's call), and a
proposal that contradicts the graph (keeping it over what it contradicts retires edges:
its one reviewer sees both sides on the card and decides).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction

from kgreview.core import audit
from kgreview.core.errors import ValidationFailed
from kgreview.graph.models import RelationType
from kgreview.review import agreement
from kgreview.review.kinds import CURATOR_KINDS
from kgreview.review.models import DoubleReview, Proposal

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def global_share() -> float:
    return float(settings.KG_DOUBLE_REVIEW_SHARE)


def _settings_of(proposal: Proposal) -> DoubleReview | None:
    """The relation's double-review row, read with the proposal when the decision locked
    it (``decisions.lock_open`` joins it: no query of its own)."""
    relation = proposal.relation if proposal.relation_id else None
    if relation is None:
        return None
    try:
        return relation.double_review
    except DoubleReview.DoesNotExist:
        return None


def shares() -> dict[int, DoubleReview]:
    """Every relation's double-review row, by relation type id."""
    return {row.relation_id: row for row in DoubleReview.objects.all()}


def _doubled(pk: int, kind: str, stage: str, payload, row: DoubleReview | None) -> bool:
    if stage:
        return True
    if kind in CURATOR_KINDS or (payload or {}).get("conflicts"):
        return False
    if row is not None and row.low_agreement:
        return True
    share = row.share if row is not None and row.share is not None else global_share()
    return drawn(pk, share)


def drawn(proposal_id: int, share: float) -> bool:
    """Whether the proposal falls in a share: a stable draw from its id."""
    if share <= 0.0:
        return False
    if share >= 1.0:
        return True
    digest = hashlib.blake2b(f"double-review:{proposal_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64 < share


def doubled(proposal: Proposal) -> bool:
    """Whether two reviewers decide this proposal (see the module's words)."""
    return _doubled(
        proposal.pk, proposal.kind, proposal.stage, proposal.payload, _settings_of(proposal)
    )


def doubled_ids(ids) -> set[int]:
    """Which of these proposals are doubled, read at once (a bulk decision's)."""
    rows = Proposal.objects.filter(pk__in=list(ids)).values_list(
        "pk", "kind", "stage", "payload", "relation_id"
    )
    own = shares()
    return {
        pk
        for pk, kind, stage, payload, relation_id in rows
        if _doubled(pk, kind, stage, payload, own.get(relation_id))
    }


def refresh_agreement(proposal: Proposal) -> None:
    """After a doubled proposal was settled or disputed: whether its relation's reviewers
    now agree too little (``agreement.is_low``: alpha under ``KG_DOUBLE_REVIEW_BELOW`` over
    at least ``agreement.MIN_ITEMS`` proposals), kept on the relation's row for every
    decision to read without a query."""
    relation_id = proposal.relation_id
    if relation_id is None or not proposal.relation_key:
        return
    low = agreement.relation_low(proposal.relation_key, float(settings.KG_DOUBLE_REVIEW_BELOW))
    row = DoubleReview.objects.filter(relation_id=relation_id).first()
    if row is None:
        if low:
            DoubleReview.objects.create(relation_id=relation_id, share=None, low_agreement=True)
    elif row.low_agreement != low:
        DoubleReview.objects.filter(relation_id=relation_id).update(low_agreement=low)


@transaction.atomic
def set_share(*, relation: RelationType, share: float | None, acting_user: User) -> float:
    """Set a relation type's share, or with ``None`` let it follow the default again."""
    if share is not None and not 0.0 <= share <= 1.0:
        raise ValidationFailed("The double-review share is a number between 0 and 1.")
    row = DoubleReview.objects.filter(relation=relation).first()
    before = row.share if row is not None and row.share is not None else global_share()
    DoubleReview.objects.update_or_create(relation=relation, defaults={"share": share})
    now = share if share is not None else global_share()
    audit.record(
        acting_user=acting_user,
        action="relation_type.double_review",
        subject=relation,
        summary=f"{relation.key}: double review {before:.0%} → "
        f"{now:.0%}{'' if share is not None else ' (the default)'}",
        before={"share": before},
        after={"share": share},
    )
    return now
