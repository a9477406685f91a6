"""add_edge: a fact between two concepts, with the quote that states it.

Each end is a known concept, an open add_concept proposal (accepted with the edge), or a
bare name. Accepting it adds the edge; undoing it invalidates the edge and restores the
edges it retired as contradictions. A reviewer may correct it before accepting.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import Field, model_validator

from construction import keys
from kgreview.core.errors import (
    DomainError,
    InactiveRelation,
    PatternViolation,
    SelfLoop,
    StateConflict,
    ValidationFailed,
)
from kgreview.graph import pattern_book, rules
from kgreview.graph import selectors as graph_selectors
from kgreview.graph import services as graph
from kgreview.graph.models import Concept, Edge, RelationType
from kgreview.review import provenance
from kgreview.review.decide.ends import (
    EndChoice,
    concept_for_name,
    open_concept_proposal,
    resolve_choice,
    same_end,
)
from kgreview.review.decide.outcome import ProposalStale
from kgreview.review.kinds.base import (
    NOT_EDITABLE,
    BlockerReads,
    Kind,
    LockRows,
    Rows,
    Settle,
    Step,
    UndoStep,
    grounds_of,
)
from kgreview.review.kinds.edge_set import accept_edges_and_concepts
from kgreview.review.kinds.edge_set_check import end_gone_words
from kgreview.review.models import OPEN_STATUSES, Proposal
from kgreview.review.payloads import Name, Offset, RelationKey, RowId, Score, Strict, Weight
from kgreview.review.workspace.card_parts import evidence_context, neighbours_and_fact

ROLES = ("source", "target")


class Endpoint(Strict):
    """One end of a proposed edge and how the agent resolved its name."""

    name: Name
    concept_id: RowId | None = None
    proposal_id: RowId | None = Field(
        default=None, description="The open add_concept proposal this endpoint waits for."
    )
    match: Literal["exact", "alias", "fuzzy", "new", "manual"] = "new"
    score: Score | None = None
    matched_name: str | None = None

    @model_validator(mode="after")
    def _resolved_consistently(self) -> Endpoint:
        if self.match == "new" and self.concept_id is not None:
            raise ValueError("a new concept cannot already have a concept_id")
        if self.match in {"exact", "alias", "fuzzy"} and (
            self.concept_id is None and self.proposal_id is None
        ):
            raise ValueError(
                f"a {self.match} match must name the concept_id (or the open add_concept "
                "proposal_id) it matched"
            )
        if self.match == "fuzzy" and self.score is None:
            raise ValueError("a fuzzy match must carry its score")
        return self


class Support(Strict):
    """Another place in the evidence's revision that states the same edge."""

    start: Offset
    end: Offset = Field(gt=0)
    quote: str = Field(min_length=1, max_length=5000)


class AddEdge(Strict):
    source: Endpoint
    target: Endpoint
    relation: RelationKey
    weight: Weight = 1.0
    valid_at: datetime | None = None
    conflicts: list[dict] = Field(
        default_factory=list, description="Edges or proposals this one contradicts."
    )
    support: list[Support] = Field(
        default_factory=list,
        max_length=10,
        description="Further places in the same revision that state this edge.",
    )

    @model_validator(mode="after")
    def _not_a_self_loop(self) -> AddEdge:
        if same_end(self.source.model_dump(), self.target.model_dump()):
            raise ValueError(str(rules.self_loop_named(self.source.name)))
        return self


@dataclass(frozen=True)
class EdgeEdits:
    """A reviewer's corrections to an add_edge proposal before accepting it."""

    relation: str | None = None
    swap_direction: bool = False
    source: EndChoice | None = None
    target: EndChoice | None = None
    confidence: float | None = None
    weight: float | None = None

    def proposals_named(self) -> list[int]:
        """The concept proposals chosen for the ends."""
        return [end.proposal_id for end in (self.source, self.target) if end and end.proposal_id]


