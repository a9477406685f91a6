"""A relation type's or a concept type's guideline: Markdown a curator writes to say what
the type means and when a reviewer should accept it, shown on the review cards it
guides (rendered through ``kgreview.core.markup``, which sanitises it).

The text is judged here, once, for every path (the Ontology page, the admin, a test):
control characters (a NUL byte among them) are refused in words rather than dropped
silently, and so is a guideline longer than ``GUIDELINE_MAX``. The earlier text stays in
the curation log row (``before``), so no guideline is ever lost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction

from construction.text import without_controls
from kgreview.core.errors import ValidationFailed

from ..models import ConceptType, RelationType
from .common import audited, lock_relation, quoted

if TYPE_CHECKING:
    from django.contrib.auth.models import User

#: Characters a guideline may hold: a few pages of Markdown, never a megabyte.
GUIDELINE_MAX = 20_000


def guideline_text(text: str) -> str:
    """The guideline as it will be stored (line ends made ``\\n``, the ends trimmed), or
    a refusal in words for text that cannot be one."""
    text = (text or "").replace("\r\n", "\n").replace("\r", "\n")
    if without_controls(text) != text:
        raise ValidationFailed(
            "A guideline cannot hold control characters (a NUL byte, say); "
            "paste it again as plain text."
        )
    text = text.strip()
    if len(text) > GUIDELINE_MAX:
        raise ValidationFailed(
            f"A guideline holds at most {GUIDELINE_MAX:,} characters; this one has "
            f"{len(text):,}. Say it shorter, and link to longer notes."
        )
    return text


@transaction.atomic
def relation_type_guideline(
    *, relation: RelationType, text: str, acting_user: User
) -> RelationType:
    """Write the guideline of a relation type (empty: none). A curator's change, audited
    with the earlier text."""
    text = guideline_text(text)
    relation = lock_relation(relation)
    was = relation.guideline
    relation.guideline = text
    relation.save(update_fields=["guideline"])
    audited(
        acting_user=acting_user,
        decision=None,
        action="relation_type.guideline",
        subject=relation,
        summary=f"Wrote the guideline of the relation type {quoted(relation.label)}."
        if text
        else f"Cleared the guideline of the relation type {quoted(relation.label)}.",
        before={"guideline": was},
        after={"guideline": text},
    )
    return relation


@transaction.atomic
def concept_type_guideline(
    *, concept_type: ConceptType, text: str, acting_user: User
) -> ConceptType:
    """Write the guideline of a concept type (empty: none). A curator's change, audited
    with the earlier text."""
    text = guideline_text(text)
    concept_type = ConceptType.objects.select_for_update(no_key=True).get(pk=concept_type.pk)
    was = concept_type.guideline
    concept_type.guideline = text
    concept_type.save(update_fields=["guideline"])
    audited(
        acting_user=acting_user,
        decision=None,
        action="concept_type.guideline",
        subject=concept_type,
        summary=f"Wrote the guideline of the concept type {quoted(concept_type.label)}."
        if text
        else f"Cleared the guideline of the concept type {quoted(concept_type.label)}.",
        before={"guideline": was},
        after={"guideline": text},
    )
    return concept_type
