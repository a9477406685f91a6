"""What every graph service shares: evidence, the name journal, row locks, and how a
change is attributed in the curation log.

Attribution: each state-changing service takes ``acting_user`` (the person, or ``None``
for the system's or an agent's own work) and ``decision``. A change made as part of a
decision on a proposal passes that ``Decision`` row, which is its audit row, so the
service writes no curation log entry; when the decision is written only after the change
(an accepted concept is created before the decision that records its id), the caller
passes ``DECIDING``. Any other change writes one ``AuditEntry`` in its own transaction.
The decision is only that marker here: graph rows store no review id, and which decision
made or retired an edge is review's record (``review.provenance``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.utils import timezone

from kgreview.core import audit, retry

from .. import rules, selectors
from ..models import Concept, Edge, NameChange, RelationType, SourceRevision

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

NAME_MAX = 200


class Deciding:
    """The marker for "part of a decision on a proposal, written after this change"."""

    def __repr__(self) -> str:
        return "DECIDING"


DECIDING = Deciding()


def audited(
    *,
    acting_user: User | None,
    decision,
    action: str,
    subject,
    summary: str | Callable[[], str],
    before: dict | None = None,
    after: dict | None = None,
) -> None:
    """Write the change's curation log row, unless it is part of a decision (see above).

    ``summary`` may be a function, called only when a row is written: a change made by a
    decision then pays no query for words nobody reads.
    """
    decided = decision is not None
    audit.record(
        acting_user=acting_user,
        action=action,
        subject=subject,
        summary="" if decided else summary() if callable(summary) else summary,
        before=before,
        after=after,
        decided=decided,
    )


def raise_if(refusal: Exception | None) -> None:
    """Raise the rule book's refusal, if there is one."""
    if refusal is not None:
        raise refusal


def switch_active(
    row,
    *,
    active: bool,
    acting_user: User | None,
    decision,
    action: str,
    summary: str,
    after: dict | None = None,
) -> None:
    """Put a word of the vocabulary (a relation, a concept type, an attribute, a pattern)
    in or out of use: ``active`` and ``retired_at`` saved, and the change logged as
    ``ACTION.reactivate`` or ``ACTION.retire`` with ``summary`` (``after``: what the log
    adds to the new state). The caller locked the row and checked the rules."""
    row.active = active
    row.retired_at = None if active else timezone.now()
    row.save(update_fields=["active", "retired_at"])
    audited(
        acting_user=acting_user,
        decision=decision,
        action=f"{action}.{'reactivate' if active else 'retire'}",
        subject=row,
        summary=summary,
        before={"active": not active},
        after={"active": active, **(after or {})},
    )


def quoted(name: str) -> str:
    """A name as the curation log quotes it."""
    return f"“{name}”"


def user_row(person: User | AnonymousUser | None) -> User | None:
    """The user to store in a ``*_by`` column: none for an anonymous or missing user."""
    return person if person is not None and person.is_authenticated else None


@dataclass(frozen=True)
class Evidence:
    """A verbatim quote of a source revision: ``revision.text[start:end] == quote``."""

    revision: SourceRevision
    start: int
    end: int
    quote: str

    @classmethod
    def of(cls, row) -> Evidence | None:
        """The evidence held in a row's ``evidence_*`` columns (an edge or a proposal)."""
        if row.evidence_revision_id is None:
            return None
        return cls(
            revision=row.evidence_revision,
            start=row.evidence_start,
            end=row.evidence_end,
            quote=row.evidence_quote,
        )

    @staticmethod
    def columns(evidence: Evidence | None) -> dict:
        """The ``evidence_*`` column values for a row carrying ``evidence`` (or none)."""
        return {
            "evidence_revision": evidence.revision if evidence else None,
            "evidence_start": evidence.start if evidence else None,
            "evidence_end": evidence.end if evidence else None,
            "evidence_quote": evidence.quote if evidence else "",
        }

    def parts(self) -> tuple[SourceRevision, int, int, str]:
        """(revision, start, end, quote): what the rule book's evidence rule reads."""
        return self.revision, self.start, self.end, self.quote

    def check(self) -> None:
        """Raise the rule book's refusal of evidence not quoting its revision verbatim."""
        refusal = rules.evidence_refusal(*self.parts())
        if refusal is not None:
            raise refusal


