"""The proposal kinds: one module each, and the registry the rest of review dispatches by.

Adding a kind: write its module (a ``Kind`` subclass, see ``base``), its template partial
``templates/review/cards/<key>.html`` (the parts row, claim, main, side and log), and one
line below; ``Proposal.KindChoice`` lists it for the database. Nothing outside this package
names a kind to branch on it: code asks the kind (its operations and flags), and code that
makes or reads proposals of one particular kind names its class's ``key``.
"""

from __future__ import annotations

from kgreview.core.errors import ValidationFailed
from kgreview.review.kinds.add_alias import AddAliasKind
from kgreview.review.kinds.add_attribute import AddAttributeKind
from kgreview.review.kinds.add_concept import AddConceptKind
from kgreview.review.kinds.add_concept_type import AddConceptTypeKind
from kgreview.review.kinds.add_edge import AddEdgeKind
from kgreview.review.kinds.add_relation_pattern import AddRelationPatternKind
from kgreview.review.kinds.add_relation_type import AddRelationTypeKind
from kgreview.review.kinds.base import Kind, Settle
from kgreview.review.kinds.invalidate_edge import InvalidateEdgeKind
from kgreview.review.kinds.merge_concepts import MergeConceptsKind
from kgreview.review.kinds.set_attribute import SetAttributeKind
from kgreview.review.kinds.set_concept_type import SetConceptTypeKind
from kgreview.review.kinds.update_concept import UpdateConceptKind
from kgreview.review.kinds.update_edge import UpdateEdgeKind
from kgreview.review.models import Proposal

KINDS: dict[str, Kind] = {
    kind.key: kind
    for kind in (
        AddConceptKind(),
        AddEdgeKind(),
        UpdateEdgeKind(),
        InvalidateEdgeKind(),
        MergeConceptsKind(),
        AddRelationTypeKind(),
        UpdateConceptKind(),
        AddAliasKind(),
        AddConceptTypeKind(),
        AddRelationPatternKind(),
        AddAttributeKind(),
        SetAttributeKind(),
        SetConceptTypeKind(),
    )
}
CURATOR_KINDS = frozenset(key for key, kind in KINDS.items() if kind.curator_only)


def settled_by(how: Settle) -> list[str]:
    """The keys of the kinds whose open proposals ``review.reconcile`` settles this way."""
    return [key for key, kind in KINDS.items() if how in kind.settled]


def naming_a_concept() -> list[str]:
    """The keys of the kinds that propose a concept by name (``Kind.names_a_concept``)."""
    return [key for key, kind in KINDS.items() if kind.names_a_concept]


def kind_of(proposal_or_key: Proposal | str) -> Kind:
    """The kind of a proposal (or of a kind key), refused in words when there is none."""
    key = proposal_or_key if isinstance(proposal_or_key, str) else proposal_or_key.kind
    kind = KINDS.get(key)
    if kind is None:
        raise ValidationFailed(f'"{key}" is not a proposal kind.')
    return kind


def payload_validate(*, kind: str, payload: object) -> dict:
    """The payload in canonical JSON form, or ``ValidationFailed`` saying what is wrong."""
    return kind_of(kind).validate(payload)