def endpoint_key(endpoint: dict) -> str:
    """An end as a node key: "c<id>" for a concept, "n:<name key>" for a new name."""
    if endpoint.get("concept_id"):
        return keys.concept_key(endpoint["concept_id"])
    return keys.new_concept_key(endpoint["name"])


def _end_blocker(role: str, end: dict, concepts: dict, needed: dict) -> str:
    """What keeps an end from standing for an active concept, in the refusal's words."""
    refusal = None
    if end.get("concept_id"):
        refusal = rules.end_refusal(concepts.get(end["concept_id"]), end["concept_id"])
    elif end.get("proposal_id"):
        p = needed.get(end["proposal_id"])
        if p is None:
            return f'The proposal for its {role} "{end["name"]}" does not exist.'
        if p.is_open:
            return ""
        if not p.concept_id:
            return end_gone_words(end["name"], p)
        concept = concepts.get(p.concept_id) or Concept.objects.get(pk=p.concept_id)
        refusal = rules.end_refusal(concept)
    return str(refusal) if refusal is not None else ""


def typed_ends(
    payload: dict, ends: dict, concepts: dict[int, Concept], needed: dict, book
) -> list[tuple[str, int | None]] | None:
    """Each end's name and type as accepting would give it: a concept's type, or the
    type an open concept proposal gives the concept it makes; None when an end is a bare
    name, resolved only when the edge is accepted."""
    typed = []
    for role in ROLES:
        end = payload[role]
        cid = ends.get(role)
        concept = concepts.get(cid) if cid else None
        if concept is not None:
            typed.append((concept.name, concept.type_id))
        elif end.get("proposal_id") in needed:
            wanted = needed[end["proposal_id"]].payload
            typed.append((wanted["name"], book.type_id(wanted.get("type_key", ""))))
        else:
            return None
    return typed


def _pattern_blocker(payload: dict, relation: RelationType, ends: dict, reads: BlockerReads):
    """The rule book's pattern refusal of the edge as it stands, or None."""
    typed = typed_ends(payload, ends, reads.concepts, reads.needed, reads.patterns)
    if typed is None:
        return None
    (source, source_type), (target, target_type) = typed
    return reads.patterns.refusal(relation, source, source_type, target, target_type)


def _active(concept: Concept) -> int:
    """The id of a concept an end stands for, refused in the rule book's words unless it
    is active."""
    refusal = rules.end_refusal(concept)
    if refusal is not None:
        raise ProposalStale(str(refusal), concept_id=concept.pk)
    return concept.pk


def _concept_of(endpoint: dict, step: Step) -> int:
    """The id of the concept an edge proposal's end stands for now.

    One rule for every path (accept, edit-accept, bulk, keep over contradictions): a
    known concept is used as it is (the edge service locks it and refuses a merged or
    retired one in words); a pending concept proposal is accepted with the edge; an
    accepted or superseded one stands for its concept; a rejected one stands for the
    concept that now answers to its name, if any; a bare name (an explicit new concept
    from an edit) reuses the concept or open proposal for that name, else is created.
    """
    if endpoint.get("concept_id"):
        return endpoint["concept_id"]
    if endpoint.get("proposal_id"):
        needed = (
            Proposal.objects.select_for_update(no_key=True)
            .filter(pk=endpoint["proposal_id"])
            .first()
        )
        if needed is None:
            raise ProposalStale(f'The proposal for "{endpoint["name"]}" no longer exists.')
        if needed.is_open:
            return step.accept_needed(needed)
        concept = needed.concept if needed.concept_id else None
        if concept is None:
            owner = graph_selectors.name_owner(name=needed.payload["name"])
            concept = owner.concept if owner is not None else None
        if concept is not None:
            return _active(concept)
        raise ProposalStale(end_gone_words(endpoint["name"], needed))
    existing = concept_for_name(endpoint["name"])
    if existing is not None:
        return _active(existing)
    waiting = open_concept_proposal(endpoint["name"])
    if waiting is not None:
        waiting = Proposal.objects.select_for_update(no_key=True).get(pk=waiting.pk)
        if waiting.is_open:
            return step.accept_needed(waiting)
    concept = graph.concept_create(
        name=endpoint["name"], acting_user=step.acting_user, decision=step.audit_row
    )
    step.out.concepts.append(concept)
    step.out.changes.named.add(concept.pk)
    return concept.pk


