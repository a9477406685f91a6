"""Closing a proposal with its decision, and settling one open proposal: superseding it,
re-pointing an edge proposal's ends, following an edge to its newer row. ``reconcile``
decides which proposals to settle; this says how.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from django.utils import timezone

from kgreview.graph import rules
from kgreview.graph import selectors as graph_selectors
from kgreview.graph import services as graph_services
from kgreview.graph.models import Concept, Edge, RelationType
from kgreview.review.kinds import kind_of, payload_validate
from kgreview.review.models import OPEN_STATUSES, Decision, Proposal
from kgreview.review.services import endpoint_columns, proposal_dedup_key

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# --- Closing a proposal -----------------------------------------------------------------

# The columns a proposal's payload decides (its keys and the rows its ends resolve to),
# saved again whenever the payload changes.
KEY_FIELDS = [
    "payload",
    "dedup_key",
    "relation_key",
    "source_key",
    "target_key",
    "relation",
    "source_concept",
    "target_concept",
]
CLOSE_FIELDS = [
    "status",
    "decided_at",
    "decided_by",
    "confidence",
    "concept",
    *KEY_FIELDS,
    "version",
    "updated_at",
]
REKEY_FIELDS = [*KEY_FIELDS, "version", "updated_at"]


def close_proposal(
    proposal: Proposal,
    *,
    acting_user: User,
    status: str,
    action: str,
    batch: uuid.UUID,
    reason_code: str = "",
    note: str = "",
    before: dict | None = None,
    after: dict | None = None,
    cause: Decision | None = None,
) -> Decision:
    """Record the decision and close the (locked) proposal in one UPDATE."""
    decision = Decision.objects.create(
        proposal=proposal,
        user=acting_user,
        action=action,
        reason_code=reason_code,
        note=note.replace("\x00", "").strip(),  # PostgreSQL text cannot hold NUL
        before=before or {"status": proposal.status},
        after={"status": status, **(after or {})},
        proposal_version=proposal.version,
        batch=batch,
        caused_by=cause,
    )
    proposal.status = status
    proposal.decided_at = timezone.now()
    proposal.decided_by = acting_user
    proposal.version += 1
    proposal.save(update_fields=CLOSE_FIELDS)
    if kind_of(proposal).names_a_concept:  # its name no longer stands for a proposed concept
        graph_services.name_index_changed(proposals=[proposal.pk])
    return decision


class Settler:
    """Settles open proposals for one action: each settlement a decision in its batch,
    caused by its decision; ``done`` are the proposals settled (or being decided)."""

    def __init__(
        self, *, acting_user: User, batch: uuid.UUID, cause: Decision | None, why: str
    ) -> None:
        self.acting_user = acting_user
        self.batch = batch
        self.cause = cause
        self.why = why
        self.decisions: list[Decision] = []
        self.done: set[int] = set()

    def _open(self, qs):
        """Open proposals of ``qs``, locked, skipping rows someone is deciding right now."""
        rows = (
            qs.filter(status__in=OPEN_STATUSES)
            .exclude(pk__in=self.done)
            .select_for_update(skip_locked=True, of=("self",))
            .select_related("relation")
            .order_by("pk")
        )
        return list(rows)

    def supersede(self, proposal: Proposal, words: str, *, concept: Concept | None = None):
        self.done.add(proposal.pk)
        if concept is not None and kind_of(proposal).names_a_concept:
            proposal.concept = concept
        after: dict[str, str | int] = {"superseded_because": words}
        if concept is not None:
            after["concept_id"] = concept.pk
        self.decisions.append(
            close_proposal(
                proposal,
                acting_user=self.acting_user,
                status=Proposal.Status.SUPERSEDED,
                action=Decision.Action.SUPERSEDE,
                batch=self.batch,
                note=f"{words} {self.why}".strip(),
                after=after,
                cause=self.cause,
            )
        )

    def repoint(self, proposal: Proposal, ends: dict[str, dict], words: str) -> None:
        """Give an open add_edge proposal new ends; close it if that makes it moot."""
        self.done.add(proposal.pk)
        payload = dict(proposal.payload)
        for role, endpoint in ends.items():
            payload[role] = endpoint
        src, dst = payload["source"], payload["target"]
        same = (src.get("concept_id") and src.get("concept_id") == dst.get("concept_id")) or (
            src["name"].casefold() == dst["name"].casefold()
        )
        if same:
            self.done.discard(proposal.pk)
            self.supersede(proposal, str(rules.ends_meet(src["name"])))
            return
        payload = payload_validate(kind=proposal.kind, payload=payload)
        relation = proposal.relation or RelationType.objects.filter(key=payload["relation"]).first()
        if relation is not None and src.get("concept_id") and dst.get("concept_id"):
            existing = graph_selectors.active_edge_between(
                source_id=src["concept_id"], target_id=dst["concept_id"], relation=relation
            )
            if existing is not None:
                self.done.discard(proposal.pk)
                refusal = rules.duplicate_refusal(relation, src["name"], dst["name"], existing.pk)
                self.supersede(proposal, str(refusal))
                return
        key = proposal_dedup_key(
            kind=proposal.kind,
            payload=payload,
            symmetric=relation.symmetric if relation is not None else False,
        )[:255]
        relation_ids = {relation.key: relation.pk} if relation is not None else {}
        self._rekey(proposal, payload, key, f"{words} {self.why}", relation_ids)

    def follow_edge(self, proposal: Proposal, edge: Edge) -> None:
        """Point a proposal about an edge at the newer row of the same fact."""
        self.done.add(proposal.pk)
        payload = {**proposal.payload, "edge_id": edge.pk}
        key = proposal_dedup_key(kind=proposal.kind, payload=payload)[:255]
        words = f"Edge #{edge.supersedes_id} is now edge #{edge.pk}."
        self._rekey(proposal, payload, key, f"{words} {self.why}")

    def _rekey(self, proposal: Proposal, payload: dict, key: str, note: str, relation_ids=None):
        """Give an open proposal a new payload and dedup key, recorded as a re-resolving
        decision; if the same change is already waiting, close this one instead."""
        taken = (
            Proposal.objects.filter(dedup_key=key, status__in=OPEN_STATUSES)
            .exclude(pk=proposal.pk)
            .values_list("pk", flat=True)
            .first()
        )
        if taken is not None:
            self.done.discard(proposal.pk)
            self.supersede(proposal, f"The same change is already waiting as proposal #{taken}.")
            return
        before = {
            "status": proposal.status,
            "payload": proposal.payload,
            "dedup_key": proposal.dedup_key,
        }
        for column, value in endpoint_columns(proposal.kind, payload, relation_ids).items():
            setattr(proposal, column, value)
        proposal.payload = payload
        proposal.dedup_key = key
        self.decisions.append(
            Decision.objects.create(
                proposal=proposal,
                user=self.acting_user,
                action=Decision.Action.RERESOLVE,
                note=note.strip(),
                before=before,
                after={"status": proposal.status, "payload": payload, "dedup_key": key},
                proposal_version=proposal.version,
                batch=self.batch,
                caused_by=self.cause,
            )
        )
        proposal.version += 1
        proposal.save(update_fields=REKEY_FIELDS)
