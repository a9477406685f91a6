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
from kgreview.review import talk
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
        self.closed: set[int] = set()  # superseded here
        # Of those, the ones whose lock said they are in discussion (or that were settled
        # without that word): only their discussions are resolved, so settling the
        # proposals nobody asked about costs no query of the discussions.
        self.discussed: set[int] = set()

    def _open(self, qs):
        """Open proposals of ``qs``, locked, skipping rows someone is deciding right now."""
        rows = (
            qs.filter(status__in=OPEN_STATUSES)
            .exclude(pk__in=self.done)
            .select_for_update(skip_locked=True, of=("self",))
            .select_related("relation__inverse")
            .annotate(in_discussion=talk.in_discussion())
            .order_by("pk")
        )
        return list(rows)

    def supersede(self, proposal: Proposal, words: str, *, concept: Concept | None = None):
        self.done.add(proposal.pk)
        self.closed.add(proposal.pk)
        if getattr(proposal, "in_discussion", True):
            self.discussed.add(proposal.pk)
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

    def repoint_all(self, moves: list[tuple[Proposal, dict[str, dict]]], words: str) -> None:
        """Give open add_edge proposals new ends (``moves``, in id order), each closed
        instead when that makes it moot: its ends one concept, its fact in the graph
        (``graph_selectors.active_edges_holding``), or the same change already waiting.

        A fixed number of statements for any number of proposals (a concept a hundred
        edge proposals waited for costs its accept no more than one did): one read of the
        edges, one of the dedup keys taken, one insert of the decisions and one update of
        the proposals; only those closed are written one by one. Decided in id order, as
        one by one: a proposal re-keyed here takes its new key from the ones after it."""
        staged: list[tuple[Proposal, dict, RelationType | None]] = []
        relations: dict[str, RelationType | None] = {}
        for proposal, ends in moves:
            self.done.add(proposal.pk)
            payload = dict(proposal.payload)
            payload.update(ends)
            src, dst = payload["source"], payload["target"]
            same = (src.get("concept_id") and src.get("concept_id") == dst.get("concept_id")) or (
                src["name"].casefold() == dst["name"].casefold()
            )
            if same:
                self.done.discard(proposal.pk)
                self.supersede(proposal, str(rules.ends_meet(src["name"])))
                continue
            payload = payload_validate(kind=proposal.kind, payload=payload)
            relation = proposal.relation
            if relation is None:
                if payload["relation"] not in relations:
                    relations[payload["relation"]] = RelationType.objects.filter(
                        key=payload["relation"]
                    ).first()
                relation = relations[payload["relation"]]
            staged.append((proposal, payload, relation))
        facts = [
            (p["source"]["concept_id"], relation, p["target"]["concept_id"])
            for _, p, relation in staged
            if relation is not None
            and p["source"].get("concept_id")
            and p["target"].get("concept_id")
        ]
        held = graph_selectors.active_edges_holding(facts)
        rekeyed: list[tuple[Proposal, dict, str, dict[str, int]]] = []
        for proposal, payload, relation in staged:
            src, dst = payload["source"], payload["target"]
            if relation is not None and src.get("concept_id") and dst.get("concept_id"):
                existing = held.get((src["concept_id"], relation.pk, dst["concept_id"]))
                if existing is not None:
                    self.done.discard(proposal.pk)
                    refusal = rules.duplicate_refusal(
                        relation,
                        src["name"],
                        dst["name"],
                        existing.pk,
                        held_relation_id=existing.relation_id,
                    )
                    self.supersede(proposal, str(refusal))
                    continue
            key = proposal_dedup_key(
                kind=proposal.kind,
                payload=payload,
                symmetric=relation.symmetric if relation is not None else False,
            )[:255]
            relation_ids = {relation.key: relation.pk} if relation is not None else {}
            rekeyed.append((proposal, payload, key, relation_ids))
        self._rekey_all(rekeyed, f"{words} {self.why}")

    def follow_edge(self, proposal: Proposal, edge: Edge) -> None:
        """Point a proposal about an edge at the newer row of the same fact."""
        self.done.add(proposal.pk)
        payload = {**proposal.payload, "edge_id": edge.pk}
        key = proposal_dedup_key(kind=proposal.kind, payload=payload)[:255]
        words = f"Edge #{edge.supersedes_id} is now edge #{edge.pk}."
        self._rekey_all([(proposal, payload, key, {})], f"{words} {self.why}")

    def _rekey_all(self, rekeyed: list[tuple[Proposal, dict, str, dict[str, int]]], note: str):
        """Give open proposals new payloads and dedup keys, each recorded as a re-resolving
        decision; a proposal whose change is already waiting, in its words or as its
        inverse twin (``Kind.twin_keys``: asked only when its relation has an inverse),
        is closed instead. One read of the keys taken, one insert, one update."""
        if not rekeyed:
            return
        wanted: dict[int, tuple[str, ...]] = {}
        for proposal, payload, key, _ in rekeyed:
            relation = proposal.relation if proposal.relation_id else None
            twins: tuple[str, ...] = ()
            if relation is not None and relation.inverse_id:
                twins = kind_of(proposal).twin_keys(payload, relation)
            wanted[proposal.pk] = (key, *twins)
        holders: dict[str, set[int]] = {}
        for pk, dedup_key in Proposal.objects.filter(
            dedup_key__in={k for ks in wanted.values() for k in ks}, status__in=OPEN_STATUSES
        ).values_list("pk", "dedup_key"):
            holders.setdefault(dedup_key, set()).add(pk)
        moving = {proposal.pk: proposal.dedup_key for proposal, *_ in rekeyed}
        written: list[Proposal] = []
        decisions: list[Decision] = []
        for proposal, payload, key, relation_ids in rekeyed:
            taken = self._taken(proposal.pk, wanted[proposal.pk], holders, moving)
            if taken is not None:
                self.done.discard(proposal.pk)
                same = "change" if taken[1] == key else "fact, stated the other way round,"
                self.supersede(
                    proposal, f"The same {same} is already waiting as proposal #{taken[0]}."
                )
                continue
            before = {
                "status": proposal.status,
                "payload": proposal.payload,
                "dedup_key": proposal.dedup_key,
            }
            for column, value in endpoint_columns(proposal.kind, payload, relation_ids).items():
                setattr(proposal, column, value)
            proposal.payload = payload
            proposal.dedup_key = key
            moving[proposal.pk] = key
            holders.setdefault(key, set()).add(proposal.pk)
            decisions.append(
                Decision(
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
            proposal.updated_at = timezone.now()
            written.append(proposal)
        if written:
            self.decisions += Decision.objects.bulk_create(decisions)
            Proposal.objects.bulk_update(written, REKEY_FIELDS)

    def _taken(
        self, pk: int, wanted: tuple[str, ...], holders: dict[str, set[int]], moving: dict[int, str]
    ) -> tuple[int, str] | None:
        """The open proposal with the lowest id, other than ``pk``, holding one of the keys
        ``wanted`` as things stand now: a proposal of the batch holds the key it was
        given (its old one until its turn), one closed here holds none."""
        found = [
            (other, key)
            for key in wanted
            for other in holders.get(key, ())
            if other != pk
            and other not in self.closed
            and (other not in moving or moving[other] == key)
        ]
        return min(found) if found else None