class _Journal:
    """The name journal's rows one transaction owes: touched concepts and proposals."""

    def __init__(self, concepts: Iterable[int], proposals: Iterable[int], everything: bool):
        self.concepts = {int(c) for c in concepts}
        self.proposals = {int(p) for p in proposals}
        self.everything = everything

    def merge(self, other: _Journal) -> None:
        self.concepts |= other.concepts
        self.proposals |= other.proposals
        self.everything = self.everything or other.everything

    def __call__(self) -> None:
        rows = [NameChange(concept_id=c) for c in sorted(self.concepts)]
        rows += [NameChange(proposal_id=p) for p in sorted(self.proposals)]
        if self.everything:
            rows.append(NameChange())
        NameChange.objects.bulk_create(rows, batch_size=5000)


def name_index_changed(
    *, concepts: Iterable[int] | None = None, proposals: Iterable[int] | None = None
) -> None:
    """Tell every process's name index that the names of these concepts (ids) and proposed
    concepts (add_concept proposal ids) changed: journal rows (``NameChange``) in the
    caller's transaction. Empty lists write nothing; called with neither argument, every
    index is rebuilt (a last resort for a change too wide to name).

    Inside a retried transaction the rows are put off to its end and written once, with
    every endpoint asked for on the way (``retry.once_before_commit``), so their ids are
    drawn just before the commit: a reader that saw a later id soon sees these too
    (``graph.name_index`` also re-reads ids it found missing, for a while). Elsewhere they
    are written now.
    """
    everything = concepts is None and proposals is None
    mine = _Journal(concepts or (), proposals or (), everything=everything)
    if not (everything or mine.concepts or mine.proposals):
        return
    kept = retry.once_before_commit("name-index", mine)
    if kept is not None and kept is not mine:
        kept.merge(mine)


def lock_concepts(*ids: int) -> dict[int, Concept]:
    """Lock concept rows in id order (the lock order's second step) and read them fresh."""
    rows = Concept.objects.select_for_update(no_key=True).filter(pk__in=ids).order_by("pk")
    return {c.pk: c for c in rows}


def lock_relation(relation: RelationType) -> RelationType:
    """Lock a relation row (serialising the edges of an acyclic relation) and read it fresh."""
    return RelationType.objects.select_for_update(no_key=True).get(pk=relation.pk)


def lock_relations(ids) -> None:
    """Lock relation rows in id order (``ids`` may be a query of ids)."""
    list(
        RelationType.objects.select_for_update(no_key=True)
        .filter(pk__in=ids)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def lock_graph(
    *,
    concept_ids: Iterable[int | None] = (),
    relation_ids: Iterable[int | None] = (),
    edge_ids: Iterable[int | None] = (),
) -> None:
    """Lock, in the lock order, the rows a decision will change: concepts, then relation
    types, then edges, each in id order (one statement per table, none when there are
    none). The services lock them again as they change them, which then waits for
    nothing, so locks taken later never come out of order."""
    for model, ids in ((Concept, concept_ids), (RelationType, relation_ids), (Edge, edge_ids)):
        wanted = sorted({i for i in ids if i is not None})
        if wanted:
            list(
                model.objects.select_for_update(no_key=True)
                .filter(pk__in=wanted)
                .order_by("pk")
                .values_list("pk", flat=True)
            )


def path_words(ids: Sequence[int]) -> str:
    """A chain of concepts in words: "A → B → C"."""
    names = selectors.concept_names(ids)
    return " → ".join(names.get(i, f"#{i}") for i in ids)