class AddEdgeKind(Kind):
    key = "add_edge"
    schema = AddEdge
    decision_first = True
    editable = True
    edit_form = "kgreview.review.workspace.forms.EdgeEditForm"
    edit_hint = "to use another concept or relation"
    keeps_conflicts = True
    decided_as_a_set = True
    settled = frozenset({Settle.ENDS})
    # Decided as one set with the concept proposals the edges need (``edge_set``).
    accept_set = accept_edges_and_concepts

    def columns(self, payload: dict, rows: Rows) -> dict:
        """The relation and ends as keys and as links, so contradictions and queue
        filters are plain indexed lookups."""
        return {
            "relation_key": payload["relation"],
            "source_key": endpoint_key(payload["source"]),
            "target_key": endpoint_key(payload["target"]),
            "relation_id": rows.relation_id(payload["relation"]),
            "source_concept_id": payload["source"].get("concept_id"),
            "target_concept_id": payload["target"].get("concept_id"),
        }

    def twin_keys(self, payload: dict, relation: RelationType | None = None) -> tuple[str, ...]:
        """The dedup keys of the other proposals stating the same fact (its inverse twin:
        ``construction.keys.edge_dedup_keys``); none when its relation has no inverse.
        ``relation``: its row with ``inverse`` selected, when the caller has it."""
        if relation is None:
            relation = (
                RelationType.objects.select_related("inverse")
                .filter(key=payload["relation"])
                .first()
            )
        if relation is None or not relation.inverse_id:
            return ()
        return keys.edge_dedup_keys(
            endpoint_key(payload["source"]),
            relation.key,
            endpoint_key(payload["target"]),
            symmetric=False,
            inverse=rules.inverse_key(relation),
        )[1:]

    def open_twin(self, proposal: Proposal) -> Proposal | None:
        """The open proposal stating the same fact as this one's inverse twin, if any
        (one query, only when its relation has an inverse; the queue refuses a new twin,
        so this finds those queued before the pair was declared)."""
        relation = proposal.relation
        if relation is None or not relation.inverse_id:
            return None
        return (
            Proposal.objects.filter(
                kind=self.key,
                status__in=OPEN_STATUSES,
                relation_id=relation.inverse_id,
                source_key=proposal.target_key,
                target_key=proposal.source_key,
            )
            .exclude(pk=proposal.pk)
            .select_related("relation")
            .order_by("pk")
            .first()
        )

    def dedup_key(self, payload: dict, *, symmetric: bool | None = None) -> str:
        """Ends by concept when resolved and by name key when new; a symmetric relation's
        ends are ordered."""
        if symmetric is None:
            symmetric = RelationType.objects.filter(
                key=payload["relation"], symmetric=True
            ).exists()
        return keys.edge_dedup_key(
            endpoint_key(payload["source"]),
            payload["relation"],
            endpoint_key(payload["target"]),
            symmetric=symmetric,
        )

    def lock_rows(self, proposal: Proposal) -> LockRows:
        """The concepts its ends stand for now (a known concept, or the concept that
        answers to the name of a pending end, which accepting it reuses) and its
        relation; edges of the proposals it contradicts are the caller's."""
        payload = proposal.payload
        ids = {payload[r]["concept_id"] for r in ROLES if payload[r].get("concept_id")}
        pending = [payload[r] for r in ROLES if not payload[r].get("concept_id")]
        needed = [end["proposal_id"] for end in pending if end.get("proposal_id")]
        if needed:
            ids |= set(
                Proposal.objects.filter(pk__in=needed, concept__isnull=False).values_list(
                    "concept_id", flat=True
                )
            )
        if pending:
            owners = graph_selectors.concepts_for_names(end["name"] for end in pending)
            ids |= {c.pk for c in owners.values()}
        relation = {proposal.relation_id} if proposal.relation_id else set()
        return LockRows(concept_ids=ids, relation_ids=relation)

    def pattern_to_widen(self, proposal: Proposal) -> dict:
        """The (relation, source's type, target's type) pattern the edge needs, with its
        quote as the pattern's example. Refused in words when an end has no type yet (a
        pattern joins types), is a bare name, or the edge fits its relation already."""
        payload = proposal.payload
        relation = proposal.relation or RelationType.objects.filter(key=payload["relation"]).first()
        if relation is None:
            raise rules.no_relation(payload["relation"])
        needed_ids = [payload[r]["proposal_id"] for r in ROLES if payload[r].get("proposal_id")]
        needed = Proposal.objects.in_bulk(needed_ids) if needed_ids else {}
        ends = {
            r: payload[r].get("concept_id")
            or getattr(needed.get(payload[r].get("proposal_id")), "concept_id", None)
            for r in ROLES
        }
        concepts = Concept.objects.in_bulk([c for c in ends.values() if c])
        book = pattern_book.load([relation.pk])
        typed = typed_ends(payload, ends, concepts, needed, book)
        if typed is None:
            raise ValidationFailed(
                "Accept the edge's new concepts first: a pattern joins the types of concepts "
                "the graph knows."
            )
        if book.refusal(relation, typed[0][0], typed[0][1], typed[1][0], typed[1][1]) is None:
            raise ValidationFailed(
                f'The edge fits the patterns of "{relation.key}" already; accept it as it is.'
            )
        keys = []
        for name, type_id in typed:
            found = book.type_of(type_id)
            if found is None:
                raise ValidationFailed(
                    f'"{name}" has no type: a pattern joins two types, so give it one first.'
                )
            keys.append(found.key)
        example: dict[str, object] = {"source_name": typed[0][0], "target_name": typed[1][0]}
        revision = proposal.evidence_revision
        if revision is not None and proposal.evidence_quote:
            example.update(
                quote=proposal.evidence_quote[:2000],
                source_slug=revision.source.slug,
                revision_id=revision.pk,
                start=proposal.evidence_start,
                end=proposal.evidence_end,
            )
        return {
            "relation_key": relation.key,
            "domain_key": keys[0],
            "range_key": keys[1],
            "examples": [example] if "quote" in example else [],
        }

    def apply(self, step: Step) -> None:
        proposal, out = step.proposal, step.out
        payload = proposal.payload
        if not all(payload[r].get("concept_id") for r in ROLES):
            # An end to resolve first (a pending concept accepted with the edge, a name):
            # lock every concept the ends stand for before any of them changes, in id
            # order, as the edge itself will (the lock order; see ``decisions``).
            graph.lock_concepts(*self.lock_rows(proposal).concept_ids)
        source_id = _concept_of(payload["source"], step)
        target_id = _concept_of(payload["target"], step)
        relation_id = proposal.relation_id
        if relation_id is None:
            relation_id = (
                RelationType.objects.filter(key=payload["relation"])
                .values_list("pk", flat=True)
                .first()
            )
        if relation_id is None:
            raise ProposalStale(str(rules.no_relation(payload["relation"])))
        if source_id == target_id:
            raise ProposalStale(str(rules.ends_meet()))
        edge = graph.edge_add(
            source_id=source_id,
            target_id=target_id,
            relation_id=relation_id,
            confidence=proposal.confidence,
            reason=proposal.reason or "Accepted by a reviewer.",
            evidence=graph.Evidence.of(proposal),
            weight=payload.get("weight", 1.0),
            acting_user=step.acting_user,
            decision=step.audit_row,
            grounds=grounds_of(proposal, [source_id, target_id]),
        )
        provenance.edge_made(edge, decision=step.audit_row, proposal=proposal)
        out.edges.append(edge)
        out.changes.edge_accepted(edge, proposal)

    def undo(self, step: UndoStep) -> None:
        """Invalidate the edge it made; restore the edges it retired as contradictions."""
        for edge in Edge.objects.filter(provenance__decision=step.decision):
            if not edge.is_active:
                raise StateConflict(
                    f"Edge #{edge.pk} made by this decision was {edge.status} since; "
                    "it can no longer be undone from here."
                )
            graph.edge_invalidate(
                edge=edge, reason=step.why, acting_user=step.acting_user, decision=step.audit_row
            )
            provenance.edge_retired(edge, step.audit_row)
            step.changes.edges_gone.add(edge.pk)
        for edge_id in step.after.get("invalidated_edges", []):
            old = Edge.objects.get(pk=edge_id)
            back = graph.edge_restore(
                edge=old, why=step.why, acting_user=step.acting_user, decision=step.audit_row
            )
            provenance.edge_made(back, decision=step.audit_row, like=old)
            step.changes.edges_added.add(back.pk)

    def edits(self, data: dict) -> EdgeEdits:
        return EdgeEdits(
            relation=data["relation"] or None,
            swap_direction=data["swap"],
            source=data["source"],
            target=data["target"],
            confidence=data["confidence"],
            weight=data["weight"],
        )

    def edited(self, proposal: Proposal, edits) -> dict:
        """The payload with the reviewer's relation, direction, ends and weight."""
        if not isinstance(edits, EdgeEdits):
            raise ValidationFailed(NOT_EDITABLE)
        payload = dict(proposal.payload)
        source = _chosen(edits.source, payload["source"], "source")
        target = _chosen(edits.target, payload["target"], "target")
        if edits.swap_direction:
            source, target = target, source
        if same_end(source, target):
            raise rules.self_loop_named(source["name"])
        payload["source"], payload["target"] = source, target
        if edits.relation:
            if not RelationType.objects.filter(key=edits.relation, active=True).exists():
                raise ValidationFailed(
                    f'"{edits.relation}" is not an active relation.', field="relation"
                )
            payload["relation"] = edits.relation
        if edits.weight is not None:
            payload["weight"] = edits.weight
        return self.validate(payload)

    def refused_field(self, exc: DomainError) -> str:
        """An end the refusal names (``_chosen`` says which), else the relation when the
        edge does not fit it (its patterns, retired), the target when the ends meet."""
        named = super().refused_field(exc)
        if named:
            return named
        if isinstance(exc, (PatternViolation, InactiveRelation)):
            return "relation"
        if isinstance(exc, SelfLoop):
            return "target"
        return ""

    def blocker_reads(self, payload: dict, reads: BlockerReads) -> None:
        for role in ROLES:
            if payload[role].get("concept_id"):
                reads.concept_ids.add(payload[role]["concept_id"])
            elif payload[role].get("proposal_id"):
                reads.needed_ids.add(payload[role]["proposal_id"])
        reads.relation_keys.add(payload["relation"])
        reads.pattern_keys.add(payload["relation"])

    def blockers(self, proposal, reads: BlockerReads) -> list[str]:
        payload = proposal.payload
        words = []
        ends = {}
        for role in ROLES:
            end = payload[role]
            blocker = _end_blocker(role, end, reads.concepts, reads.needed)
            if blocker:
                words.append(blocker)
            cid = end.get("concept_id")
            if not cid and end.get("proposal_id") in reads.needed:
                cid = reads.needed[end["proposal_id"]].concept_id
            ends[role] = cid
        relation = reads.relations.get(payload["relation"])
        refusal: DomainError | None = None
        if relation is None:
            refusal = rules.no_relation(payload["relation"])
        else:
            refusal = rules.relation_refusal(relation)
        if refusal is not None:
            words.append(str(refusal))
        if relation is not None and ends["source"] and ends["target"]:
            if ends["source"] == ends["target"]:
                words.append(str(rules.ends_meet()))
            else:
                held = reads.edge_holding(ends["source"], relation, ends["target"])
                if held is not None:
                    source, target = (
                        getattr(reads.concepts.get(ends[r]), "name", payload[r]["name"])
                        for r in ROLES
                    )
                    refusal = rules.duplicate_refusal(
                        relation, source, target, held, held_relation_id=reads.holders.get(held)
                    )
                    words.append(str(refusal))
        if relation is not None and reads.patterns.of(relation.pk):
            refusal = _pattern_blocker(payload, relation, ends, reads)
            if refusal is not None:
                words.append(str(refusal))
                reads.pattern_refused.add(proposal.pk)
        return words

    def claim(self, proposal, relations=None) -> str:
        payload = proposal.payload
        relation = (relations or {}).get(payload["relation"]) or proposal.relation
        verb = relation.verb if relation is not None else payload["relation"].replace("_", " ")
        return f"{payload['source']['name']} {verb} {payload['target']['name']}"

    def view(self, proposal) -> dict:
        payload = proposal.payload
        return {
            "source_name": payload["source"]["name"],
            "target_name": payload["target"]["name"],
            "relation_key": payload["relation"],
            "relation_words": payload["relation"].replace("_", " "),
        }

    def named_ends(self, proposal, edges, names):
        payload = proposal.payload
        return payload["source"]["name"], payload["target"]["name"], payload["relation"]

    def support(self, payload: dict) -> list[dict] | None:
        return list(payload.get("support") or ())

    def card(self, card) -> None:
        """Both ends as resolved (a merged end naming its survivor), their recent edges,
        and the other places in the revision that state the same edge."""
        proposal = card.proposal
        payload = proposal.payload
        view = self.view(proposal)
        view.update(
            relation=proposal.relation,
            weight=payload.get("weight", 1),
            source=payload["source"],
            target=payload["target"],
        )
        if card.revision is not None:
            revision = card.revision
            card.support = [
                context
                for item in payload.get("support") or ()
                if (context := evidence_context(revision, item["start"], item["end"], limit=200))
            ]
        concepts: dict[int, Concept] = {}
        for concept in (proposal.source_concept, proposal.target_concept):
            if concept is not None:
                concepts[concept.pk] = concept
        proposal_ids = {payload[r]["proposal_id"] for r in ROLES if payload[r].get("proposal_id")}
        needed = Proposal.objects.in_bulk(proposal_ids) if proposal_ids else {}
        endpoints, ends = [], {}
        for role in ROLES:
            end = payload[role]
            concept = concepts.get(end.get("concept_id"))
            endpoints.append((role, end, concept, needed.get(end.get("proposal_id"))))
            if concept is not None:
                ends[role] = concept
        view["endpoints"] = endpoints
        fact = None
        if proposal.relation is not None and len(ends) == 2:
            fact = (ends["source"].pk, proposal.relation, ends["target"].pk)
        found, held = neighbours_and_fact(ends, fact=fact)
        if fact is not None:
            # What the blockers ask (is it already in the graph?), answered by that query.
            card.facts[(fact[0], fact[1].pk, fact[2])] = held.pk if held is not None else None
            card.holders.update({held.pk: held.relation_id} if held is not None else {})
        # The edge, or the open proposal, stating the same fact (an inverse twin).
        twin = None
        if held is None and proposal.is_open:
            # The card's query says whether there is one (``with_card``): read only then.
            twin_id = getattr(proposal, "open_twin_id", -1)
            if twin_id == -1:
                twin = self.open_twin(proposal)
            elif twin_id is not None:
                twin = Proposal.objects.select_related("relation").filter(pk=twin_id).first()
        view["same_edge"] = held
        view["same_proposal"] = twin
        view["same_proposal_claim"] = self.claim(twin) if twin is not None else ""
        card.neighbours = [(payload[role]["name"], rows) for role, rows in found.items()]
        # A merged end names the concept its names live on now (queries only when there
        # is one).
        graph_selectors.with_survivors(concepts.values())
        card.view = view


def _chosen(choice, current: dict, role: str) -> dict:
    """``resolve_choice`` for one end; its refusal says which end (``field``), so the
    card puts the reviewer back in that end's concept picker."""
    try:
        return resolve_choice(choice, current)
    except DomainError as exc:
        exc.details.setdefault("field", role)
        raise
